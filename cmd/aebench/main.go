// Command aebench runs benchmark scenarios against the Redis job-store
// backends and writes honest, reproducible results. It is the stock build
// of package harness/cli, with the built-in backends; see `aebench help`.
package main

import (
	"os"

	"github.com/aebench/aebench/harness/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Options{}))
}
