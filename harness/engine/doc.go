// Package engine runs one run of a scenario against one store: producers
// (open or closed loop), workers in this process and in `aebench worker`
// processes behind one Workers interface, the maintenance loops (recoverer
// and mover), the once-a-second collector with its histograms and time
// series, the fault schedule, and the ledger that checks every job. It
// knows nothing of Redis servers, files or tables: package runner gives it
// a store and hooks, and turns its Result into summary.json and plots.
//
// A store whose jobs run in its own worker loop in this process
// (jobstore.Serving: asynq's Server) is served in runs without faults
// whose workers are all in process (one loop for them all) or all worker
// processes (one loop in each): its loop calls the engine's handler, as
// the system's users run it, and the scenario's worker concurrency and
// claim and ack batches do not apply (served.go). With faults, or workers
// both in and out of process, it goes through Claim like every store, so
// that a worker can be crashed mid-job.
package engine
