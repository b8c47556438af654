// Package hist holds a run's latency histograms: the tags, one
// HdrHistogram per tag in the harness's range (1µs to a day, 3 significant
// digits, values in ns), the per-goroutine Recorder the collector drains
// once a second, the helpers that turn a histogram into the live buckets
// and sums of the time series, and the interval log's writer (LogWriter).
// It knows nothing of a run: the engine records into it and the outputs
// read it.
package hist

import (
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1µs resolution (values in ns, lowest discernible 1000)
// up to one day (simulated runs measure recoveries of half an hour and
// more), 3 significant digits.
const (
	lowest  = 1000
	Highest = int64(24 * time.Hour)
	digits  = 3
)

// New returns an empty histogram of the harness's range.
func New() *hdr.Histogram { return hdr.New(lowest, Highest, digits) }

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

// Set is one histogram per tag, allocated on first use (a histogram of
// this range is about 230 KB).
type Set [numTags]*hdr.Histogram

func (s *Set) Record(t Tag, ns int64) {
	h := s[t]
	if h == nil {
		h = New()
		s[t] = h
	}
	if ns < 0 {
		ns = 0
	}
	if ns > Highest {
		ns = Highest
	}
	_ = h.RecordValue(ns)
}

// MergeInto adds every histogram of s to dst and resets s.
func (s *Set) MergeInto(dst *Set) {
	for t, h := range s {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if dst[t] == nil {
			dst[t] = New()
		}
		dst[t].Merge(h)
		h.Reset()
	}
}

// AddTo adds s's histograms of tags to dst, keeping s.
func (s *Set) AddTo(dst *Set, tags ...Tag) {
	for _, t := range tags {
		if h := s[t]; h != nil && h.TotalCount() > 0 {
			if dst[t] == nil {
				dst[t] = New()
			}
			dst[t].Merge(h)
		}
	}
}

// Recorder is the histograms of one goroutine (or of one worker's executors,
// which share it under its mutex): hdrhistogram is not safe for concurrent
// use, so nothing records into a shared histogram. The collector swaps the
// current set out once per interval; the lock is held for a pointer swap only.
type Recorder struct {
	mu         sync.Mutex
	cur, spare *Set
	// speed turns the wall clock's durations into simulated ones (1: real time).
	speed float64
}

func NewRecorder(speed float64) *Recorder {
	return &Recorder{cur: &Set{}, spare: &Set{}, speed: max(speed, 1)}
}

// Record adds one value, measured on the wall clock; on simulated time it
// is recorded as the simulated duration it stands for.
func (r *Recorder) Record(t Tag, d time.Duration) {
	if r.speed != 1 {
		d = time.Duration(float64(d) * r.speed)
	}
	r.mu.Lock()
	r.cur.Record(t, int64(d))
	r.mu.Unlock()
}

// Merge adds a histogram recorded elsewhere (a worker process's, already
// in the run's units) to tag t.
func (r *Recorder) Merge(t Tag, h *hdr.Histogram) {
	r.mu.Lock()
	if r.cur[t] == nil {
		r.cur[t] = New()
	}
	r.cur[t].Merge(h)
	r.mu.Unlock()
}

// TagOf is the tag named name.
func TagOf(name string) (Tag, bool) {
	for t, n := range tagNames {
		if n == name {
			return Tag(t), true
		}
	}
	return 0, false
}

// DrainInto moves what was recorded since the last call into dst.
func (r *Recorder) DrainInto(dst *Set) {
	r.mu.Lock()
	full := r.cur
	r.cur, r.spare = r.spare, nil
	r.mu.Unlock()
	full.MergeInto(dst)
	r.mu.Lock()
	r.spare = full
	r.mu.Unlock()
}

// LatencyBuckets are the upper bounds, in seconds, of the live latency
// histograms (SeriesPoint.E2EHist): 100µs to about 105 s, doubling; the
// last count of a histogram holds what lies above.
func LatencyBuckets() []float64 {
	var b []float64
	for v := 100e-6; v < 110; v *= 2 {
		b = append(b, v)
	}
	return b
}

// SumSeconds is the sum of h's values (ns), in seconds.
func SumSeconds(h *hdr.Histogram) float64 {
	if h == nil {
		return 0
	}
	return h.Mean() * float64(h.TotalCount()) / 1e9
}

// BucketCounts counts h's values (ns) per LatencyBuckets bucket.
func BucketCounts(h *hdr.Histogram) []uint64 {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	bounds := LatencyBuckets()
	out := make([]uint64, len(bounds)+1)
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		i := sort.SearchFloat64s(bounds, float64(bar.To)/1e9)
		out[i] += uint64(bar.Count)
	}
	return out
}

// Stretch is h with every value multiplied by k, in the harness's range.
func Stretch(h *hdr.Histogram, k float64) *hdr.Histogram {
	out := New()
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			v := min(int64(float64(b.From+(b.To-b.From)/2)*k), Highest)
			_ = out.RecordValues(v, b.Count)
		}
	}
	out.SetTag(h.Tag())
	return out
}
