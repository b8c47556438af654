// Package redistest gives tests a private Redis: one the test spawns
// (never the shared one on port 6379), closed when the test ends, and a
// skip, not a failure, on a machine without redis-server. It holds no
// mock: every server it returns is a real redis-server.
package redistest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// startWithin bounds a start: a cluster of several nodes on a loaded
// machine takes seconds, and a hung start must fail the test, not hang it.
const startWithin = 60 * time.Second

// Start starts o (ModeSpawn when o.Mode is empty) for t. It skips t when
// this machine has no redis-server (redisserver.ErrNoRedis), fails it on
// any other error or on a server at port 6379, and closes the server in
// t's cleanup.
func Start(t testing.TB, o redisserver.Options) *redisserver.Redis {
	t.Helper()
	if o.Mode == "" {
		o.Mode = redisserver.ModeSpawn
	}
	ctx, cancel := context.WithTimeout(context.Background(), startWithin)
	defer cancel()
	r, err := redisserver.Start(ctx, o)
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no redis-server to start (%s): %v", o.Mode, err)
	}
	if err != nil {
		t.Fatalf("start %s redis: %v", o.Mode, err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close %s redis: %v", o.Mode, err)
		}
	})
	for _, a := range r.Addrs {
		if strings.HasSuffix(a, ":6379") {
			t.Fatalf("a %s redis on the shared port 6379: %v", o.Mode, r.Addrs)
		}
	}
	return r
}

// Client spawns a private redis-server for t (as Start) and returns a
// go-redis client on it, closed when t ends.
func Client(t testing.TB) (rclient.Client, *redisserver.Redis) {
	t.Helper()
	r := Start(t, redisserver.Options{})
	c, err := rclient.New(rclient.GoRedis, r.ClientOptions())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, r
}
