package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
)

// snapshotPoll is how often the watch reads INFO persistence: the fork of
// a snapshot is known to within it.
const snapshotPoll = 50 * time.Millisecond

// snapshotWatch follows a spawned server's RDB snapshots, so that a
// redis_restart's losses can be set beside the jobs acknowledged after
// the last snapshot: the snapshot holds the dataset as of its fork, and
// the fork fell between the poll that last saw no save running and the
// poll that saw one running (or already done: rdb_saves moved).
type snapshotWatch struct {
	faults.RedisNode
	c    rclient.Client
	stop chan struct{}
	done chan struct{}

	mu sync.Mutex
	// started: the fork window of the save under way.
	started *engine.ForkWindow
	// last: the fork window of the last save completed; before any, the
	// server's start.
	last    engine.ForkWindow
	saves   int64
	polled  bool
	prev    time.Time
	killAt  time.Time
	atKill  engine.ForkWindow
	stopped bool
}

// watchSnapshots starts the watch on node through client options o.
func watchSnapshots(node faults.RedisNode, o rclient.Options, started time.Time) (*snapshotWatch, error) {
	c, err := rclient.New(rclient.GoRedis, o)
	if err != nil {
		return nil, fmt.Errorf("snapshot watch: %w", err)
	}
	w := &snapshotWatch{RedisNode: node, c: c, stop: make(chan struct{}), done: make(chan struct{}),
		last: engine.ForkWindow{Lo: started, Hi: started}, prev: time.Now()}
	go w.loop()
	return w, nil
}

func (w *snapshotWatch) loop() {
	defer close(w.done)
	t := time.NewTicker(snapshotPoll)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.poll()
		}
	}
}

// poll reads INFO persistence once.
func (w *snapshotWatch) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), snapshotPoll)
	v, err := w.c.Do(ctx, rclient.Command{Head: []string{"INFO", "persistence"}})
	cancel()
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.prev = now }()
	if err != nil || !w.killAt.IsZero() {
		return // down (the restart), or past the kill: the window is fixed
	}
	info := fmt.Sprint(v)
	// rdb_saves counts forks (Redis counts a background save when it
	// forks), so a rise dates the fork to within the poll; the snapshot
	// counts once the save is over and went well.
	saves, inProgress := infoField(info, "rdb_saves"), infoField(info, "rdb_bgsave_in_progress") == 1
	switch {
	case !w.polled:
		w.polled = true // a save before the watch began dates nothing of the run
	case saves > w.saves:
		w.started = &engine.ForkWindow{Lo: w.prev, Hi: now}
	case saves < w.saves:
		w.started = nil // a new process (a restart)
	}
	w.saves = saves
	if w.started != nil && !inProgress {
		if strings.Contains(info, "rdb_last_bgsave_status:ok") {
			w.last = *w.started
		}
		w.started = nil
	}
}

// Kill fixes the last snapshot's fork window at the kill, then kills.
func (w *snapshotWatch) Kill() error {
	w.mu.Lock()
	if w.killAt.IsZero() {
		w.killAt, w.atKill = time.Now(), w.last
	}
	w.mu.Unlock()
	return w.RedisNode.Kill()
}

// Snapshot is the engine's hook: the last snapshot's fork window before
// the first kill, and the kill's time (false: no kill).
func (w *snapshotWatch) Snapshot() (engine.ForkWindow, time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.atKill, w.killAt, !w.killAt.IsZero()
}

// close stops the watch.
func (w *snapshotWatch) close() {
	w.mu.Lock()
	stopped := w.stopped
	w.stopped = true
	w.mu.Unlock()
	if !stopped {
		close(w.stop)
		<-w.done
		_ = w.c.Close()
	}
}

// infoField is one integer field of an INFO reply (0 when absent).
func infoField(info, field string) int64 {
	n, _ := rediscost.InfoInt(info, field)
	return n
}
