package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// enqueue sends the due, delayed and retried jobs, each batch under its
// own seq, and an unknown op: every ack must carry its request's seq, the
// unknown op must be refused under its seq.
func (c *checker) enqueue() {
	c.enqAt = time.Now()
	c.delayAt = c.enqAt.Add(checkDelay)
	var due []wireJob
	for _, id := range checkDue {
		due = append(due, wireJob{ID: id, P: "x", H: [][2]int64{{2000, 0}}})
	}
	reqs := []map[string]any{{"op": "enqueue", "seq": int64(1), "jobs": due}}
	if c.hello.Caps.Delayed {
		reqs = append(reqs, map[string]any{"op": "enqueue", "seq": int64(2),
			"jobs": []wireJob{{ID: checkDelayed, P: "x", At: c.delayAt.UnixMilli(), H: [][2]int64{{1000, 0}}}}})
	}
	if c.hello.Caps.Retries != "" {
		reqs = append(reqs, map[string]any{"op": "enqueue", "seq": int64(3),
			"jobs": []wireJob{{ID: checkRetry, P: "x", Retry: 1, H: [][2]int64{{1000, 1}, {1000, 0}}}}})
	}
	reqs = append(reqs, map[string]any{"op": "no-such-op", "seq": int64(4)})
	got, bad := c.call(15*time.Second, reqs...)
	acks, why := 0, bad
	for _, r := range reqs[:len(reqs)-1] {
		var rep checkReply
		seq := r["seq"].(int64)
		switch l, ok := got[seq]; {
		case !ok:
			why = append(why, fmt.Sprintf("no reply to enqueue seq %d within 15 s", seq))
		case json.Unmarshal(l, &rep) != nil || rep.E != "ack":
			why = append(why, fmt.Sprintf("enqueue seq %d answered %q, where {\"e\":\"ack\",\"seq\":%d} is due", seq, l, seq))
		default:
			acks++
		}
	}
	c.add("enqueue-ack", len(why) == 0, cmpOr(strings.Join(why, "; "), fmt.Sprintf("%d enqueue batches acknowledged, each under its seq", acks)))
	var rep checkReply
	l, ok := got[4]
	if ok && json.Unmarshal(l, &rep) == nil && rep.E == "refused" {
		c.add("refusal", true, "an unknown op was refused under its seq: "+rep.Msg)
	} else {
		c.add("refusal", false, fmt.Sprintf("an unknown op (seq 4) answered %q; due: {\"e\":\"refused\",\"seq\":4,\"msg\":...}", l))
	}
	if !c.hello.Caps.Delayed {
		c.declared("delayed", "the hello declares no delayed jobs (caps.delayed false)")
	}
	if c.hello.Caps.Retries == "" {
		c.declared("retries", "the hello declares no retries (caps.retries empty)")
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// inspectQueued asks inspect and stats before any worker runs: the due
// jobs wait, the delayed one is delayed, an id never enqueued is unknown.
func (c *checker) inspectQueued() {
	if !c.hello.Caps.Inspect {
		c.declared("inspect", "the hello declares no inspect (caps.inspect false): the read-back falls back to stats")
		return
	}
	ids := append(slices.Clone(checkDue), checkNone)
	want := make([]string, len(checkDue))
	for i := range want {
		want[i] = "waiting"
	}
	want = append(want, "unknown")
	if c.hello.Caps.Delayed {
		ids, want = append(ids, checkDelayed), append(want, "delayed")
	}
	got, bad := c.call(15*time.Second, map[string]any{"op": "inspect", "seq": int64(5), "ids": ids},
		map[string]any{"op": "stats", "seq": int64(6)})
	var rep checkReply
	why := bad
	if json.Unmarshal(got[5], &rep) != nil || rep.E != "states" || len(rep.States) != len(ids) {
		why = append(why, fmt.Sprintf("inspect of %d ids answered %q", len(ids), got[5]))
	} else {
		for i, st := range rep.States {
			if st.S != want[i] || st.R != (want[i] != "unknown") {
				why = append(why, fmt.Sprintf("%s: state %q reachable %v, where %q reachable %v is due", ids[i], st.S, st.R, want[i], want[i] != "unknown"))
			}
		}
	}
	c.add("inspect", len(why) == 0, cmpOr(strings.Join(why, "; "), "queued jobs waiting, the delayed one delayed, an unknown id unknown"))
	var st checkStats
	ok := json.Unmarshal(got[6], &st) == nil && st.Due != nil && st.Delayed != nil && st.Active != nil && st.Completed != nil && st.Dead != nil
	if ok && *st.Due >= int64(len(checkDue)) {
		c.add("stats", true, fmt.Sprintf("due %d, delayed %d, active %d, completed %d, dead %d", *st.Due, *st.Delayed, *st.Active, *st.Completed, *st.Dead))
	} else {
		c.add("stats", false, fmt.Sprintf("stats answered %q; due: due (at least %d), delayed, active, completed and dead", got[6], len(checkDue)))
	}
}

// runJobs reads the worker's events until every job has finished (or 45
// s: Sidekiq's retry jitter), then holds them to the protocol.
func (c *checker) runJobs(w *checkProc) {
	want := slices.Clone(checkDue)
	if c.hello.Caps.Delayed {
		want = append(want, checkDelayed)
	}
	if c.hello.Caps.Retries != "" {
		want = append(want, checkRetry)
	}
	c.collect(w, 45*time.Second, func() bool {
		for _, id := range want {
			if !c.completed(id, -1) {
				return false
			}
		}
		return true
	})
	c.checkDueEvents()
	if c.hello.Caps.Delayed {
		c.checkDelayed()
	}
	if c.hello.Caps.Retries != "" {
		c.checkRetry()
	}
}

// collect reads worker events into c.events until done or d passes.
func (c *checker) collect(w *checkProc, d time.Duration, done func() bool) {
	deadline := time.Now().Add(d)
	for !done() && time.Now().Before(deadline) {
		l, ok := w.next(time.Until(deadline))
		if !ok {
			return
		}
		var ev checkEvent
		if json.Unmarshal(l, &ev) != nil || ev.ID == "" {
			continue // err lines and the like
		}
		if !slices.Contains(checkDue, ev.ID) && !slices.Contains([]string{checkDelayed, checkRetry, checkKill}, ev.ID) {
			c.strays = append(c.strays, ev.ID)
			continue
		}
		c.events[ev.ID] = append(c.events[ev.ID], ev)
	}
}

// completed says whether id has a completed event (of attempt a; -1: any).
func (c *checker) completed(id string, a int) bool {
	return slices.ContainsFunc(c.events[id], func(e checkEvent) bool { return e.E == "completed" && (a < 0 || e.A == a) })
}

// find is id's first event of kind e and attempt a.
func (c *checker) find(id, e string, a int) (checkEvent, bool) {
	i := slices.IndexFunc(c.events[id], func(x checkEvent) bool { return x.E == e && x.A == a })
	if i < 0 {
		return checkEvent{}, false
	}
	return c.events[id][i], true
}

// checkDueEvents: each due job started, then completed, attempt 0, with
// timestamps in Unix nanoseconds between its enqueue and now, in order.
func (c *checker) checkDueEvents() {
	var why []string
	lo, hi := c.enqAt.Add(-time.Second).UnixNano(), time.Now().Add(time.Second).UnixNano()
	for _, id := range checkDue {
		st, okS := c.find(id, "started", 0)
		done, okC := c.find(id, "completed", 0)
		switch {
		case !okC:
			why = append(why, id+": no completed event (attempt 0) within 45 s")
		case !okS:
			why = append(why, id+": no started event before its completed one (events_at_once is true: started leaves when the job starts)")
		case st.T < lo || st.T > hi || done.T < lo || done.T > hi:
			why = append(why, fmt.Sprintf("%s: t %d and %d outside the check's time (Unix nanoseconds %d..%d, the machine's clock)", id, st.T, done.T, lo, hi))
		case done.T < st.T || done.H != 0 && (done.H < st.T || done.H > done.T):
			why = append(why, fmt.Sprintf("%s: started %d, handler end %d, completed %d out of order", id, st.T, done.H, done.T))
		}
	}
	if len(c.strays) > 0 {
		why = append(why, fmt.Sprintf("events for ids never enqueued: %v", c.strays))
	}
	c.add("worker-events", len(why) == 0, cmpOr(strings.Join(why, "; "),
		fmt.Sprintf("%d jobs: started, then completed, attempt 0, timestamps in Unix ns in order", len(checkDue))))
}

// checkDelayed: the delayed job started no earlier than its RunAt less
// what the hello declares (early.max_ms), and completed.
func (c *checker) checkDelayed() {
	st, ok := c.find(checkDelayed, "started", 0)
	early := time.Duration(c.hello.Early.MaxMs) * time.Millisecond
	switch {
	case !ok || !c.completed(checkDelayed, 0):
		c.add("delayed", false, "the delayed job (due in 2 s) did not start and complete within 45 s")
	case time.Unix(0, st.T).Before(c.delayAt.Add(-early)):
		c.add("delayed", false, fmt.Sprintf("the delayed job started %v before its at (the hello declares early max_ms %d)",
			c.delayAt.Sub(time.Unix(0, st.T)).Round(time.Millisecond), c.hello.Early.MaxMs))
	case time.Unix(0, st.T).Before(c.delayAt):
		c.add("delayed", true, fmt.Sprintf("started %v before its at, within the early start the hello declares (%d ms: %s)",
			c.delayAt.Sub(time.Unix(0, st.T)).Round(time.Millisecond), c.hello.Early.MaxMs, c.hello.Early.Why))
	default:
		c.add("delayed", true, fmt.Sprintf("started %v after its at", time.Unix(0, st.T).Sub(c.delayAt).Round(time.Millisecond)))
	}
}

// checkRetry: the job's first attempt failed (not dead, with its retry
// time), its second started and completed.
func (c *checker) checkRetry() {
	f, okF := c.find(checkRetry, "failed", 0)
	_, okS := c.find(checkRetry, "started", 1)
	switch {
	case !okF || f.Dead || f.RA == 0:
		c.add("retries", false, fmt.Sprintf("the first attempt's failed event is %+v; due: a=0, dead false, ra its retry time", f))
	case !okS || !c.completed(checkRetry, 1):
		c.add("retries", false, "the second attempt (a=1) did not start and complete within 45 s")
	default:
		c.add("retries", true, fmt.Sprintf("attempt 0 failed (retry due %v later), attempt 1 completed", time.Duration(f.RA-f.T).Round(time.Millisecond)))
	}
}

// inspectFinished: a completed job reads completed, or unknown where the
// system keeps no finished record.
func (c *checker) inspectFinished() {
	if !c.hello.Caps.Inspect {
		return
	}
	got, bad := c.call(15*time.Second, map[string]any{"op": "inspect", "seq": int64(7), "ids": []string{checkDue[0]}})
	var rep checkReply
	switch {
	case len(bad) > 0 || json.Unmarshal(got[7], &rep) != nil || len(rep.States) != 1:
		c.add("inspect-finished", false, fmt.Sprintf("inspect of a completed job answered %q %v", got[7], bad))
	case rep.States[0].S == "completed":
		c.add("inspect-finished", true, "a completed job reads completed")
	case rep.States[0].S == "unknown":
		c.declared("inspect-finished", "a completed job reads unknown: the system keeps no record of finished jobs (the read-back cannot confirm a completion whose event a kill cut off)")
	default:
		c.add("inspect-finished", false, fmt.Sprintf("a completed job reads %q", rep.States[0].S))
	}
}

// killWorker enqueues a long job, SIGKILLs the worker running it and
// starts another: the job must run again, or the hello must declare the
// loss (loses worker_kill). It returns the worker left running.
func (c *checker) killWorker(ctx context.Context, w *checkProc) *checkProc {
	got, bad := c.call(15*time.Second, map[string]any{"op": "enqueue", "seq": int64(8),
		"jobs": []wireJob{{ID: checkKill, P: "x", H: [][2]int64{{checkKillHold.Microseconds(), 0}}}}})
	if _, ok := got[8]; !ok {
		c.add("kill", false, fmt.Sprintf("the long job's enqueue got no ack %v", bad))
		return w
	}
	c.collect(w, 15*time.Second, func() bool { _, ok := c.find(checkKill, "started", 0); return ok })
	if _, ok := c.find(checkKill, "started", 0); !ok {
		c.add("kill", false, "the long job did not start within 15 s")
		return w
	}
	w.kill()
	w2, err := c.start(ctx, "worker")
	if err != nil {
		return nil
	}
	// A system that recovers takes the job back within about a lease (its
	// stalled check or visibility sweep), then runs it for checkKillHold.
	wait := 2*checkLease + checkKillHold + 5*time.Second
	c.collect(w2, wait, func() bool { return c.completed(checkKill, -1) })
	loses := slices.Contains(c.hello.Loses, "worker_kill")
	switch {
	case c.completed(checkKill, -1):
		c.add("kill", true, fmt.Sprintf("the job the killed worker held ran again and completed (recovery %q)", c.hello.Caps.Recovery))
	case loses:
		c.declared("kill", "the job the killed worker held never ran again, as the hello declares (loses worker_kill): "+c.hello.Guarantees)
	default:
		c.add("kill", false, fmt.Sprintf("the job the killed worker held did not run again within %v, and the hello declares neither a recovery that brings it back nor loses worker_kill (recovery %q)",
			wait, c.hello.Caps.Recovery))
	}
	return w2
}
