// Package stats holds the statistics block of summary.json (schema version
// 2): for each (cell, backend, client) group and each metric of the
// catalog, the median over the repeats and its 95% confidence interval. It
// imports nothing of aebench, so the summary schema can embed the block
// while package verdict, which computes it, reads that schema.
package stats

// SchemaVersion is the summary.json schema version that carries a Block.
// Version 1 files have none; readers compute it from the runs.
const SchemaVersion = 2

// Confidence is the level of every interval in a Block.
const Confidence = 0.95

// Block is summary.json's "statistics".
type Block struct {
	// Method says how the numbers were computed, for a reader without
	// this code.
	Method     string  `json:"method"`
	Confidence float64 `json:"confidence"`
	Groups     []Group `json:"groups"`
}

// Group is the repeats of one backend in one matrix cell with one client.
type Group struct {
	Cell int      `json:"cell"`
	Vary []string `json:"vary,omitempty"`
	// Backend is the backend's label (its name unless the scenario gave a
	// label); BackendName the registered name.
	Backend     string `json:"backend"`
	BackendName string `json:"backend_name"`
	// Kind is the backend's kind (job store, reference, peer); a reference
	// never gates a threshold or a comparison.
	Kind   string `json:"kind,omitempty"`
	Client string `json:"client"`
	// Runs are the ids of the runs the statistics are over: the group's
	// runs that measured a full window (status ok or failed).
	Runs    []string `json:"runs"`
	Metrics []Stat   `json:"metrics"`
}

// Key names the group the way compare matches groups.
func (g Group) Key() Key { return Key{Cell: g.Cell, Backend: g.Backend, Client: g.Client} }

// Key identifies a group across two result sets.
type Key struct {
	Cell    int    `json:"cell"`
	Backend string `json:"backend"`
	Client  string `json:"client"`
}

// Metric returns the group's statistic for a metric, if it was measured.
func (g Group) Metric(name string) (Stat, bool) {
	for _, s := range g.Metrics {
		if s.Metric == name {
			return s, true
		}
	}
	return Stat{}, false
}

// Stat is one metric over a group's repeats.
type Stat struct {
	Metric string `json:"metric"`
	// Unit of Median, CI and Values: ns, jobs/s, µs, cmds, B, jobs.
	Unit string `json:"unit"`
	// Better is "higher" or "lower".
	Better string  `json:"better"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	// CI is the 95% confidence interval of the median; absent when there
	// are too few repeats for one (Note says how many it takes).
	CI *Interval `json:"ci95,omitempty"`
	// Values are the repeats, in run order.
	Values []float64 `json:"values"`
	Note   string    `json:"note,omitempty"`
}

// Interval is a confidence interval; Confidence is the level actually
// reached (order statistics give at least the one asked for).
type Interval struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
}
