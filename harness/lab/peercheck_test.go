package lab

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestPeerCheckHelpers(t *testing.T) {
	for _, tc := range []struct{ addr, pw, want string }{
		{"127.0.0.1:4000", "", "redis://127.0.0.1:4000"},
		{"127.0.0.1:4000", "s3cr:t", "redis://:s3cr%3At@127.0.0.1:4000"},
	} {
		if got := redisURL(tc.addr, tc.pw); got != tc.want {
			t.Errorf("redisURL(%q, %q) = %q, want %q", tc.addr, tc.pw, got, tc.want)
		}
	}
	if got := rangeOf([]float64{1.2, 0.95, 1.04}); got != "0.95-1.20" {
		t.Errorf("rangeOf = %q", got)
	}
	if got := numberList([]float64{0.912, 1.1}, 2); got != "0.91 1.10" {
		t.Errorf("numberList = %q", got)
	}
	if got := lastLineOf([]byte("a\nb\n")); got != "b" {
		t.Errorf("lastLineOf = %q", got)
	}
}

func TestPeerVerdict(t *testing.T) {
	for _, tc := range []struct {
		name      string
		jobs, cpu []float64
		code      int
		word      string
	}{
		{"every round", []float64{0.95, 1.0, 1.1}, []float64{1.0, 1.1, 0.9}, exitOK, "in every round"},
		{"median, not every round", []float64{0.85, 0.95, 1.0}, []float64{1.0, 1.0, 1.0}, exitOK, "some rounds fell short"},
		{"median short, some rounds met", []float64{0.80, 0.88, 1.07}, []float64{1.0, 1.1, 1.3}, exitThresh, "some rounds met"},
		{"no round met", []float64{0.69, 0.78, 0.85}, []float64{1.0, 1.0, 1.0}, exitThresh, "in every round"},
		{"CPU above in every round", []float64{1.0, 1.0, 1.0}, []float64{1.21, 1.3, 1.4}, exitThresh, "BELOW the targets"},
	} {
		word, code := peerVerdict(tc.jobs, tc.cpu)
		if code != tc.code || !strings.Contains(word, tc.word) {
			t.Errorf("%s: %q exit %d, want exit %d with %q", tc.name, word, code, tc.code, tc.word)
		}
	}
}

func TestBacklogHeld(t *testing.T) {
	const head = "run,backend,label,cell,second,phase,enqueued,completed,backlog\n"
	for _, tc := range []struct {
		name, csv string
		ok        bool
	}{
		{"held", head + "f,f,f,1,1,warmup,0,30000,170000\nf,f,f,1,2,measure,0,30000,140000\n", true},
		{"ran dry in the window", head + "f,f,f,1,1,warmup,0,30000,30000\nf,f,f,1,2,measure,0,30000,0\n", false},
		{"dry only in the drain", head + "f,f,f,1,2,measure,0,30000,10\nf,f,f,1,3,drain,0,10,0\n", true},
		{"no backlog column", "run,phase\nf,measure\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "timeseries.csv")
			if err := os.WriteFile(p, []byte(tc.csv), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := backlogHeld(p); (err == nil) != tc.ok {
				t.Errorf("backlogHeld = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestPeerRoundsPrint: the medians decide; the fastest round of each side
// is printed beside them, from different rounds when that is where they
// were.
func TestPeerRoundsPrint(t *testing.T) {
	var r peerRounds
	for _, x := range [][2]float64{{100, 95}, {120, 90}, {110, 118}} { // plain, aebench jobs/s
		r.add(plainResult{JobsPS: x[0], CPU: 10}, plainResult{JobsPS: x[1], CPU: 11}, plainResult{JobsPS: x[0], CPU: 10})
	}
	var b strings.Builder
	code := r.print(&b, peerPairs[1])
	out := b.String()
	if code != exitOK { // median ratio 0.95, CPU 1.1x
		t.Errorf("exit %d, want ok:\n%s", code, out)
	}
	if !strings.Contains(out, "fastest round of each side (not judged): plain 120, aebench 118 jobs/s: 0.98x") {
		t.Errorf("no fastest-round line:\n%s", out)
	}
}

// TestPlainProgramsGetHarnessGC: the plain programs run with the GC
// settings aebench runs with, not Go's default.
func TestPlainProgramsGetHarnessGC(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment: it passes through as it is")
	}
	old := debug.SetGCPercent(2000)
	defer debug.SetGCPercent(old)
	if env := strings.Join(gcEnv(), " "); !strings.Contains(env, "GOGC=2000") {
		t.Errorf("gcEnv() = %q; want GOGC=2000", env)
	}
}
