package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/harness/summary"
)

// TestCeleryETADuplicates runs scenarios/celery-eta.yaml (3 s measured)
// and holds it to the incident it reproduces: with visibility_timeout
// shorter than every countdown, Celery runs delayed tasks more than once,
// and each extra start is one Celery itself flagged as a redelivery; with
// it longer, none. Nothing is lost either way. The two settings run as
// parallel subtests, each its own run.
func TestCeleryETADuplicates(t *testing.T) {
	if why, err := driver.Missing(context.Background(), driver.Celery); err != nil {
		t.Fatal(err)
	} else if why != "" {
		t.Skip(why)
	}
	src, err := os.ReadFile("../../scenarios/celery-eta.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "duration: 6s", "duration: 3s", 1)
	for _, tc := range []struct {
		label, other string
		dups         bool
	}{{"celery-vt3s", "celery-vt60s", true}, {"celery-vt60s", "celery-vt3s", false}} {
		t.Run(tc.label, func(t *testing.T) {
			t.Parallel()
			var keep []string
			for _, l := range strings.Split(text, "\n") {
				if !strings.Contains(l, "label: "+tc.other+",") {
					keep = append(keep, l)
				}
			}
			outcome, out := runScenarioText(t, "celery-eta.yaml", strings.Join(keep, "\n"))
			if len(outcome.Summary.Runs) != 1 {
				t.Fatalf("%d runs\n%s", len(outcome.Summary.Runs), out)
			}
			r := outcome.Summary.Runs[0]
			l := r.Ledger
			if r.Status != summary.StatusOK || l.Lost != 0 || l.Completed == 0 {
				t.Fatalf("status %s (%s), lost %d, completed %d\n%s", r.Status, r.Error, l.Lost, l.Completed, out)
			}
			if got := l.DuplicateStarts > 0; got != tc.dups || l.DuplicateStarts != r.Counters.Redelivered {
				t.Errorf("duplicate starts %d, redeliveries Celery flagged %d; want duplicates %v, the two equal\n%s",
					l.DuplicateStarts, r.Counters.Redelivered, tc.dups, out)
			}
		})
	}
}
