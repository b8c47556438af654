package conditions

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// JobKind is one kind of the scenario's job mix (jobs:): its share of the
// arrivals and its own workload, failure class, retries and tenants. A
// job's kind and tenant are drawn from its id and the run's seed
// (Config.Class), so every backend of a run, and every worker process and
// driver, sees the same job as the same kind of the same tenant.
type JobKind struct {
	Name        string  `json:"name"`
	Share       float64 `json:"share"`
	Payload     int     `json:"payload_bytes"`
	Handler     Dist    `json:"-"`
	HandlerText string  `json:"handler"`
	Fail        float64 `json:"fail_probability"`
	// FailClass is what a failure of the kind's handler is: rate_limit
	// (retried with the store's backoff) or fatal (dead-lettered at once:
	// the contract's Fail has no non-retryable flag, so a fatal kind's jobs
	// are enqueued with no retries).
	FailClass  string  `json:"fail_class"`
	Delayed    float64 `json:"delayed_share"`
	Delay      Dist    `json:"-"`
	DelayText  string  `json:"delay"`
	MaxRetries int     `json:"max_retries"`
	Tenants    Tenants `json:"tenants"`
	// Queue is the queue of store.queues the kind's jobs go to ("": the
	// first).
	Queue string `json:"queue,omitempty"`
}

// Failure classes.
const (
	FailRateLimit = "rate_limit"
	FailFatal     = "fatal"
)

// FailClasses are the failure classes a kind or a failure window may name.
func FailClasses() []string { return []string{FailRateLimit, FailFatal} }

// Workload is the kind's jobs' workload.
func (k JobKind) Workload() Workload {
	return Workload{Delayed: k.Delayed, Delay: k.Delay, DelayText: k.DelayText, Handler: k.Handler,
		HandlerText: k.HandlerText, Fail: k.Fail, Payload: k.Payload}
}

// Tenants is how a kind's jobs spread over the run's tenants t0..tN-1:
// one tenant, uniform over N, Zipf(S) over N (t0 the most frequent), or
// one noisy tenant t0 sending Share of the jobs and the other N-1 sharing
// the rest evenly. Tenant i is the same tenant in every kind.
type Tenants struct {
	Dist  string  `json:"dist"` // one, uniform, zipf, noisy
	N     int     `json:"n"`
	S     float64 `json:"zipf_s,omitempty"`
	Share float64 `json:"noisy_share,omitempty"`
	// cdf is Zipf's cumulative distribution (PrepareMix).
	cdf []float64
}

// TenantsAllowed is the text errors and the scenario README give for a
// kind's tenants.
const TenantsAllowed = "uniform(N), zipf(N, s) or noisy(N, share), N 1..10000 tenants, s > 0, 0 < share < 1; absent: one tenant"

// MaxTenants bounds a kind's tenants: each gets its own latency
// histograms at the end of a run.
const MaxTenants = 10000

// ParseTenants reads the scenario syntax of a kind's tenants.
func ParseTenants(s string) (Tenants, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Tenants{}, fmt.Errorf("%q is not a tenant distribution", s)
	}
	kind := strings.TrimSpace(s[:open])
	var args []float64
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Tenants{}, fmt.Errorf("%q: %q is not a number", s, strings.TrimSpace(a))
		}
		args = append(args, v)
	}
	want := map[string]int{"uniform": 1, "zipf": 2, "noisy": 2}
	n, ok := want[kind]
	switch {
	case !ok:
		return Tenants{}, fmt.Errorf("%q: unknown tenant distribution %q", s, kind)
	case len(args) != n:
		return Tenants{}, fmt.Errorf("%q: %s takes %d argument(s), got %d", s, kind, n, len(args))
	case args[0] != math.Trunc(args[0]) || args[0] < 1 || args[0] > MaxTenants:
		return Tenants{}, fmt.Errorf("%q: N must be a whole number of tenants 1..%d", s, MaxTenants)
	}
	t := Tenants{Dist: kind, N: int(args[0])}
	switch kind {
	case "zipf":
		if t.S = args[1]; t.S <= 0 || t.S > 10 {
			return Tenants{}, fmt.Errorf("%q: Zipf's exponent s must be > 0, at most 10", s)
		}
	case "noisy":
		if t.Share = args[1]; t.Share <= 0 || t.Share >= 1 {
			return Tenants{}, fmt.Errorf("%q: the noisy tenant's share must be > 0 and < 1", s)
		}
		if t.N < 2 {
			return Tenants{}, fmt.Errorf("%q: a noisy tenant needs quiet ones beside it: N >= 2", s)
		}
	}
	return t, nil
}

// String gives the scenario syntax back.
func (t Tenants) String() string {
	switch t.Dist {
	case "uniform":
		return fmt.Sprintf("uniform(%d)", t.N)
	case "zipf":
		return fmt.Sprintf("zipf(%d, %g)", t.N, t.S)
	case "noisy":
		return fmt.Sprintf("noisy(%d, %g)", t.N, t.Share)
	}
	return "one"
}

// Count is how many tenants the distribution spreads over.
func (t Tenants) Count() int { return max(t.N, 1) }

// Offered is tenant i's expected share of the kind's jobs.
func (t Tenants) Offered(i int) float64 {
	switch t.Dist {
	case "uniform":
		return 1 / float64(t.N)
	case "noisy":
		if i == 0 {
			return t.Share
		}
		return (1 - t.Share) / float64(t.N-1)
	case "zipf":
		var sum float64
		for k := 1; k <= t.N; k++ {
			sum += math.Pow(float64(k), -t.S)
		}
		return math.Pow(float64(i+1), -t.S) / sum
	}
	return 1
}

// draw maps a uniform number in [0,1) to a tenant.
func (t Tenants) draw(u float64) int {
	switch t.Dist {
	case "uniform":
		return min(int(u*float64(t.N)), t.N-1)
	case "noisy":
		if u < t.Share {
			return 0
		}
		return 1 + min(int((u-t.Share)/(1-t.Share)*float64(t.N-1)), t.N-2)
	case "zipf":
		cdf := t.cdf
		if cdf == nil {
			cdf = zipfCDF(t.N, t.S)
		}
		return min(sort.SearchFloat64s(cdf, u), t.N-1)
	}
	return 0
}

func zipfCDF(n int, s float64) []float64 {
	cdf := make([]float64, n)
	var sum float64
	for k := 1; k <= n; k++ {
		sum += math.Pow(float64(k), -s)
		cdf[k-1] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return cdf
}

// FailWindow is a stretch of the run in which a share of the attempts of
// the jobs intended in it fail with a class (failure_windows:): a retry
// storm. It is placed on the run's clock from the measured window's start
// (with phases, the first phase's start). Whether an attempt fails is
// drawn per job and attempt at enqueue, from the job's intended time, so
// every backend (and a driver, whose plan is drawn at enqueue) fails the
// same attempts of the same jobs.
type FailWindow struct {
	From  time.Duration `json:"from_ns"`
	For   time.Duration `json:"for_ns"`
	Share float64       `json:"share"`
	Class string        `json:"class"`
}

// PrepareMix builds the tables the hot path draws tenants from; call it
// once a Config is final (a Config read from JSON has none: draws then
// build them on the fly).
func (c *Config) PrepareMix() {
	for i := range c.Jobs {
		if t := &c.Jobs[i].Tenants; t.Dist == "zipf" && t.cdf == nil {
			t.cdf = zipfCDF(t.N, t.S)
		}
	}
}

// Class is the kind (an index into Jobs) and tenant of job id; -1, 0
// without a job mix.
func (c Config) Class(id string) (kind, tenant int) {
	if len(c.Jobs) == 0 {
		return -1, 0
	}
	jr := JobRand(c.Seed, id, -2)
	u := jr.Float()
	kind = len(c.Jobs) - 1
	for i, k := range c.Jobs {
		if u < k.Share {
			kind = i
			break
		}
		u -= k.Share
	}
	return kind, c.Jobs[kind].Tenants.draw(jr.Float())
}

// Tenants is how many tenants the run's job mix spreads over (1 without one).
func (c Config) Tenants() int {
	n := 1
	for _, k := range c.Jobs {
		n = max(n, k.Tenants.Count())
	}
	return n
}

// TenantOffered is tenant i's expected share of all the run's jobs.
func (c Config) TenantOffered(i int) float64 {
	if len(c.Jobs) == 0 {
		return 1
	}
	var s float64
	for _, k := range c.Jobs {
		if i < k.Tenants.Count() {
			s += k.Share * k.Tenants.Offered(i)
		}
	}
	return s
}

// WindowAt is the index of the failure window a job intended at since
// (from the run's start) falls in; -1: none.
func (c Config) WindowAt(since time.Duration) int {
	for i, w := range c.FailWindows {
		start := c.Warmup + w.From
		if since >= start && since < start+w.For {
			return i
		}
	}
	return -1
}

// MaxRetriesOf is the retries job id, intended at since, is enqueued with:
// its kind's, the run's without a mix, none under the fatal class.
func (c Config) MaxRetriesOf(kind int, since time.Duration) int {
	n := c.Producers.MaxRetries
	if kind >= 0 {
		n = c.Jobs[kind].MaxRetries
		if c.Jobs[kind].FailClass == FailFatal {
			n = 0
		}
	}
	if w := c.WindowAt(since); w >= 0 && c.FailWindows[w].Class == FailFatal {
		n = 0
	}
	return n
}

// MixLayout is how the groups of a run's job split are laid out
// (ledger.Split): one per kind, one per tenant and the quiet tenants
// pooled (every tenant but t0, the noisiest), one per queue of
// store.queues, then the jobs intended before, during and after the
// failure windows.
type MixLayout struct {
	Kinds, Tenants, Queues int
	Storm                  bool
}

// MixLayout is c's layout; N() 0: no split.
func (c Config) MixLayout() MixLayout {
	m := MixLayout{Kinds: len(c.Jobs), Queues: len(c.Store.Queues), Storm: len(c.FailWindows) > 0}
	if t := c.Tenants(); t > 1 {
		m.Tenants = t
	}
	return m
}

// N is the number of groups.
func (m MixLayout) N() int {
	n := m.QueueGroup(0) + m.Queues
	if m.Storm {
		n += 3
	}
	return n
}

// QueueGroup is queue i's group (i indexes store.queues).
func (m MixLayout) QueueGroup(i int) int {
	base := m.Kinds
	if m.Tenants > 0 {
		base += m.Tenants + 1
	}
	return base + i
}

// TenantGroup is tenant t's group; QuietGroup the quiet tenants'.
func (m MixLayout) TenantGroup(t int) int { return m.Kinds + t }

// QuietGroup is the group of every tenant but t0.
func (m MixLayout) QuietGroup() int { return m.Kinds + m.Tenants }

// StormGroup is the group of the jobs intended before (0), during (1) and
// after (2) the failure windows.
func (m MixLayout) StormGroup(i int) int { return m.QueueGroup(m.Queues) + i }

// Classes is the classifier ledger.Split takes for c's layout, t0 the
// run's start.
func (c Config) Classes(t0 time.Time) func(id string, intended time.Time, dst []int) []int {
	m := c.MixLayout()
	var first, last time.Duration = math.MaxInt64, 0
	// Each kind's queue, as an index into store.queues (0: the first).
	queueIndex := make([]int, len(c.Jobs))
	for k, kd := range c.Jobs {
		for i, q := range c.Store.Queues {
			if q.Name == kd.Queue {
				queueIndex[k] = i
			}
		}
	}
	for _, w := range c.FailWindows {
		first, last = min(first, c.Warmup+w.From), max(last, c.Warmup+w.From+w.For)
	}
	return func(id string, intended time.Time, dst []int) []int {
		kind, tenant := c.Class(id)
		if kind >= 0 {
			dst = append(dst, kind)
		}
		if m.Tenants > 0 {
			dst = append(dst, m.TenantGroup(tenant))
			if tenant > 0 {
				dst = append(dst, m.QuietGroup())
			}
		}
		if m.Queues > 0 && kind >= 0 {
			dst = append(dst, m.QueueGroup(queueIndex[kind]))
		}
		if m.Storm {
			since := intended.Sub(t0)
			switch {
			case c.WindowAt(since) >= 0:
				dst = append(dst, m.StormGroup(1))
			case since < first:
				dst = append(dst, m.StormGroup(0))
			case since >= last:
				dst = append(dst, m.StormGroup(2))
			}
		}
		return dst
	}
}

// MixText states the job mix: each kind's share, payload, handler, fail
// share and class, delayed share, retries and tenants.
func (c Config) MixText() string {
	var parts []string
	for _, k := range c.Jobs {
		fail := fmt.Sprintf("fail %g%% %s, max retries %d", k.Fail*100, k.FailClass, k.MaxRetries)
		switch {
		case k.FailClass == FailFatal:
			fail = fmt.Sprintf("fail %g%% fatal (no retries)", k.Fail*100)
		case k.Fail == 0:
			fail = fmt.Sprintf("no failures, max retries %d", k.MaxRetries)
		}
		s := fmt.Sprintf("%s %g%% (payload %dB, handler %s, %s", k.Name, k.Share*100, k.Payload, k.HandlerText, fail)
		if k.Delayed > 0 {
			s += fmt.Sprintf(", %g%% delayed %s", k.Delayed*100, k.DelayText)
		}
		if k.Tenants.Count() > 1 {
			s += ", tenants " + k.Tenants.String()
		}
		if k.Queue != "" {
			s += ", queue " + k.Queue
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, "; ")
}

// WindowsText states the failure windows.
func (c Config) WindowsText() string {
	var parts []string
	for _, w := range c.FailWindows {
		parts = append(parts, w.String())
	}
	return strings.Join(parts, "; ")
}

// String states the window: "30% rate_limit from 1m for 1m".
func (w FailWindow) String() string {
	return fmt.Sprintf("%g%% %s from %s for %s", w.Share*100, w.Class, FormatBound(w.From), FormatBound(w.For))
}

// QueueSpec is one queue of store.queues: its name and its weight under
// the weighted policy. The first queue is the highest priority.
type QueueSpec struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// ParseQueues reads store.queues: names in priority order, each with an
// optional weight ("critical:6 default:3 low:1"; default weight 1).
func ParseQueues(s string) ([]QueueSpec, error) {
	var out []QueueSpec
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		name, w, hasW := strings.Cut(f, ":")
		q := QueueSpec{Name: name, Weight: 1}
		if hasW {
			n, err := strconv.Atoi(w)
			if err != nil || n < 1 || n > 1000 {
				return nil, fmt.Errorf("queue %q: weight %q: allowed: an integer 1..1000", name, w)
			}
			q.Weight = n
		}
		if name == "" || seen[name] || strings.ContainsAny(name, "{}") {
			return nil, fmt.Errorf("queue %q: each queue needs a name of its own, without braces", name)
		}
		seen[name] = true
		out = append(out, q)
	}
	if len(out) == 1 {
		return nil, fmt.Errorf("%q: one queue is the store itself: name two or more, or none", s)
	}
	return out, nil
}

// QueueOf is the queue name a job of kind is enqueued to ("": the store's
// only queue, or the first).
func (c Config) QueueOf(kind int) string {
	if kind < 0 || len(c.Store.Queues) == 0 {
		return ""
	}
	return c.Jobs[kind].Queue
}
