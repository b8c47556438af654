package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aebench/aebench/jobstore"
)

// recordCases: enqueue (bulk, duplicates, bad input) and what a record
// keeps (round trip, retention, encodings).
func recordCases() []testCase {
	return []testCase{
		{name: "BulkEnqueue", opts: smallPayload, fn: caseBulkEnqueue},
		{name: "DuplicateID", needs: needs(jobstore.CapUniqueIDs), fn: caseDuplicateID},
		{name: "BadInput", opts: smallPayload, fn: caseBadInput},
		{name: "GetRoundTrip", fn: caseGetRoundTrip},
		{name: "CompletedExpires", needs: needs(jobstore.CapRetention, jobstore.CapCancel, jobstore.CapDelayedJobs),
			opts: func(o *jobstore.Options) { o.Retention = retention }, fn: caseCompletedExpires},
		{name: "BatchCompletedExpires", needs: needs(jobstore.CapRetention, jobstore.CapDelayedJobs),
			opts: func(o *jobstore.Options) { o.Retention = retention }, fn: caseBatchCompletedExpires},
		{name: "EncodingJSON", needs: needs(jobstore.CapRecordEncodings), opts: useJSON, noEncoding: true, fn: caseEncodingJSON},
	}
}

func caseBulkEnqueue(e *env) {
	const n = 100
	var jobs []jobstore.NewJob
	for i := range n {
		jobs = append(jobs, jobstore.NewJob{ID: e.id(fmt.Sprintf("bulk%03d", i)), Payload: []byte(fmt.Sprint(i))})
	}
	e.enqueue(jobs...)
	for _, nj := range jobs {
		if d := diffNewJob(e.get(nj.ID), nj); len(d) > 0 {
			e.t.Errorf("job %s after bulk enqueue: %v", nj.ID, d)
		}
	}
	checkWaiting := func(when string) {
		e.t.Helper()
		st := e.stats()
		if st.Due+st.Delayed != n || (e.caps.Has(jobstore.CapExactStats) && st.Due != n) {
			e.t.Errorf("%s: Stats %+v, want %d due", when, st, n)
		}
	}
	checkWaiting("after bulk enqueue of 100")
	e.part("RejectedBatchStoresNothing", needs(jobstore.CapAtomicBulk, jobstore.CapUniqueIDs), func(e *env) {
		rejectedBatches(e, jobs[42].ID)
	})
	checkWaiting("after the rejected batches")
	got := e.claimAll(50, holdLease)
	if len(got) != n {
		e.t.Errorf("claimed %d jobs after the rejected batches, want exactly the %d of the first batch", len(got), n)
	}
}

// rejectedBatches sends batches that must be refused whole (a duplicate of
// the stored job existing, an id twice, one invalid job) and checks that
// none of their jobs was stored.
func rejectedBatches(e *env, existing string) {
	fresh := func(k int, prefix string) []jobstore.NewJob {
		var out []jobstore.NewJob
		for range k {
			out = append(out, jobstore.NewJob{ID: e.id(prefix)})
		}
		return out
	}
	wantNoneStored := func(batch []jobstore.NewJob, skip string, why string) {
		e.t.Helper()
		for _, nj := range batch {
			if nj.ID != "" && nj.ID != skip {
				e.wantMissing(nj.ID, why)
			}
		}
	}

	// A duplicate of a stored job in the middle of a batch: nothing stored.
	before := e.get(existing)
	batch := fresh(9, "dupbatch")
	batch = slices.Insert(batch, 4, jobstore.NewJob{ID: existing, Payload: []byte("other")})
	err := e.s.Enqueue(e.ctx, batch...)
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "bulk Enqueue with one id already stored")
	wantNoneStored(batch, existing, "batch rejected for a duplicate")
	if d := diffJob(before, e.get(existing)); len(d) > 0 {
		e.t.Errorf("existing job %s changed by the rejected batch: %v", existing, d)
	}

	// The same id twice inside one batch: rejected, nothing stored.
	batch = fresh(5, "selfdup")
	batch = append(batch, jobstore.NewJob{ID: batch[1].ID})
	err = e.s.Enqueue(e.ctx, batch...)
	if !errors.Is(err, jobstore.ErrDuplicateID) && !errors.Is(err, jobstore.ErrInvalid) {
		e.t.Errorf("bulk Enqueue with an id twice: err = %v, want ErrDuplicateID or ErrInvalid", err)
	}
	wantNoneStored(batch, "", "batch with an id twice")

	// One invalid job in a batch: ErrInvalid, nothing stored.
	for _, bad := range []struct {
		name string
		job  jobstore.NewJob
	}{
		{"empty ID", jobstore.NewJob{ID: ""}},
		{"negative MaxRetries", jobstore.NewJob{ID: e.id("neg"), MaxRetries: -1}},
		{"payload over MaxPayload", jobstore.NewJob{ID: e.id("big"), Payload: bytes.Repeat([]byte("x"), maxPayload+1)}},
	} {
		batch := fresh(5, "invbatch")
		batch = slices.Insert(batch, 2, bad.job)
		err := e.s.Enqueue(e.ctx, batch...)
		wantErrIs(e.t, err, jobstore.ErrInvalid, "bulk Enqueue with one job with "+bad.name)
		wantNoneStored(batch, "", "batch with "+bad.name)
	}
}

func caseDuplicateID(e *env) {
	id := e.id("dup")
	e.enqueue(jobstore.NewJob{ID: id, Name: "first", Payload: []byte("first"), MaxRetries: 2})
	before := e.get(id)
	err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: id, Name: "second", Payload: []byte("second"), RunAt: e.clk.Now().Add(time.Hour)})
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "second Enqueue of a queued id")
	if d := diffJob(before, e.get(id)); len(d) > 0 {
		e.t.Errorf("first job changed by the duplicate Enqueue: %v", d)
	}
	if st := e.stats(); st.Due+st.Delayed != 1 {
		e.t.Errorf("Stats after the duplicate: %+v, want 1 waiting", st)
	}
	cl := e.claimOne(id, holdLease)
	if string(cl.Job.Payload) != "first" {
		e.t.Errorf("claimed payload %q, want %q", cl.Job.Payload, "first")
	}
	err = e.s.Enqueue(e.ctx, jobstore.NewJob{ID: id, Payload: []byte("second")})
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "Enqueue of an in-progress id")
	if err := e.s.Complete(e.ctx, cl.Lease, []byte("r")); err != nil {
		e.t.Fatal(err)
	}
	before = e.get(id)
	err = e.s.Enqueue(e.ctx, jobstore.NewJob{ID: id, Payload: []byte("third")})
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "Enqueue of a completed id still in the store")
	if d := diffJob(before, e.get(id)); len(d) > 0 {
		e.t.Errorf("completed job changed by the duplicate Enqueue: %v", d)
	}
	e.claimNone("after duplicates of a completed job were refused")
}

func caseBadInput(e *env) {
	good := e.id("good")
	e.enqueue(jobstore.NewJob{ID: good})
	badNeg, badBig := e.id("neg"), e.id("big")
	claim := func(max int, lease time.Duration) error {
		_, err := e.s.Claim(e.ctx, jobstore.ClaimRequest{WorkerID: "w", Max: max, Lease: lease})
		return err
	}
	badOpts := e.opts
	badOpts.Queue = "bad queue!"
	for _, tc := range []struct {
		name  string
		field string // regexp the message must match (case-insensitive)
		call  func() error
	}{
		{"Enqueue empty ID", `\bid\b`, func() error { return e.s.Enqueue(e.ctx, jobstore.NewJob{ID: ""}) }},
		{"Enqueue negative MaxRetries", `max.?retries`, func() error { return e.s.Enqueue(e.ctx, jobstore.NewJob{ID: badNeg, MaxRetries: -1}) }},
		{"Enqueue payload over MaxPayload", `payload`, func() error {
			return e.s.Enqueue(e.ctx, jobstore.NewJob{ID: badBig, Payload: bytes.Repeat([]byte("x"), maxPayload+1)})
		}},
		{"Claim Max 0", `\bmax\b`, func() error { return claim(0, holdLease) }},
		{"Claim Max -1", `\bmax\b`, func() error { return claim(-1, holdLease) }},
		{"Claim Lease 0", `\blease\b`, func() error { return claim(1, 0) }},
		{"Claim Lease -1s", `\blease\b`, func() error { return claim(1, -time.Second) }},
		{"Get empty ID", `\bid\b`, func() error { _, err := e.s.Get(e.ctx, ""); return err }},
		{"New bad Queue", `queue`, func() error {
			s, err := e.backend.New(e.ctx, e.client, badOpts)
			if err == nil {
				_ = s.Close()
			}
			return err
		}},
	} {
		e.t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, jobstore.ErrInvalid) {
				t.Fatalf("%s: err = %v, want errors.Is(err, ErrInvalid)", tc.name, err)
			}
			if !regexp.MustCompile(`(?i)` + tc.field).MatchString(err.Error()) {
				t.Errorf("%s: message %q does not name the field (want match for %q)", tc.name, err.Error(), tc.field)
			}
		})
	}
	e.wantMissing(badNeg, "job rejected for negative MaxRetries")
	e.wantMissing(badBig, "job rejected for its payload size")
	exact := e.id("exact")
	if err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: exact, Payload: bytes.Repeat([]byte("x"), maxPayload)}); err != nil {
		e.t.Errorf("Enqueue of a payload of exactly MaxPayload (%d) bytes: %v", maxPayload, err)
	}
	// The refused claims took nothing.
	if got := ids(e.claim(10, holdLease)); !sameSet(got, []string{good, exact}) {
		e.t.Errorf("Claim after the refused calls got %v, want [%s %s]", got, good, exact)
	}
}

// roundTripJob is a job with every NewJob field set; payload and result are
// arbitrary bytes, or UTF-8 text for the JSON encoding.
func roundTripJob(e *env) (jobstore.NewJob, []byte) {
	payload := make([]byte, 0, 300)
	for i := range 256 {
		payload = append(payload, byte(i))
	}
	payload = append(payload, "\r\n\x00\xff\xfe end"...)
	result := []byte("\x00\x01res\xff\r\n")
	if e.opts.Encoding == jobstore.EncodingJSON {
		payload = []byte("{\"k\": \"v \\\" q\"}\n\ttab \x00 nul, Zoë 日本 🚀 <>&'")
		result = []byte("résultat \"quoted\" \\ \x00 🚀")
	}
	nj := jobstore.NewJob{
		ID:         e.id("rt"),
		Name:       "orders.create",
		Payload:    payload,
		RunAt:      e.clk.Now().Add(-1500 * time.Millisecond),
		MaxRetries: 7,
		Headers: map[string][]string{
			"Accept":       {"application/json"},
			"X-Multi":      {"a,b", "c: d", "e=f;g"},
			"X-Empty":      {""},
			"X-Unicode-ü":  {"Zoë 日本"},
			"Content-Type": {"text/plain; charset=utf-8"},
		},
		RouteParams: map[string]string{"id": "42", "name": "Zoë/ü", "empty": ""},
		QueryParams: map[string][]string{"q": {"a b", "c&d=e"}, "page": {"2"}, "tag": {"x", "y", "z"}},
	}
	if !e.has(jobstore.CapDelayedJobs) {
		nj.RunAt = time.Time{} // a store without delayed jobs need not keep a RunAt
	}
	return nj, result
}

// roundTrip follows one job through Enqueue, Claim and Complete, reading
// the record back at each step. A store without jobstore.CapStoreClock takes
// its times from elsewhere, so its timestamps are not compared with the
// manual clock.
func roundTrip(e *env) {
	clocked := e.has(jobstore.CapStoreClock)
	nj, result := roundTripJob(e)
	t0 := e.clk.Now()
	e.enqueue(nj)
	j := e.get(nj.ID)
	if d := diffNewJob(j, nj); len(d) > 0 {
		e.t.Errorf("Get after Enqueue lost fields: %v", d)
	}
	if j.Status != jobstore.StatusQueued || j.RetryCount != 0 || clocked && !j.CreatedAt.Equal(t0) {
		e.t.Errorf("Get after Enqueue: Status %v RetryCount %d CreatedAt %s, want Queued 0 %s", j.Status, j.RetryCount, show(j.CreatedAt), show(t0))
	}

	e.clk.Advance(250 * time.Millisecond)
	t1 := e.clk.Now()
	cl := e.claimOneAs("rt-worker", nj.ID, holdLease)
	l := cl.Lease
	if l.JobID != nj.ID || l.Token == "" || clocked && !l.Deadline.Equal(t1.Add(holdLease)) {
		e.t.Errorf("lease %+v, want JobID %s, a token, Deadline %s", l, nj.ID, show(t1.Add(holdLease)))
	}
	cj := cl.Job
	if cj.Status != jobstore.StatusInProgress || cj.WorkerID != "rt-worker" || clocked && !cj.StartedAt.Equal(t1) ||
		cj.LeaseToken != l.Token || !cj.LeaseDeadline.Equal(l.Deadline) {
		e.t.Errorf("claimed record: Status %v WorkerID %q StartedAt %s LeaseToken %q LeaseDeadline %s; want InProgress rt-worker %s %q %s",
			cj.Status, cj.WorkerID, show(cj.StartedAt), cj.LeaseToken, show(cj.LeaseDeadline),
			show(t1), l.Token, show(l.Deadline))
	}
	if cj.ID != nj.ID || cj.Name != nj.Name || !bytes.Equal(cj.Payload, nj.Payload) {
		e.t.Errorf("claimed job: ID %q Name %q Payload %s; want %q %q %s", cj.ID, cj.Name, show(cj.Payload), nj.ID, nj.Name, show(nj.Payload))
	}
	if d := diffClaimed(cj, e.get(nj.ID)); len(d) > 0 {
		e.t.Errorf("Claimed.Job differs from Get after claim: %v", d)
	}

	e.clk.Advance(2 * time.Second)
	t2 := e.clk.Now()
	if err := e.s.Complete(e.ctx, l, result); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	j = e.get(nj.ID)
	if d := diffNewJob(j, nj); len(d) > 0 {
		e.t.Errorf("completed record lost fields: %v", d)
	}
	if j.Status != jobstore.StatusCompleted || !bytes.Equal(j.Result, result) || clocked && !j.CompletedAt.Equal(t2) {
		e.t.Errorf("completed record: Status %v Result %s CompletedAt %s, want Completed %s %s",
			j.Status, show(j.Result), show(j.CompletedAt), show(result), show(t2))
	}

	// A zero RunAt means now.
	zero := e.id("rt-zero")
	e.enqueue(jobstore.NewJob{ID: zero})
	if j := e.get(zero); clocked && e.has(jobstore.CapDelayedJobs) && !j.RunAt.Equal(t2) || j.Status != jobstore.StatusQueued {
		e.t.Errorf("job enqueued with zero RunAt: RunAt %s Status %v, want %s Queued", show(j.RunAt), j.Status, show(t2))
	}
	if err := e.s.Complete(e.ctx, e.claimOne(zero, holdLease).Lease, nil); err != nil {
		e.t.Fatalf("Complete(%s): %v", zero, err)
	}
	_, err := e.s.Get(e.ctx, e.id("missing"))
	wantErrIs(e.t, err, jobstore.ErrNotFound, "Get of a missing id")
}

func caseGetRoundTrip(e *env) { roundTrip(e) }

const retention = 500 * time.Millisecond

// caseBatchCompletedExpires: records finished through CompleteAll (one
// CompleteMany on a store that batches) are readable right away and gone
// once Retention has passed, on the store's clock and on Redis's, and a
// later Recover has run: a store may leave the batch's expiry to a sweep
// that completions and Recover run (lib.lua's retire), so Recover is what
// reaches a queue with no more completions.
func caseBatchCompletedExpires(e *env) {
	a, b, live := e.id("bexp-a"), e.id("bexp-b"), e.id("bexp-live")
	e.enqueue(jobstore.NewJob{ID: a}, jobstore.NewJob{ID: b})
	held := e.claim(2, holdLease)
	cs := make([]jobstore.Completion, len(held))
	for i, c := range held {
		cs[i] = jobstore.Completion{Lease: c.Lease, Result: []byte("r")}
	}
	errs, err := jobstore.CompleteAll(e.ctx, e.s, cs)
	if err != nil {
		e.t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			e.t.Fatalf("CompleteAll lease %d: %v", i, err)
		}
	}
	e.enqueue(jobstore.NewJob{ID: live, RunAt: e.clk.Now().Add(time.Hour)})
	finished := map[string]bool{a: true, b: true}
	for id := range finished {
		e.wantStatus(id, jobstore.StatusCompleted)
	}
	start := time.Now()
	e.clk.Advance(retention + time.Millisecond)
	for deadline := start.Add(retention + 2500*time.Millisecond); len(finished) > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		e.recover(10)
		for id := range finished {
			if _, err := e.s.Get(e.ctx, id); errors.Is(err, jobstore.ErrNotFound) {
				delete(finished, id)
			}
		}
	}
	for id := range finished {
		e.t.Errorf("record %s completed in a batch still readable %v after it finished and Recover ran (Retention %v)",
			id, time.Since(start).Round(time.Millisecond), retention)
	}
	e.wantStatus(live, jobstore.StatusQueued)
}

func caseCompletedExpires(e *env) {
	done := e.enqueueClaim(jobstore.NewJob{ID: e.id("exp-done")}, holdLease)
	if err := e.s.Complete(e.ctx, done.Lease, []byte("r")); err != nil {
		e.t.Fatal(err)
	}
	dead := e.enqueueClaim(jobstore.NewJob{ID: e.id("exp-dead")}, holdLease)
	if _, err := e.s.Fail(e.ctx, dead.Lease, "x"); err != nil {
		e.t.Fatal(err)
	}
	canceled := e.id("exp-canceled")
	e.enqueue(jobstore.NewJob{ID: canceled, RunAt: e.clk.Now().Add(time.Hour)})
	if err := e.s.Cancel(e.ctx, canceled); err != nil {
		e.t.Fatal(err)
	}
	start := time.Now()
	live := e.id("exp-live")
	e.enqueue(jobstore.NewJob{ID: live, RunAt: e.clk.Now().Add(time.Hour)})
	finished := map[string]jobstore.Status{done.Job.ID: jobstore.StatusCompleted, dead.Job.ID: jobstore.StatusFailed, canceled: jobstore.StatusCanceled}
	for id, st := range finished {
		e.wantStatus(id, st) // still readable right away
	}
	deadline := start.Add(retention + 2500*time.Millisecond)
	for len(finished) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		for id := range finished {
			if _, err := e.s.Get(e.ctx, id); errors.Is(err, jobstore.ErrNotFound) {
				delete(finished, id)
			}
		}
	}
	for id, st := range finished {
		e.t.Errorf("%v record %s still readable %v after it finished (Retention %v)", st, id, time.Since(start).Round(time.Millisecond), retention)
	}
	e.wantStatus(live, jobstore.StatusQueued) // Retention never expires a waiting job
	if st := e.stats(); st.Completed != 1 {
		e.t.Errorf("Stats.Completed %d after the record expired, want 1 (counts completions, not records)", st.Completed)
	}
}

// caseEncodingJSON reruns every encoding-dependent case with
// Options.Encoding = EncodingJSON, each on a fresh store, as subtests
// EncodingJSON/<Case>; then checks what only JSON has: non-UTF-8 payloads.
func caseEncodingJSON(e *env) {
	for _, tc := range suite() {
		if tc.noEncoding {
			continue
		}
		e.t.Run(tc.name, func(t *testing.T) { runCase(t, e.backend, e.client, e.target, tc, useJSON) })
	}
	e.t.Run("NonUTF8Payload", func(t *testing.T) {
		sub := *e
		sub.t = t
		caseNonUTF8Payload(&sub)
	})
}

func caseNonUTF8Payload(e *env) {
	// A payload that is not UTF-8: refused as invalid, or kept exactly; never mangled.
	bad := e.id("json-binary")
	raw := []byte{0xff, 0xfe, 0x00, 'a', 0xc3}
	if utf8.Valid(raw) {
		e.t.Fatal("test payload is valid UTF-8")
	}
	err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: bad, Payload: raw})
	switch {
	case errors.Is(err, jobstore.ErrInvalid):
		if !strings.Contains(strings.ToLower(err.Error()), "payload") {
			e.t.Errorf("non-UTF-8 payload refused with %q, which does not name the payload", err)
		}
	case err != nil:
		e.t.Errorf("Enqueue of a non-UTF-8 payload under JSON: %v, want success or ErrInvalid", err)
	default:
		if j := e.get(bad); !bytes.Equal(j.Payload, raw) {
			e.t.Errorf("non-UTF-8 payload accepted but read back as %q, want %q (refuse it or keep it)", j.Payload, raw)
		}
	}
}
