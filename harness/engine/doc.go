// Package engine runs one run of a scenario against one store: producers
// (open or closed loop), workers in this process and in `aebench worker`
// processes behind one Workers interface, the maintenance loops (recoverer
// and mover), the once-a-second collector with its histograms and time
// series, the fault schedule, and the ledger that checks every job. It
// knows nothing of Redis servers, files or tables: package runner gives it
// a store and hooks, and turns its Result into summary.json and plots.
package engine
