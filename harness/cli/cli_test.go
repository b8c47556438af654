package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a strings.Builder safe to read while the CLI writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = runCtx(context.Background(), args, Options{Stdout: &out, Stderr: &errb}.withDefaults(), false)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "backends: [zset]\nproducers:\n  rate: -3\n")
	unknown := writeFile(t, "unknown.yaml", "backends: [zset]\nworkers:\n  cuncurrency: 3\n")
	nobackend := writeFile(t, "nob.yaml", "backends: [zset, kafka]\n")
	good := writeFile(t, "null.yaml", "duration: 500ms\nwarmup: 100ms\ncalibration: off\nbackends: [null]\nproducers: {rate: 100}\n")
	badopt := writeFile(t, "badopt.yaml", "calibration: off\nbackends:\n  - name: dual\n    options: {mover: sideways}\n")
	zset := writeFile(t, "zset.yaml", "duration: 500ms\nwarmup: 0s\ncalibration: off\nbackends: [zset]\n")
	out := t.TempDir()
	cases := []struct {
		name       string
		args       []string
		code       int
		wantStderr []string
		wantStdout []string
	}{
		{"no arguments", nil, exitUsage, []string{"Usage:"}, nil},
		{"unknown command", []string{"bench"}, exitUsage, []string{`unknown command "bench"`}, nil},
		{"help", []string{"help"}, exitOK, nil, []string{"aebench run", "Exit codes"}},
		{"help run", []string{"help", "run"}, exitOK, nil, []string{"--set path=value", "--redis-url"}},
		{"run -h", []string{"run", "-h"}, exitOK, nil, []string{"Usage: aebench run"}},
		{"--version", []string{"--version"}, exitOK, nil, []string{"aebench ", "go1."}},
		{"version", []string{"version"}, exitOK, nil, []string{"aebench ", "go1."}},
		{"help list", []string{"list", "--help"}, exitOK, nil, []string{"Usage: aebench list"}},
		{"run without scenario", []string{"run"}, exitUsage, []string{"want exactly one SCENARIO"}, nil},
		{"run unknown flag", []string{"run", "--speed", "9", good}, exitUsage, []string{"flag provided but not defined: -speed"}, nil},
		{"missing file", []string{"run", "/nonexistent/x.yaml"}, exitUsage, []string{"cannot read scenario"}, nil},
		{"negative rate", []string{"run", bad}, exitUsage, []string{"bad.yaml:3:9: producers.rate: -3 must be > 0"}, nil},
		{"unknown field", []string{"run", unknown}, exitUsage, []string{"unknown.yaml:3:3", `unknown field "cuncurrency"`, "allowed: count, concurrency"}, nil},
		{"unknown backend", []string{"run", nobackend}, exitUsage, []string{"nob.yaml:1:18", `unknown backend "kafka"`}, nil},
		{"bad --set", []string{"run", good, "--set", "workers.count=zero"}, exitUsage, []string{"--set workers.count=zero", "not an integer"}, nil},
		{"bad --duration", []string{"run", "--duration", "forever", good}, exitUsage, []string{"--set duration=forever"}, nil},
		{"bad --backends", []string{"run", good, "--backends", "kafka"}, exitUsage, []string{"--backends", `unknown backend "kafka"`}, nil},
		{"bad backend option value", []string{"run", badopt, "--out", filepath.Join(out, "badopt")}, exitUsage,
			[]string{"badopt.yaml:4:14", `option mover "sideways"`, "allowed are"}, nil},
		{"list", []string{"list", "--dir", "../../scenarios"}, exitOK, nil, []string{"zset", "null", "calibration, not a job store", "quick.yaml", "kind: reference", "kind: peer", "capabilities: blocking-claim, strict-fifo"}},
		{"list fields", []string{"list", "--fields"}, exitOK, nil, []string{"producers.rate", "workers.claim_wait"}},
		{"list stray argument", []string{"list", "x"}, exitUsage, []string{"unexpected argument"}, nil},
		{"run null ok", []string{"run", good, "--out", filepath.Join(out, "ok"), "--no-plots"}, exitOK, nil,
			[]string{"=> null: OK", "results: " + filepath.Join(out, "ok") + "\n"}},
		{"--out not empty", []string{"run", good, "--out", filepath.Join(out, "badopt"), "--no-plots"}, exitUsage,
			[]string{"results directory is not empty"}, nil},
		{"no Redis at URL", []string{"run", zset, "--redis-url", "redis://127.0.0.1:1", "--out", filepath.Join(out, "noredis"), "--no-plots"}, exitInfra,
			[]string{"127.0.0.1:1"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
	// The successful run wrote its results into --out exactly, the complete
	// flag last; the failed ones have no flag.
	for dir, complete := range map[string]bool{"ok": true, "badopt": false, "noredis": false} {
		if _, err := os.Stat(filepath.Join(out, dir, "complete")); (err == nil) != complete {
			t.Errorf("%s: complete flag present %v, want %v", dir, err == nil, complete)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "ok", "summary.json")); err != nil {
		t.Errorf("the successful run: %v", err)
	}
}

func TestInterruptExitCode(t *testing.T) {
	good := writeFile(t, "long.yaml", "duration: 1m\nwarmup: 0s\ncalibration: off\nbackends: [null]\nproducers: {rate: 100}\n")
	ctx, cancel := context.WithCancel(context.Background())
	dir := filepath.Join(t.TempDir(), "interrupted")
	var out, errb syncBuffer
	done := make(chan int)
	go func() {
		done <- runCtx(ctx, []string{"run", good, "--out", dir, "--no-plots"}, Options{Stdout: &out, Stderr: &errb}.withDefaults(), false)
	}()
	for !strings.Contains(out.String(), "run 1/1") {
		select {
		case code := <-done:
			t.Fatalf("exited %d early: %s %s", code, out.String(), errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInterrupted, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("stderr: %s", errb.String())
	}
	// What was measured is written, but the set is not complete.
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		t.Error("an interrupted run wrote the complete flag")
	}
	if !strings.HasSuffix(out.String(), "results: "+dir+"\n") {
		t.Errorf("stdout does not end with the results line:\n%s", out.String())
	}
}
