package driver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// TestDriversCheck runs `aebench drivers check`'s conformance on the BullMQ
// driver and on the minimal Python driver of docs/drivers.md, which must
// pass every rule (or have it declared), and on copies of the BullMQ
// driver broken one way each, which must fail the rule that stands for
// what was broken: a check that passed them would guard nothing.
func TestDriversCheck(t *testing.T) {
	bullmq := driver.BullMQ
	if why, err := driver.Missing(context.Background(), bullmq); err != nil {
		t.Fatal(err)
	} else if why != "" {
		t.Skip(why)
	}
	dir, err := bullmq.Dir()
	if err != nil {
		t.Fatal(err)
	}
	minimal, _ := filepath.Abs("../../docs/minimal-driver")
	for _, tc := range []struct {
		name     string
		spec     driver.Spec
		old, new string // the break made in a copy of driver.js
		fails    string // the rule that must fail ("": none may)
	}{
		{name: "bullmq", spec: bullmq},
		{name: "minimal", spec: driver.Spec{Name: "minimal", Command: []string{pythonFor(t), "driver.py"}, Path: minimal}},
		{name: "wrong-seq", spec: bullmq, old: "return { e: 'ack', seq };", new: "return { e: 'ack', seq: seq + 1 };", fails: "enqueue-ack"},
		{name: "no-started", spec: bullmq, old: "event(`{\"e\":\"started\"", new: "void(`{\"e\":\"started\"", fails: "worker-events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec
			if tc.old != "" {
				spec.Path = brokenCopy(t, dir, tc.old, tc.new)
			}
			r := redistest.Start(t, redisserver.Options{})
			host, port, _ := strings.Cut(r.Addrs[0], ":")
			p, _ := strconv.Atoi(port)
			res := driver.Check(context.Background(), spec, driver.RedisAddr{Host: host, Port: p, Password: r.Password})
			failed := map[string]string{}
			for _, c := range res {
				if c.Status == driver.CheckFail {
					failed[c.Rule] = c.Detail
				}
			}
			if tc.fails == "" && len(failed) > 0 {
				t.Errorf("rules failed: %v", failed)
			}
			if tc.fails != "" && failed[tc.fails] == "" {
				t.Errorf("%s passed a driver broken for it (%s -> %s); results %+v", tc.fails, tc.old, tc.new, res)
			}
		})
	}
}

// brokenCopy copies the driver's folder (its packages linked, not
// copied) with old replaced by new in driver.js.
func brokenCopy(t *testing.T, dir, old, new string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, "driver.js"))
	if err != nil || !strings.Contains(string(src), old) {
		t.Fatalf("driver.js: %v, or it no longer holds %q", err, old)
	}
	tmp := t.TempDir()
	for _, f := range []string{"package.json", "node_modules"} {
		if err := os.Symlink(filepath.Join(dir, f), filepath.Join(tmp, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "driver.js"), []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp
}

// pythonFor is a Python 3 for the minimal driver, which needs only the
// standard library.
func pythonFor(t *testing.T) string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("no python3")
	return ""
}
