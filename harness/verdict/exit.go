package verdict

// Exit codes of every aebench command, in one place. A run or compare that
// has several outcomes exits with the first that applies in this order:
// 3 (the numbers cannot be trusted at all), 1, 2, 5 (with
// --strict-health), 4, 130, 0.
const (
	// ExitOK: every run passed and no threshold was crossed.
	ExitOK = 0
	// ExitCorrectness: a run failed its correctness checks: any lost
	// (unless the scenario expects it), unexpected or early job.
	ExitCorrectness = 1
	// ExitUsage: a usage or configuration error, including a comparison
	// refused because conditions differ or a set is incomplete (without
	// --force).
	ExitUsage = 2
	// ExitInfra: an infrastructure error (no Redis, a Redis that stopped
	// answering, unreadable results).
	ExitInfra = 3
	// ExitThreshold: a threshold was crossed, or compare found a
	// regression on a gated metric.
	ExitThreshold = 4
	// ExitSuspect: with --strict-health, a run the verdict rests on was
	// suspect (package health: the machine, not the store, may have set
	// its numbers). A CI job retries it rather than fail the build.
	ExitSuspect = 5
	// ExitInterrupted: stopped by Ctrl-C; what was measured is written.
	ExitInterrupted = 130
)

// ExitCode is the comparison's exit code: correctness first, then a
// refused or incomplete comparison, then a regression.
func (c *Comparison) ExitCode() int {
	switch {
	case len(c.Incorrect) > 0:
		return ExitCorrectness
	case c.hardRefusal():
		return ExitUsage
	case !c.Forced && (len(c.Refused) > 0 || len(c.Incomplete) > 0 || len(c.OnlyBase) > 0 || len(c.OnlyNew) > 0):
		return ExitUsage
	case len(c.Pairs) == 0:
		return ExitUsage
	case c.StrictHealth && len(c.Suspect) > 0:
		return ExitSuspect
	case len(c.Regressions) > 0:
		return ExitThreshold
	}
	return ExitOK
}

func (c *Comparison) hardRefusal() bool {
	for _, r := range c.Refused {
		if r.Hard {
			return true
		}
	}
	return false
}
