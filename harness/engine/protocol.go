package engine

// This file is the worker-process protocol, both ends: a coordinator
// starts `aebench worker` with the ProcessConfig in the environment, the
// worker writes one JSON event per line on stdout and reads "arm <crash
// point>" lines on stdin.

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/jobstore"
)

// Environment variables of a worker process: WorkerEnv=1 makes a binary
// (aebench, or a test binary's TestMain) run WorkerMain instead of its own
// main; WorkerConfigEnv carries the ProcessConfig as JSON.
const (
	WorkerEnv       = "AEBENCH_WORKER"
	WorkerConfigEnv = "AEBENCH_WORKER_CONFIG"
)

// ProcessConfig is what a coordinator passes to an `aebench worker` process:
// the run's conditions and where its queue lives.
type ProcessConfig struct {
	Config   scenario.Config `json:"config"`
	Queue    string          `json:"queue"`
	Addr     string          `json:"addr"` // the Redis, or the network-fault proxy
	Password string          `json:"password,omitempty"`
	Index    int             `json:"index"` // worker index in the run
	Gen      int             `json:"gen"`   // replacement count
}

// workerEvent is one line a worker process writes to stdout.
type workerEvent struct {
	E      string `json:"e"` // claimed, started, completed, failed, fenced, unknown, done, point, ready, calls
	ID     string `json:"id,omitempty"`
	A      int    `json:"a,omitempty"` // attempt
	T      int64  `json:"t,omitempty"` // unix ns
	Tok    string `json:"tok,omitempty"`
	Status int    `json:"st,omitempty"`
	RunAt  int64  `json:"ra,omitempty"`
	Point  string `json:"p,omitempty"`
	Msg    string `json:"msg,omitempty"`
	H      int64  `json:"h,omitempty"` // completed: the handler's end, unix ns (for the ack wait)
}

// pipeEvents writes a worker's events as JSON lines, flushed one by one: a
// SIGKILL must find every event of the work done before it on the pipe.
type pipeEvents struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
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

func (p *pipeEvents) Claimed(cs []jobstore.Claimed, at time.Time) {
	for _, c := range cs {
		p.send(workerEvent{E: "claimed", ID: c.Lease.JobID, A: c.Lease.Attempt, T: at.UnixNano(), Tok: c.Lease.Token})
	}
}

func (p *pipeEvents) Started(id string, attempt int, at time.Time) JobTimes {
	p.send(workerEvent{E: "started", ID: id, A: attempt, T: at.UnixNano()})
	return JobTimes{}
}

func (p *pipeEvents) Completed(id string, attempt int, at time.Time) JobTimes {
	p.send(workerEvent{E: "completed", ID: id, A: attempt, T: at.UnixNano()})
	return JobTimes{}
}

// completedAfter is Completed with the handler's end, from which the
// coordinator records the job's ack wait.
func (p *pipeEvents) completedAfter(id string, attempt int, at, handlerEnd time.Time) JobTimes {
	p.send(workerEvent{E: "completed", ID: id, A: attempt, T: at.UnixNano(), H: handlerEnd.UnixNano()})
	return JobTimes{}
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
