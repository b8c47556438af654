package runner

import (
	"fmt"
	"io"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/summary"
)

// ledgerNotes prints, under the latency table, what the lost column does
// not say: the store's state of each lost job (read back before it was
// called lost), the jobs the drain cut off, and the outcomes taken from a
// read-back because their events never came.
func ledgerNotes(w io.Writer, runs []summary.RunSummary, repeats int) {
	for _, r := range runs {
		l := r.Ledger
		if l.Lost > 0 {
			fmt.Fprintf(w, "note: %s: lost %d, the store shows them %s\n", runName(r, repeats), l.Lost, engine.FormatStates(l.LostStates))
		}
		if l.UnfinishedAtDrain > 0 {
			hint := "raise drain"
			if wc := r.Config.Workers; wc.Lease+wc.RecoveryInterval > r.Config.Drain {
				// An expired lease is taken back only after lease +
				// recovery_interval: a longer drain alone may not do.
				hint = fmt.Sprintf("raise drain, above lease %s + recovery_interval %s, so that a job a crashed worker held can come back within it",
					wc.Lease, wc.RecoveryInterval)
			}
			fmt.Fprintf(w, "note: %s: %d job(s) unfinished at drain (still queued or running where the store will reach them when the drain of %s ended; not lost: %s)\n",
				runName(r, repeats), l.UnfinishedAtDrain, r.Config.Drain, hint)
		}
		if r.StallNote != "" {
			fmt.Fprintf(w, "note: %s: %s\n", runName(r, repeats), r.StallNote)
		}
		if r.AuditError != "" {
			fmt.Fprintf(w, "note: %s: the store's audit failed: %s\n", runName(r, repeats), r.AuditError)
		}
		if l.SettledByReadBack > 0 {
			fmt.Fprintf(w, "note: %s: %d outcome(s) settled by reading the record back (events cut off by a kill, a lost reply or the drain)\n",
				runName(r, repeats), l.SettledByReadBack)
		}
	}
}
