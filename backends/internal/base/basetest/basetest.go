// Package basetest holds what the backends' own tests share: a private
// redis-server per test and a client on it.
package basetest

import (
	"context"
	"testing"

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
