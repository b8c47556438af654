// Package basetest holds what the backends' own tests share: a private
// redis-server per test and a client on it, and the two topologies the
// conformance suite runs on.
package basetest

import (
	"context"
	"testing"

	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// Client spawns a private redis-server for t and returns a go-redis client
// on it; both are closed when t ends.
func Client(t testing.TB) rclient.Client {
	t.Helper()
	r, err := redisserver.Start(context.Background(), redisserver.Options{Mode: redisserver.ModeSpawn})
	if err != nil {
		t.Fatalf("start Redis: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	c, err := rclient.New(rclient.GoRedis, r.ClientOptions())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Targets starts a private standalone Redis and a private 3-master cluster
// for t, for a backend's own run of the conformance suite (a variant of its
// settings); both are closed when t ends.
func Targets(t testing.TB) []conformance.Target {
	t.Helper()
	var out []conformance.Target
	for _, tg := range []struct {
		name string
		mode redisserver.Mode
	}{{"single", redisserver.ModeSpawn}, {"cluster", redisserver.ModeCluster}} {
		r, err := redisserver.Start(context.Background(), redisserver.Options{Mode: tg.mode})
		if err != nil {
			t.Fatalf("start Redis (%s): %v", tg.name, err)
		}
		t.Cleanup(func() { _ = r.Close() })
		out = append(out, conformance.Target{Name: tg.name, Redis: r})
	}
	return out
}
