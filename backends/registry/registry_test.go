package registry_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Bad settings are refused before any Redis is touched, with a message that
// names the key and what is allowed.
func TestBuildRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		backend string
		extra   map[string]string
		want    []string
	}{
		{"zset", map[string]string{"width": "1s"}, []string{"width", "allowed are wait"}},
		{"zset", map[string]string{"wait": "spin"}, []string{"wait", "spin", "block", "poll"}},
		{"bucket", map[string]string{"widht": "1s"}, []string{"widht", "allowed are width, mover, wait"}},
		{"bucket", map[string]string{"wait": "spin"}, []string{"wait", "spin", "block", "poll"}},
		{"bucket", map[string]string{"width": "soon"}, []string{"width", "soon"}},
		{"bucket", map[string]string{"mover": "sometimes"}, []string{"mover", "sometimes"}},
		{"dual", map[string]string{"batch": "0"}, []string{"batch"}},
		{"stream", map[string]string{"mover": "claim"}, []string{"mover", "allowed are variant"}},
		{"stream", map[string]string{"variant": "seed004"}, []string{"variant", "seed004", "seed003"}},
		{"zset", map[string]string{"variant": "seed999"}, []string{"variant", "seed999", "seed004"}},
		{"zset", map[string]string{"variant": "seed004", "wait": "block"}, []string{"wait", "polls"}},
		{"dual", map[string]string{"variant": "on"}, []string{"variant", "seed000"}},
		{"floor", map[string]string{"wait": "block"}, []string{"wait", "takes no options"}},
		{"asynq", map[string]string{"task_check": "1s"}, []string{"task_check", "allowed are task_check_interval"}},
		{"asynq", map[string]string{"task_check_interval": "0s"}, []string{"task_check_interval", "0s", "duration"}},
		{"asynq", map[string]string{"concurrency": "many"}, []string{"concurrency", "many"}},
	} {
		b, err := registry.Lookup(tc.backend)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Build(context.Background(), nil, jobstore.Options{}, tc.extra)
		if !errors.Is(err, jobstore.ErrInvalid) {
			t.Errorf("%s %v: got %v, want ErrInvalid", tc.backend, tc.extra, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: %q does not mention %q", tc.backend, tc.extra, err, w)
			}
		}
	}
	if _, err := registry.Lookup("redis-list"); err == nil || !strings.Contains(err.Error(), "zset") {
		t.Errorf("unknown backend: %v", err)
	}
}

// A registry refuses an empty or duplicate name; Builtin lists the eleven
// backends in order, the null store as the calibration.
func TestRegistry(t *testing.T) {
	if _, err := registry.New(registry.Builtin().All()...); err != nil {
		t.Fatalf("builtin table: %v", err)
	}
	if got := strings.Join(registry.Builtin().Names(), ","); got != "zset,bucket,stream,dual,floor,asynq,bullmq,sidekiq,rq,celery,null" {
		t.Errorf("names %s", got)
	}
	if b, err := registry.Builtin().Lookup("null"); err != nil || b.Kind != registry.KindCalibration {
		t.Errorf("null: %+v %v", b, err)
	}
	zset, _ := registry.Lookup("zset")
	for _, tc := range []struct {
		name string
		bs   []registry.Backend
	}{
		{"duplicate", []registry.Backend{zset, zset}},
		{"empty name", []registry.Backend{{New: zset.New}}},
		{"no New", []registry.Backend{{Name: "x"}}},
	} {
		if _, err := registry.New(tc.bs...); !errors.Is(err, jobstore.ErrInvalid) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// Each builtin's declared Caps are what its store, built with the default
// options, says: aebench list prints the one, runs go by the other.
func TestCapsMatchStores(t *testing.T) {
	c := basetest.Client(t)
	for _, b := range registry.Builtin().All() {
		var cl rclient.Client = c
		if b.Kind == registry.KindCalibration {
			cl = nil
		}
		s, err := b.Build(context.Background(), cl, jobstore.Options{Queue: "caps-" + b.Name}, nil)
		if errors.Is(err, driver.ErrNotInstalled) && os.Getenv("CI") == "" {
			t.Logf("%s: skipped: %v", b.Name, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		got, want := strings.Join(registry.CapList(s.Capabilities()), ","), strings.Join(registry.CapList(b.Caps), ",")
		_ = s.Close()
		if got != want {
			t.Errorf("%s: store declares %s, registry says %s", b.Name, got, want)
		}
	}
}

// TestBuildShardsRefusesPeers: a peer names its own keys and the
// calibration store has no Redis, so neither can be sharded.
func TestBuildShardsRefusesPeers(t *testing.T) {
	for _, name := range []string{"asynq", "null"} {
		b, err := registry.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.BuildShards(context.Background(), nil, jobstore.Options{Queue: "q"}, nil, 3)
		if !errors.Is(err, jobstore.ErrInvalid) || !strings.Contains(err.Error(), "store.shards 3") {
			t.Errorf("%s: BuildShards(3) = %v, want ErrInvalid naming store.shards", name, err)
		}
	}
}
