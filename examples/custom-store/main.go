// Command customstore is the aebench command with one more backend, the
// list store of package liststore: every scenario, fault, ledger check and
// table of aebench, run on a store kept outside the aebench module.
//
//	go run . list
//	go run . run scenario.yaml
package main

import (
	"context"
	"fmt"
	"os"

	"example.com/customstore/liststore"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/cli"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

func main() {
	reg := registry.Builtin()
	err := reg.Add(registry.Backend{
		Name:   "liststore",
		Kind:   registry.KindJobStore,
		Doc:    "a user's own store: two lists and a hash per job; blocking claim (BLMOVE)",
		Limits: liststore.Limits,
		Caps:   liststore.Caps(),
		New: func(ctx context.Context, c rclient.Client, o jobstore.Options, _ map[string]string) (jobstore.Store, error) {
			return liststore.New(ctx, c, o)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(cli.Main(os.Args[1:], cli.Options{Registry: reg}))
}
