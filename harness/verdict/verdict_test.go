package verdict

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

const cond = "open loop poisson 300 jobs/s, client go-redis, embedded redis 7.0.15 hz 10"

// set builds a result set whose group (cell 1, zset, go-redis) has one run
// per value of metric.
func set(metric string, vals []float64, mut func(*Run)) *Set {
	s := &Set{Source: "s", Scenario: "ci", Complete: true, Env: Env{OS: "linux", Arch: "amd64", CPUs: 2}}
	for i, v := range vals {
		r := Run{ID: "r", Label: "zset", Backend: "zset", Client: "go-redis", Cell: 1, Repeat: i + 1,
			Status: StatusOK, Conditions: cond, Values: map[string]float64{metric: v}}
		if mut != nil {
			mut(&r)
		}
		s.Runs = append(s.Runs, r)
	}
	return s
}

func scaled(vs []float64, k float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = v * k
	}
	return out
}

var noisy6 = []float64{2.1e6, 2.5e6, 1.9e6, 2.3e6, 2.8e6, 2.2e6}

func TestCompareVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		metric    string
		base, new []float64
		opts      CompareOptions
		verdict   string
		exit      int
	}{
		{"same values", "e2e.p99", noisy6, noisy6, CompareOptions{}, NoChange, ExitOK},
		{"44x worse", "e2e.p99", noisy6, scaled(noisy6, 44), CompareOptions{}, Worse, ExitThreshold},
		{"44x worse, 3 repeats", "e2e.p99", noisy6[:3], scaled(noisy6[:3], 44), CompareOptions{}, TooNoisy, ExitOK},
		{"twice as fast", "e2e.p99", noisy6, scaled(noisy6, 0.5), CompareOptions{}, Better, ExitOK},
		{"5% worse, significant, below the floor", "e2e.p99", []float64{100, 101, 102, 103, 104, 105},
			[]float64{106, 107, 108, 109, 110, 111}, CompareOptions{}, NoChange, ExitOK},
		{"5% worse with --fail-on +3%", "e2e.p99", []float64{100, 101, 102, 103, 104, 105},
			[]float64{106, 107, 108, 109, 110, 111}, CompareOptions{FailOn: []Threshold{mustFailOn(t, "e2e.p99:+3%")}}, Worse, ExitThreshold},
		{"throughput down 30%", "throughput", []float64{1000, 1010, 990, 1005, 995, 1000},
			[]float64{700, 710, 690, 705, 695, 700}, CompareOptions{}, Worse, ExitThreshold},
		{"ungated metric worse does not gate", "claim.p99", noisy6, scaled(noisy6, 3), CompareOptions{}, Worse, ExitOK},
		{"moved a lot, overlapping", "e2e.p99", []float64{1, 5, 1, 5, 1, 5}, []float64{1, 6, 2, 6, 1, 6}, CompareOptions{}, TooNoisy, ExitOK},
		{"zero lost both sides, 2 repeats", "lost", []float64{0, 0}, []float64{0, 0}, CompareOptions{}, NoChange, ExitOK},
		{"counted +5%, one repeat", "cmds_per_job", []float64{20}, []float64{21}, CompareOptions{}, Worse, ExitThreshold},
		{"counted +3%, one repeat, within the floor", "cmds_per_job", []float64{20}, []float64{20.6}, CompareOptions{}, NoChange, ExitOK},
		{"counted +5%, repeats agree", "cmds_per_job", []float64{20, 20.1}, []float64{21, 21.1}, CompareOptions{}, Worse, ExitThreshold},
		// Base repeats 4% apart: a change of 5% is within twice that.
		{"counted +5%, repeats 4% apart", "cmds_per_job", []float64{19.6, 20.4}, []float64{21, 21}, CompareOptions{}, NoChange, ExitOK},
		{"counted +4%, backend declares 5% noise", "cmds_per_job", []float64{20}, []float64{20.8}, CompareOptions{}, NoChange, ExitOK},
		{"counted +6%, backend declares 5% noise", "cmds_per_job", []float64{20}, []float64{21.2}, CompareOptions{}, Worse, ExitThreshold},
		// The base judges: a candidate that declares more noise, or whose
		// own repeats spread wider, is held to the base's limit.
		{"counted +4%, only the candidate declares 5% noise", "cmds_per_job", []float64{20}, []float64{20.8}, CompareOptions{}, Worse, ExitThreshold},
		{"counted +5%, only the candidate's repeats 8% apart", "cmds_per_job", []float64{20, 20}, []float64{20.2, 21.8}, CompareOptions{}, Worse, ExitThreshold},
		// A path probe window is fixed work: the spread a backend declares
		// for its whole runs does not widen it.
		{"path +3%, backend declares 5% noise", "path.pop.instructions", []float64{200000}, []float64{206000}, CompareOptions{}, Worse, ExitThreshold},
		{"path +1.5%, within its floor", "path.pop.instructions", []float64{200000}, []float64{203000}, CompareOptions{}, NoChange, ExitOK},
		{"record bytes +1.9%", "record_bytes_per_job", []float64{840}, []float64{856}, CompareOptions{}, Worse, ExitThreshold},
		{"one more allocation on 46", "client_allocs_per_claimed_job", []float64{45.92}, []float64{46.92}, CompareOptions{}, Worse, ExitThreshold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var baseMut, newMut func(*Run)
			if strings.Contains(tc.name, "declares") {
				newMut = func(r *Run) { r.CountNoise = 0.05 }
				if !strings.Contains(tc.name, "only the candidate") {
					baseMut = newMut
				}
			}
			c := Compare(set(tc.metric, tc.base, baseMut), set(tc.metric, tc.new, newMut), tc.opts)
			if len(c.Pairs) != 1 || len(c.Pairs[0].Rows) != 1 {
				t.Fatalf("pairs %+v", c.Pairs)
			}
			r := c.Pairs[0].Rows[0]
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %q (%s), want %q; row %+v", r.Verdict, r.Note, tc.verdict, r)
			}
			if got := c.ExitCode(); got != tc.exit {
				t.Errorf("exit %d, want %d: %s", got, tc.exit, c.Headline())
			}
			if tc.exit == ExitThreshold && !strings.Contains(c.Headline(), tc.metric) {
				t.Errorf("headline %q does not name %s", c.Headline(), tc.metric)
			}
		})
	}
}

func mustFailOn(t *testing.T, s string) Threshold {
	t.Helper()
	th, err := ParseFailOn(s)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestCompareRefusesAndCorrectness(t *testing.T) {
	rate := func(r *Run) { r.Conditions = strings.Replace(r.Conditions, "300 jobs/s", "500 jobs/s", 1) }
	redis := func(r *Run) { r.Conditions = strings.Replace(r.Conditions, "7.0.15", "7.2.4", 1) }
	lost := func(r *Run) { r.Ledger.Lost = 3 }
	for _, tc := range []struct {
		name  string
		mut   func(*Run)
		force bool
		exit  int
		want  string
	}{
		{"rate differs", rate, false, ExitUsage, `"open loop poisson 300 jobs/s" vs "open loop poisson 500 jobs/s"`},
		{"redis differs", redis, false, ExitUsage, "7.2.4"},
		{"forced", rate, true, ExitOK, "OK"},
		{"lost job", lost, false, ExitCorrectness, "3 lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(set("e2e.p99", noisy6, nil), set("e2e.p99", noisy6, tc.mut), CompareOptions{Force: tc.force})
			if got := c.ExitCode(); got != tc.exit {
				t.Errorf("exit %d, want %d", got, tc.exit)
			}
			if h := c.Headline(); !strings.Contains(h, tc.want) {
				t.Errorf("headline %q, want it to contain %q", h, tc.want)
			}
		})
	}
	other := set("e2e.p99", noisy6, nil)
	other.Env.CPUs = 8
	if c := Compare(set("e2e.p99", noisy6, nil), other, CompareOptions{}); !strings.Contains(c.Headline(), "machine") {
		t.Errorf("machine difference not named: %s", c.Headline())
	}
	inc := set("e2e.p99", noisy6, nil)
	inc.Complete = false
	if c := Compare(inc, set("e2e.p99", noisy6, nil), CompareOptions{}); c.ExitCode() != ExitUsage {
		t.Errorf("incomplete base: exit %d", c.ExitCode())
	}
}

func TestSummarize(t *testing.T) {
	m, _ := Lookup("e2e.p99")
	for _, tc := range []struct {
		n    int
		ci   bool
		note string
	}{{1, false, "at least 6"}, {5, false, "at least 6"}, {6, true, ""}, {10, true, ""}} {
		vs := make([]float64, tc.n)
		for i := range vs {
			vs[i] = float64(100 + i)
		}
		st := Summarize(m, vs)
		if (st.CI != nil) != tc.ci || !strings.Contains(st.Note, tc.note) {
			t.Errorf("n=%d: CI %v note %q", tc.n, st.CI, st.Note)
		}
		if st.CI != nil && (st.CI.Lo > st.Median || st.CI.Hi < st.Median || st.CI.Confidence < 0.95) {
			t.Errorf("n=%d: CI %+v around %g", tc.n, st.CI, st.Median)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	for _, tc := range []struct {
		expr, err string
		limit     float64
		relative  bool
	}{
		{expr: "e2e.p99 < 20ms", limit: 20e6},
		{expr: "throughput > 10000", limit: 10000},
		{expr: "redis_cpu_us_per_job <= 40", limit: 40},
		{expr: "e2e.p99 < +10%", relative: true},
		{expr: "throughput > -5%", relative: true},
		{expr: "e2e.p99 < 20", err: "is not a duration"},
		{expr: "e2e.p99<20ms", err: "want three parts"},
		{expr: "p99 < 20ms", err: `unknown metric "p99"`},
		{expr: "e2e.p99 ~ 20ms", err: "is not an operator"},
		{expr: "throughput > +5%", err: "sign -"},
		{expr: "e2e.p99 > +10%", err: "< or <="},
		{expr: "throughput > lots", err: "is not a number"},
		{expr: "recovery: catchup_s < 30", limit: 30},
		{expr: "overload: completed_per_s > 0.95 capacity", limit: 0.95},
		{expr: "burst: e2e.p99 < 2s", limit: 2e9},
		{expr: "recovery: catchup < 30", err: `"catchup" is not a phase metric`},
		{expr: "recovery: catchup_s < soon", err: "is not a value of catchup_s"},
		{expr: "recovery: catchup_s < 30 capacity", err: "only a rate takes a multiple"},
		{expr: "recovery: catchup_s ~ 30", err: "is not an operator"},
		{expr: "recovery: < 30", err: "want a phase, then METRIC OP VALUE"},
		{expr: "burst: e2e.p99 < 2", err: "is not a duration"},
	} {
		th, err := ParseThreshold(tc.expr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.expr) {
				t.Errorf("%q: error %v, want one naming the expression and %q", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil || th.Relative != tc.relative || th.Limit != tc.limit {
			t.Errorf("%q: %+v, %v", tc.expr, th, err)
		}
	}
	for _, tc := range []struct{ expr, err string }{
		{"e2e.p99:+10%", ""}, {"throughput:-5%", ""}, {"e2e.p99:10%", "signed percentage"},
		{"e2e.p99:-10%", "sign +"}, {"e2e.p99", "no ':'"}, {"nope:+1%", "unknown metric"}, {"e2e.p99:+0%", "positive"},
	} {
		_, err := ParseFailOn(tc.expr)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("--fail-on %q: %v, want %q", tc.expr, err, tc.err)
		}
	}
	if _, err := ParseThresholds("scenarios/ci.yaml", []string{"e2e.p99 < 20ms", "bad"}); err == nil ||
		!strings.Contains(err.Error(), "scenarios/ci.yaml: thresholds[1]") {
		t.Errorf("block error %v does not name the file and index", err)
	}
}

// TestEvaluatePhases: a phase-scoped threshold holds each backend's
// median over its repeats to the limit (times each run's capacity for N
// capacity), a catch-up that never came crosses "< N", references and
// runs without the phase are left out, and a phase no run has is
// unchecked.
func TestEvaluatePhases(t *testing.T) {
	never, quick, slow := -1.0, 12.0, 40.0
	run := func(label string, repeat int, catch *float64, done float64) summary.RunSummary {
		r := summary.RunSummary{ID: fmt.Sprint(label, repeat), Label: label, Cell: 1, Repeat: repeat, Kind: "job store", Status: summary.StatusOK}
		r.Config.Producers.Capacity = 1000
		r.Phases = []summary.PhaseResult{{Name: "overload", CompletedPerS: done}, {Name: "recovery", CatchUpS: catch}}
		return r
	}
	floor := run("floor", 1, &never, 10)
	floor.Kind = "reference"
	runs := []summary.RunSummary{run("a", 1, &quick, 990), run("a", 2, &slow, 960), run("a", 3, &quick, 980),
		run("b", 1, &never, 900), floor}
	parse := func(e string) Threshold {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		return th
	}
	for _, tc := range []struct {
		expr      string
		crossed   []string
		unchecked bool
	}{
		{"recovery: catchup_s < 30", []string{"b"}, false},
		{"overload: completed_per_s > 0.95 capacity", []string{"b"}, false},
		{"overload: completed_per_s >= 0.98 capacity", []string{"b"}, false},
		{"overload: completed_per_s > 0.985 capacity", []string{"a", "b"}, false},
		{"soak: catchup_s < 30", nil, true},
	} {
		cs := EvaluatePhases([]Threshold{parse(tc.expr)}, runs)
		var got []string
		for _, c := range cs {
			if c.Unchecked != tc.unchecked {
				t.Errorf("%q: %+v", tc.expr, c)
			}
			if !c.Unchecked {
				got = append(got, c.Group.Backend)
			}
		}
		if !slices.Equal(got, tc.crossed) || tc.unchecked && len(cs) != 1 {
			t.Errorf("%q: crossed by %v, want %v (%+v)", tc.expr, got, tc.crossed, cs)
		}
	}
}
