// Package analysis finishes a plan's summary before any output reads it:
// the ratios of every run to the references of its cell, the harness
// floor, the calibration's overhead, the scaling curve over cluster sizes,
// the highest rate that keeps an SLO, and the scenario's thresholds. It
// computes; package output formats.
//
// The ratios put every backend of a cell beside the references measured in
// the same cell of the same plan, on the same machine under the same load:
// the floor (the least a job with a record costs on this Redis) and the
// best strategy of the cell (the job store with the most jobs/s, counted
// up to the offered rate, ties within 1% going to the least Redis CPU per
// job: in an open loop every store that keeps up completes the offered
// rate, and one that fell behind completes more while it catches up). Peers (asynq, BullMQ,
// Sidekiq, RQ) are measured against both, as the strategies are. Absolute
// numbers move with the machine and whatever else runs on it; ratios
// within one run move much less.
package analysis
