package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/rclient"
)

// IsWorkerProcess reports whether this process was started as a worker
// process (engine.WorkerEnv=1).
func IsWorkerProcess() bool { return os.Getenv(engine.WorkerEnv) == "1" }

// exitCodeUsage is a worker started without a readable configuration.
const exitCodeUsage = 2

// WorkerMain is `aebench worker`: it builds the store the coordinator
// describes in $AEBENCH_WORKER_CONFIG from reg (nil: the built-in
// backends) and serves one worker (engine.ServeWorker) until stdin closes.
// It returns the exit code.
func WorkerMain(reg *registry.Registry, stdin io.Reader, stdout, stderr io.Writer) int {
	var pc engine.ProcessConfig
	if err := json.Unmarshal([]byte(os.Getenv(engine.WorkerConfigEnv)), &pc); err != nil {
		fmt.Fprintf(stderr, "aebench worker: $%s: %v\n", engine.WorkerConfigEnv, err)
		return exitCodeUsage
	}
	if reg == nil {
		reg = registry.Builtin()
	}
	if err := serveWorker(reg, pc, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "aebench worker: %v\n", err)
		return 1
	}
	return 0
}

func serveWorker(reg *registry.Registry, pc engine.ProcessConfig, stdin io.Reader, stdout io.Writer) error {
	cfg := pc.Config
	be, err := reg.Lookup(cfg.Backend.Name)
	if err != nil {
		return err
	}
	client, err := rclient.New(cfg.Client, rclient.Options{Addrs: []string{pc.Addr}, Password: pc.Password})
	if err != nil {
		return err
	}
	defer client.Close()
	store, err := be.BuildShards(context.Background(), client, cfg.StoreOptions(pc.Queue), cfg.Backend.Options, cfg.Store.Shards)
	if err != nil {
		return fmt.Errorf("build store: %w", err)
	}
	defer store.Close()
	return engine.ServeWorker(pc, store, stdin, stdout)
}
