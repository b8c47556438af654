package engine

// This file is the worker-process protocol, both ends: a coordinator
// starts `aebench worker` with the ProcessConfig in the environment, the
// worker writes one JSON event per line on stdout and reads "arm <crash
// point>" lines on stdin. A remote worker (`aebench worker --coordinator
// HOST:PORT`) speaks the same over one TCP connection, after a first line
// from the coordinator that holds its ProcessConfig (remote.go). Every
// second, and once at the end, a worker sends the histograms it recorded
// (claim, handler, complete, dispatch...) in HdrHistogram's compressed
// base64 form, which the coordinator merges into the run's: in the
// interval of the run's interval log it arrives in, up to a second after
// the values were taken (the totals are exact; an .hlog interval may hold
// a worker's previous second).

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
)

// Environment variables of a worker process: WorkerEnv=1 makes a binary
// (aebench, or a test binary's TestMain) run WorkerMain instead of its own
// main; WorkerConfigEnv carries the ProcessConfig as JSON.
// A remote worker the run starts itself (workers.remote_hosts) gets
// WorkerCoordinatorEnv and WorkerBindEnv instead of a configuration: it
// connects like `aebench worker --coordinator`.
const (
	WorkerEnv            = "AEBENCH_WORKER"
	WorkerConfigEnv      = "AEBENCH_WORKER_CONFIG"
	WorkerCoordinatorEnv = "AEBENCH_WORKER_COORDINATOR"
	WorkerBindEnv        = "AEBENCH_WORKER_BIND"
)

// ProcessConfig is what a coordinator passes to an `aebench worker` process:
// the run's conditions and where its queue lives.
type ProcessConfig struct {
	Config   conditions.Config `json:"config"`
	Queue    string            `json:"queue"`
	Addr     string            `json:"addr"` // the Redis, or the network-fault proxy
	Password string            `json:"password,omitempty"`
	Cluster  bool              `json:"cluster,omitempty"` // Addr is a Redis Cluster node
	Index    int               `json:"index"`             // worker index in the run
	Gen      int               `json:"gen"`               // replacement count
	// WarmEnd and WindowEnd (unix ns, the coordinator's clock) bound the
	// measured window: the worker records its histograms inside it only.
	// A worker on another host reads them on its own clock, so its clock's
	// offset shifts its cut (NTP keeps it to milliseconds).
	WarmEnd   int64 `json:"warm_end"`
	WindowEnd int64 `json:"window_end"`
	// Serve: run the store's own worker loop (jobstore.Serving; served.go)
	// instead of aebench's Claim loop. Set for runs without faults whose
	// workers are all processes.
	Serve bool `json:"serve,omitempty"`
}

// workerEvent is one line a worker process writes to stdout.
type workerEvent struct {
	E      string `json:"e"` // claimed, started, completed, failed, fenced, unknown, done, point, ready, calls, hist, err
	ID     string `json:"id,omitempty"`
	A      int    `json:"a,omitempty"` // attempt
	T      int64  `json:"t,omitempty"` // unix ns
	Tok    string `json:"tok,omitempty"`
	Status int    `json:"st,omitempty"`
	RunAt  int64  `json:"ra,omitempty"`
	Point  string `json:"p,omitempty"`
	Msg    string `json:"msg,omitempty"` // hist: the encoded histogram of tag Point
	H      int64  `json:"h,omitempty"`   // completed: the handler's end, unix ns (for the ack wait)
	// S, on a driver's completed or failed event, is the attempt's start
	// (unix ns) when no started event was sent for it: without faults a
	// driver may send one event a job (docs/drivers.md).
	S int64 `json:"s,omitempty"`
	// Dead is a driver's failed event (docs/drivers.md): true when the
	// job was dead-lettered, false when a retry is due at RunAt.
	Dead *bool `json:"dead,omitempty"`
}

// pipeEvents writes a worker's events as JSON lines, flushed one by one: a
// SIGKILL must find every event of the work done before it on the pipe.
type pipeEvents struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	// measuring is the worker engine's measured window: a started job's
	// handler, dispatch and calls are recorded inside it (the coordinator
	// alone knows a job's intended and due times).
	measuring func(time.Time) bool
}

func newPipeEvents(w io.Writer) *pipeEvents {
	bw := bufio.NewWriter(w)
	return &pipeEvents{w: bw, enc: json.NewEncoder(bw)}
}

func (p *pipeEvents) send(ev workerEvent) {
	p.mu.Lock()
	_ = p.enc.Encode(ev)
	_ = p.w.Flush()
	p.mu.Unlock()
}

// sendHists sends every non-empty histogram of set, encoded, and resets it.
func (p *pipeEvents) sendHists(set *hist.Set) {
	for t, h := range set {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			continue
		}
		p.send(workerEvent{E: "hist", Point: hist.Tag(t).String(), Msg: string(b), T: time.Now().UnixNano()})
		h.Reset()
	}
}

func (p *pipeEvents) Claimed(cs []jobstore.Claimed, at time.Time) {
	for _, c := range cs {
		p.send(workerEvent{E: "claimed", ID: c.Lease.JobID, A: c.Lease.Attempt, T: at.UnixNano(), Tok: c.Lease.Token})
	}
}

func (p *pipeEvents) Started(id string, attempt int, at time.Time) ledger.JobTimes {
	p.send(workerEvent{E: "started", ID: id, A: attempt, T: at.UnixNano()})
	return ledger.JobTimes{Known: p.measuring != nil, Measured: p.measuring != nil && p.measuring(at)}
}

func (p *pipeEvents) Completed(id string, attempt int, at time.Time) ledger.JobTimes {
	p.send(workerEvent{E: "completed", ID: id, A: attempt, T: at.UnixNano()})
	return ledger.JobTimes{}
}

// completedAfter is Completed with the handler's end, from which the
// coordinator records the job's ack wait.
func (p *pipeEvents) completedAfter(id string, attempt int, at, handlerEnd time.Time) ledger.JobTimes {
	p.send(workerEvent{E: "completed", ID: id, A: attempt, T: at.UnixNano(), H: handlerEnd.UnixNano()})
	return ledger.JobTimes{}
}

func (p *pipeEvents) Failed(id string, attempt int, res jobstore.FailResult, at time.Time) {
	p.send(workerEvent{E: "failed", ID: id, A: attempt, T: at.UnixNano(), Status: int(res.Status), RunAt: res.RunAt.UnixNano()})
}

func (p *pipeEvents) Fenced(id string, attempt int, at time.Time) {
	p.send(workerEvent{E: "fenced", ID: id, A: attempt, T: at.UnixNano()})
}

func (p *pipeEvents) Recovered(jobstore.RecoverResult, time.Time) {}

func (p *pipeEvents) Unknown(id string, attempt int, token string, at time.Time) {
	p.send(workerEvent{E: "unknown", ID: id, A: attempt, Tok: token, T: at.UnixNano()})
}
