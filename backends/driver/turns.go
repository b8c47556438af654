package driver

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// The turns of the overhead check: a round is SlicesPerRound turns of
// each side, every turn Slice long. 100 ms is long enough for hundreds of
// BullMQ or Sidekiq jobs (tens of RQ's) and a stop and restart to be a
// small part of it, short enough that both sides of a round meet the same
// machine.
const (
	Slice          = 100 * time.Millisecond
	SlicesPerRound = 4
	// turnSlack widens a turn when its completions are counted: a
	// runtime's clock (Node's timeOrigin + now) may sit a little off
	// aebench's, and no completion can fall in the other side's turn.
	turnSlack = 20 * time.Millisecond
	// turnsTimeout bounds the whole check, should a side stop making
	// progress without ending.
	turnsTimeout = 10 * time.Minute
)

// turn is one stretch a side ran alone, in Unix ns.
type turn struct{ start, end int64 }

// sideRun is what one side of the check did: its turns and the times of
// its completions.
type sideRun struct {
	turns []turn
	times []int64
}

// runInTurns starts the loop and the driver's worker on their prefilled
// queues, both stopped at once, then lets them run in turns (the loop
// first) until one has finished its jobs; then it lets both finish.
func runInTurns(ctx context.Context, spec Spec, loopCfg, drvCfg Config, jobs int) (loop, drv sideRun, err error) {
	ctx, cancel := context.WithTimeout(ctx, turnsTimeout)
	defer cancel()
	w, err := startRole(ctx, spec, drvCfg, "worker")
	if err != nil {
		return loop, drv, err
	}
	stopGroup(w.cmd)
	drvTimes, drvDone := collectCompletions(w, jobs)
	defer func() {
		if !isClosed(drvDone) { // an early return: end it before its reader is closed
			killGroup(w.cmd)
			<-drvDone
		}
		w.close()
	}()

	lc, err := spec.Cmd(ctx, loopCfg)
	if err != nil {
		return loop, drv, err
	}
	ownGroup(lc)
	var lout bytes.Buffer
	var lerr strings.Builder
	lc.Stdout, lc.Stderr = &lout, &lerr
	if err := lc.Start(); err != nil {
		return loop, drv, fmt.Errorf("driver %s: loop: %w", spec.Name, err)
	}
	stopGroup(lc)
	loopDone := make(chan error, 1)
	go func() { loopDone <- lc.Wait() }()
	var loopErr error
	loopExited := false
	defer func() {
		if !loopExited {
			killGroup(lc)
			<-loopDone
		}
	}()
	var turns [2][]turn
	turns, loopErr, loopExited = alternate(ctx, [2]*exec.Cmd{lc, w.cmd}, loopDone, drvDone)
	contGroup(lc)
	contGroup(w.cmd)
	if !loopExited {
		select {
		case loopErr = <-loopDone:
			loopExited = true
		case <-ctx.Done():
			return loop, drv, fmt.Errorf("driver %s: overhead check: %w", spec.Name, ctx.Err())
		}
	}
	if loopErr != nil {
		return loop, drv, fmt.Errorf("driver %s: loop: %w: %s", spec.Name, loopErr, lastLine(lerr.String()))
	}
	select {
	case <-drvDone:
	case <-ctx.Done():
		return loop, drv, fmt.Errorf("driver %s: overhead check: %w", spec.Name, ctx.Err())
	}
	out, err := loopResult(spec.Name, lout.Bytes())
	if err != nil {
		return loop, drv, err
	}
	times := drvTimes()
	if len(times) < jobs {
		return loop, drv, fmt.Errorf("driver %s: worker ended after %d of %d jobs: %s", spec.Name, len(times), jobs, lastLine(w.stderr.String()))
	}
	return sideRun{turns[0], out.Times}, sideRun{turns[1], times}, nil
}

// alternate runs cmds[0] and cmds[1] alone by turns of Slice (SIGCONT,
// then SIGSTOP, of each one's process group), starting with cmds[0], until
// the loop exits (loopDone), the worker has its jobs (drvDone) or ctx ends.
// It returns each side's turns and, when the loop exited, its error.
func alternate(ctx context.Context, cmds [2]*exec.Cmd, loopDone <-chan error, drvDone chan struct{}) (turns [2][]turn, loopErr error, loopExited bool) {
	for i := 0; ; i ^= 1 {
		start := time.Now()
		contGroup(cmds[i])
		t := time.NewTimer(Slice)
		select {
		case <-t.C:
		case loopErr = <-loopDone:
			loopExited = true
		case <-drvDone:
		case <-ctx.Done():
		}
		t.Stop()
		stopGroup(cmds[i])
		turns[i] = append(turns[i], turn{start.UnixNano(), time.Now().UnixNano()})
		if loopExited || isClosed(drvDone) || ctx.Err() != nil {
			return turns, loopErr, loopExited
		}
	}
}

// collectCompletions reads the worker's events until jobs completions (or
// its end): the returned func gives their times once done is closed.
func collectCompletions(w *role, jobs int) (func() []int64, chan struct{}) {
	var mu sync.Mutex
	var times []int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; n < jobs && w.sc.Scan(); {
			if t, ok := completedAt(w.sc.Bytes()); ok {
				mu.Lock()
				times = append(times, t)
				mu.Unlock()
				n++
			}
		}
	}()
	return func() []int64 {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return times
	}, done
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// pairRounds counts each side's completions in each of its turns and
// pairs turn i of the loop with turn i of the driver (adjacent in time).
// A pair counts once both sides are past their warm-up (their skip-th
// completion) and while both still have jobs (a turn past a side's last
// completion does not count). Each
// round of SlicesPerRound pairs gives both sides' jobs/s and their ratio.
func pairRounds(loop, drv sideRun, skip int) (loops, drivers, ratios []float64) {
	lc, dc := countInTurns(loop), countInTurns(drv)
	lw, dw := warmedAt(loop.times, skip), warmedAt(drv.times, skip)
	le, de := slices.Max(append([]int64{0}, loop.times...)), slices.Max(append([]int64{0}, drv.times...))
	var ln, dn, ld, dd float64
	k := 0
	for i := range min(len(loop.turns), len(drv.turns)) {
		if loop.turns[i].start < lw || drv.turns[i].start < dw || loop.turns[i].end > le || drv.turns[i].end > de {
			continue // warming up, or a side had finished its jobs (it may take a while to exit)
		}
		ln, ld = ln+float64(lc[i]), ld+float64(loop.turns[i].end-loop.turns[i].start)
		dn, dd = dn+float64(dc[i]), dd+float64(drv.turns[i].end-drv.turns[i].start)
		if k++; k%SlicesPerRound == 0 {
			l, d := ln/(ld/1e9), dn/(dd/1e9)
			loops, drivers = append(loops, l), append(drivers, d)
			ratios = append(ratios, d/l)
			ln, dn, ld, dd = 0, 0, 0, 0
		}
	}
	return loops, drivers, ratios
}

// countInTurns: how many of the side's completions fall in each turn.
func countInTurns(s sideRun) []int {
	times := slices.Clone(s.times)
	slices.Sort(times)
	counts := make([]int, len(s.turns))
	slack := int64(turnSlack)
	for i, t := range s.turns {
		lo, _ := slices.BinarySearch(times, t.start-slack)
		hi, _ := slices.BinarySearch(times, t.end+slack)
		counts[i] = hi - lo
	}
	return counts
}

// warmedAt is the time of the skip-th completion: the runtime's start-up
// and warm-up are behind it.
func warmedAt(times []int64, skip int) int64 {
	if len(times) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(times))
	return s[min(max(skip, 1), len(s))-1]
}
