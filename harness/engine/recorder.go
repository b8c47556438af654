package engine

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1µs resolution (values in ns, lowest discernible 1000)
// up to one day (simulated runs measure recoveries of half an hour and
// more), 3 significant digits.
const (
	histLowest  = 1000
	histHighest = int64(24 * time.Hour)
	histDigits  = 3
)

// NewHist returns an empty histogram of the harness's range.
func NewHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// Tag names one histogram. Every value is in nanoseconds.
type Tag int

// The histograms of a run.
const (
	TagEnqueue     Tag = iota // Enqueue call: service time of one call
	TagScheduleLag            // open loop: how late a call started after its planned time
	TagClaim                  // Claim calls that returned jobs (a call that waited for work includes the wait)
	TagDispatch               // harness: Claim returned -> handler started
	TagHandler                // the handler's actual run time (planned sleep plus timer slack)
	TagComplete               // Complete call (with workers.ack_batch > 1: one CompleteAll call of a batch)
	TagFail                   // Fail call
	TagBookkeeping            // harness: ledger and histogram work per job event
	TagQueueWait              // due -> handler start, every attempt whose due time is known
	TagLateness               // handler start - RunAt, for delayed jobs and retries after Fail
	TagE2E                    // intended enqueue -> Complete acknowledged, immediate jobs done on the first attempt
	TagE2ERetried             // the same for immediate jobs that needed retries (includes backoff)
	TagE2ENet                 // TagE2E minus the handler's run time: what queueing and the store (and harness) add
	TagRecover                // Recover call
	TagPromote                // Promote call (Mover backends)
	TagRecovery               // fault -> next handler start of each job in flight at a fault
	TagAckWait                // handler end -> its Complete acknowledged: what ack batching adds to e2e
	TagStats                  // Stats call of the monitoring loop (workers.monitor_interval)
	numTags
)

var tagNames = [numTags]string{"enqueue", "schedule_lag", "claim", "dispatch", "handler", "complete", "fail",
	"bookkeeping", "queue_wait", "lateness", "e2e", "e2e_retried", "e2e_minus_handler", "recover", "promote", "recovery", "ack_wait", "stats"}

func (t Tag) String() string { return tagNames[t] }

// TagNames lists every histogram name in order.
func TagNames() []string { return append([]string(nil), tagNames[:]...) }

// HistSet is one histogram per tag, allocated on first use (a histogram of
// this range is about 230 KB).
type HistSet [numTags]*hdr.Histogram

func (s *HistSet) record(t Tag, ns int64) {
	h := s[t]
	if h == nil {
		h = NewHist()
		s[t] = h
	}
	if ns < 0 {
		ns = 0
	}
	if ns > histHighest {
		ns = histHighest
	}
	_ = h.RecordValue(ns)
}

// mergeInto adds every histogram of s to dst and resets s.
func (s *HistSet) mergeInto(dst *HistSet) {
	for t, h := range s {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if dst[t] == nil {
			dst[t] = NewHist()
		}
		dst[t].Merge(h)
		h.Reset()
	}
}

// Recorder is the histograms of one goroutine (or of one worker's executors,
// which share it under its mutex): hdrhistogram is not safe for concurrent
// use, so nothing records into a shared histogram. The collector swaps the
// current set out once per interval; the lock is held for a pointer swap only.
type Recorder struct {
	mu         sync.Mutex
	cur, spare *HistSet
	// speed turns the wall clock's durations into simulated ones (1: real time).
	speed float64
}

func newRecorder(speed float64) *Recorder {
	return &Recorder{cur: &HistSet{}, spare: &HistSet{}, speed: max(speed, 1)}
}

// Record adds one value, measured on the wall clock; on simulated time it
// is recorded as the simulated duration it stands for.
func (r *Recorder) Record(t Tag, d time.Duration) {
	if r.speed != 1 {
		d = time.Duration(float64(d) * r.speed)
	}
	r.mu.Lock()
	r.cur.record(t, int64(d))
	r.mu.Unlock()
}

// merge adds a histogram recorded elsewhere (a worker process's, already
// in the run's units) to tag t.
func (r *Recorder) merge(t Tag, h *hdr.Histogram) {
	r.mu.Lock()
	if r.cur[t] == nil {
		r.cur[t] = NewHist()
	}
	r.cur[t].Merge(h)
	r.mu.Unlock()
}

// tagOf is the tag named name.
func tagOf(name string) (Tag, bool) {
	for t, n := range tagNames {
		if n == name {
			return Tag(t), true
		}
	}
	return 0, false
}

// drainInto moves what was recorded since the last call into dst.
func (r *Recorder) drainInto(dst *HistSet) {
	r.mu.Lock()
	full := r.cur
	r.cur, r.spare = r.spare, nil
	r.mu.Unlock()
	full.mergeInto(dst)
	r.mu.Lock()
	r.spare = full
	r.mu.Unlock()
}
