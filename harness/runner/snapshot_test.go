package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// The watch dates a background save's fork to within its poll, after the
// writes that triggered it, and keeps the window the kill saw.
func TestSnapshotWatchDatesFork(t *testing.T) {
	r, err := redisserver.Start(context.Background(), redisserver.Options{Mode: redisserver.ModeSpawn, ExtraArgs: []string{"--save", "1 10"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	start := time.Now()
	w, err := watchSnapshots(r.Nodes[0], r.ClientOptions(), start)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	c, err := rclient.New(rclient.GoRedis, r.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(2 * snapshotPoll) // the watch's first poll sets its baseline
	wrote := time.Now()
	for i := range 20 {
		if _, err := c.Do(context.Background(), rclient.Cmd("SET", fmt.Sprint("k", i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		w.mu.Lock()
		last := w.last
		w.mu.Unlock()
		if last.Hi.After(start) {
			if last.Hi.Before(wrote) || last.Hi.Sub(last.Lo) > 10*snapshotPoll {
				t.Errorf("fork window %v-%v, want after the writes at %v and about a poll wide", last.Lo, last.Hi, wrote)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot seen within 15s of 20 changes under save 1 10")
		}
		time.Sleep(snapshotPoll)
	}
	if err := w.Kill(); err != nil {
		t.Fatal(err)
	}
	fw, kill, ok := w.Snapshot()
	if !ok || kill.Before(fw.Hi) {
		t.Errorf("Snapshot() = %v, %v, %v; want the fork window before the kill", fw, kill, ok)
	}
}
