package jobstore

// Kind says what a backend is for. It is written here, below the backends,
// so that the results (package verdict) can tell a reference from a job
// store without linking a backend.
type Kind string

// The kinds of backend. Only a calibration backend is treated apart: its
// numbers measure the harness, not a strategy, and it needs no Redis.
const (
	KindJobStore    Kind = "job store"
	KindReference   Kind = "reference"
	KindCalibration Kind = "calibration"
	KindPeer        Kind = "peer"
)
