// Package conditions is the full set of conditions of one run (Config):
// the load, the workers, the store's settings, the Redis, the time base
// and the fault schedule, after a scenario's defaults and matrix are
// resolved, with the one-line statements printed beside every number and
// the scaling of simulated time. It is plain data: package scenario fills
// it from a file, the engine runs it, and the results carry it, without
// linking the backends the scenario checks a file against.
package conditions
