package conformance_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// backends are every backend in the registry (the one list the CLI, the
// harness and this suite read), each with its default settings.
func backends() []conformance.Backend {
	var out []conformance.Backend
	for _, b := range registry.All() {
		out = append(out, conformance.Backend{Name: b.Name,
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
				return b.Build(ctx, c, o, nil)
			}})
	}
	return out
}

var clients = []string{"go-redis", "rueidis"}

// One standalone server and one 3-master cluster serve the whole test binary.
var (
	srvOnce         sync.Once
	single, cluster *redisserver.Redis
	srvErr          error
)

func targets(t *testing.T) []conformance.Target {
	t.Helper()
	srvOnce.Do(func() {
		// Background: the servers must outlive this call.
		ctx := context.Background()
		if single, srvErr = redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn}); srvErr != nil {
			srvErr = fmt.Errorf("standalone: %w", srvErr)
			return
		}
		if cluster, srvErr = redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeCluster}); srvErr != nil {
			srvErr = fmt.Errorf("cluster: %w", srvErr)
		}
	})
	if srvErr != nil {
		t.Fatalf("starting Redis: %v", srvErr)
	}
	return []conformance.Target{{Name: "single", Redis: single}, {Name: "cluster", Redis: cluster}}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, r := range []*redisserver.Redis{single, cluster} {
		if r != nil {
			r.Close()
		}
	}
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	conformance.Run(t, backends(), targets(t), clients)
}

// TestRunStore runs the suite the way a user with a store of their own does:
// one call with the zero Config, which spawns a private redis-server. The
// store keeps almost none of the contract (see listStore), so this also
// checks that every case it cannot pass is gated by a capability.
func TestRunStore(t *testing.T) {
	conformance.RunStore(t, "liststore", conformance.Adapt(newListStore), conformance.Config{})
}
