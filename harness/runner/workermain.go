package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/workerproc"
	"github.com/aebench/aebench/rclient"
)

// IsWorkerProcess reports whether this process was started as a worker
// process (workerproc.WorkerEnv=1).
func IsWorkerProcess() bool { return os.Getenv(workerproc.WorkerEnv) == "1" }

// exitCodeUsage is a worker started without a readable configuration.
const exitCodeUsage = 2

// WorkerMain is `aebench worker` started by a run: a remote worker when
// $AEBENCH_WORKER_COORDINATOR is set (RemoteWorker), else it builds the
// store the coordinator describes in $AEBENCH_WORKER_CONFIG from reg (nil: the built-in
// backends) and serves one worker (engine.ServeWorker) until stdin closes.
// It returns the exit code.
func WorkerMain(reg *registry.Registry, stdin io.Reader, stdout, stderr io.Writer) int {
	if coord := os.Getenv(workerproc.WorkerCoordinatorEnv); coord != "" {
		return RemoteWorker(context.Background(), reg, coord, os.Getenv(workerproc.WorkerBindEnv), stderr)
	}
	pc, err := workerproc.ConfigFromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "aebench worker: %v\n", err)
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

// RemoteWorker is `aebench worker --coordinator HOST:PORT [--bind IP]`: it
// connects to a run waiting for remote workers (workers.remote), from the
// local address bind when given, reads its configuration (the first
// line), builds the store from reg (nil: the built-in backends) and serves
// one worker over the connection until the coordinator hangs up. It
// returns the exit code.
func RemoteWorker(ctx context.Context, reg *registry.Registry, coordinator, bind string, stderr io.Writer) int {
	if reg == nil {
		reg = registry.Builtin()
	}
	var ip net.IP
	if bind != "" {
		if ip = net.ParseIP(bind); ip == nil {
			fmt.Fprintf(stderr, "aebench worker: --bind %q: not an IP address\n", bind)
			return exitCodeUsage
		}
	}
	conn, br, pc, err := workerproc.Dial(ctx, coordinator, ip)
	if err != nil {
		fmt.Fprintf(stderr, "aebench worker: %v\n", err)
		return 1
	}
	defer conn.Close()
	if err := serveWorker(reg, pc, br, conn); err != nil {
		fmt.Fprintf(stderr, "aebench worker: %v\n", err)
		return 1
	}
	return 0
}

func serveWorker(reg *registry.Registry, pc workerproc.ProcessConfig, stdin io.Reader, stdout io.Writer) error {
	cfg := pc.Config
	be, err := reg.Lookup(cfg.Backend.Name)
	if err != nil {
		return err
	}
	opts := rclient.Options{Addrs: []string{pc.Addr}, Username: pc.Username, Password: pc.Password, Cluster: pc.Cluster}
	if pc.TLS != nil {
		host, _, _ := net.SplitHostPort(pc.Addr)
		if opts.TLS, err = pc.TLS.Config(host); err != nil {
			return fmt.Errorf("worker TLS: %w", err)
		}
		opts.TLSFiles = *pc.TLS
	}
	client, err := rclient.New(cfg.Client, opts)
	if err != nil {
		return err
	}
	defer client.Close()
	store, err := newStore(context.Background(), be, client, cfg, runStoreOptions(cfg, pc.Queue))
	if err != nil {
		return fmt.Errorf("build store: %w", err)
	}
	defer store.Close()
	return engine.ServeWorker(pc, store, stdin, stdout)
}
