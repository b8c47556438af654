package asynq

// What asynq does that the contract does not expect, as observed by the
// conformance suite (see TestConformance and the package doc).
const (
	findingPush = "push, not pull: asynq's server dequeues a task at its processor's next poll (task_check_interval, " +
		"10 ms in the test) and hands it to a handler, so a Claim with Wait 0 right after Enqueue finds nothing; " +
		"the case's first Claim returns empty"
	findingPrefetch = "asynq's server dequeues up to Concurrency tasks whether or not a Claim is waiting: " +
		"prefetched tasks are Active in asynq, so Stats counts them InProgress, not Due"
	findingAsyncDone = "Complete hands the outcome to the task's handler, and asynq's processor marks the task done " +
		"after the handler returns: a Get right after Complete can read it still Active (InProgress)"
	findingSeconds = "asynq keeps ProcessAt in whole Unix seconds (the adapter rounds it up so a job never starts early): " +
		"Get's RunAt is not the RunAt enqueued"
)

// Findings returns the conformance cases asynq v0.26.0 does not pass
// although it declares what they need, each with what asynq does instead;
// conformance.Backend.Findings skips them with that text. Every other case
// passes or is skipped for a capability asynq does not declare
// (TestConformance checks both).
func Findings() map[string]string {
	return map[string]string{
		"FIFOEqualRunAt":        findingPush,
		"ConcurrentClaimers":    findingPush,
		"DuplicateID":           findingPush,
		"BadInput":              findingPush + " (the Claim after the refused calls gets one of the two jobs)",
		"GetRoundTrip":          findingSeconds + "; " + findingPush,
		"CompletedExpires":      findingPush,
		"BatchCompletedExpires": findingAsyncDone,
		"Cancel":                findingPush,
		"StatsAgree":            findingPush,
		"RedisUnreachable":      findingPush,
		"RedisOutOfMemory":      findingPush,
		"BulkEnqueue":           findingPrefetch,
	}
}
