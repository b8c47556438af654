//go:build unix

package redisserver_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/redisserver"
)

// TestContainer runs container mode for real when that needs no pull: a
// Docker daemon answers and the image ($AEBENCH_REDIS_IMAGE, else
// redisserver.DefaultImage) is present locally. Without a daemon it checks
// that container mode fails at once naming Docker, then skips; without the
// image it skips. Either skip names the reason.
func TestContainer(t *testing.T) {
	// The test terminates its containers itself. Ryuk, testcontainers' reaper
	// for crashed test processes, is an image of its own that may not be
	// present and cannot be pulled offline. (Set before the first
	// testcontainers call: it reads its configuration once per process.)
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	base := redisserver.Options{Mode: redisserver.ModeContainer, StartTimeout: 60 * time.Second}
	image, err := redisserver.ContainerReady(timeout(t, 10*time.Second), base)
	switch {
	case errors.Is(err, redisserver.ErrDockerDown):
		began := time.Now()
		r, serr := redisserver.Start(timeout(t, 10*time.Second), base)
		if serr == nil {
			_ = r.Close()
			t.Fatalf("Start in container mode succeeded although the Docker probe failed: %v", err)
		}
		if !errors.Is(serr, redisserver.ErrNoRedis) || !strings.Contains(serr.Error(), "Docker") {
			t.Errorf("Start in container mode without Docker: %v; want ErrNoRedis naming Docker", serr)
		}
		t.Logf("container mode without Docker failed in %v", time.Since(began))
		t.Skipf("container mode not run: %v", err)
	case errors.Is(err, redisserver.ErrImageMissing):
		t.Skipf("container mode not run: %v; set %s to a Redis image present locally (this test never pulls)", err, redisserver.ImageEnv)
	case err != nil:
		t.Fatalf("ContainerReady: %v", err)
	}
	t.Logf("running image %s", image)

	tests := []struct {
		name     string
		o        redisserver.Options
		password string
		config   map[string]string // CONFIG GET name -> want
	}{
		{name: "defaults", o: base, config: map[string]string{"save": "", "appendonly": "no"}},
		{name: "AOF and password", password: "s3cret",
			o: func() redisserver.Options {
				o := base
				o.AppendOnly, o.AppendFsync = true, "always"
				o.ExtraArgs = []string{"--requirepass", "s3cret"}
				return o
			}(),
			config: map[string]string{"appendonly": "yes", "appendfsync": "always"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := start(t, tt.o)
			if r.Mode != redisserver.ModeContainer || r.Cluster || len(r.Addrs) != 1 || len(r.Nodes) != 0 || r.Password != tt.password {
				t.Fatalf("got Mode=%q Cluster=%v Addrs=%v Nodes=%d Password set=%v", r.Mode, r.Cluster, r.Addrs, len(r.Nodes), r.Password != "")
			}
			ctx := timeout(t, 10*time.Second)
			c := client(t, r)
			if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatalf("SET: %v", err)
			}
			if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
				t.Fatalf("GET = %q, %v", got, err)
			}
			for k, want := range tt.config {
				got, err := c.ConfigGet(ctx, k).Result()
				if err != nil || got[k] != want {
					t.Errorf("CONFIG GET %s = %v, %v; want %q", k, got, err, want)
				}
			}
			if v, err := r.Version(ctx); err != nil || !strings.Contains(v, ".") {
				t.Errorf("Version = %q, %v", v, err)
			}
			if err := r.Pause(); !errors.Is(err, redisserver.ErrNotOwned) {
				t.Errorf("Pause of a container: %v; want ErrNotOwned", err)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := c.Ping(timeout(t, 2*time.Second)).Err(); err == nil {
				t.Errorf("PING answered after Close terminated the container")
			}
		})
	}
}
