// Package workerproc is the transport between a run's coordinator and its
// worker processes, both ends: the configuration a worker is started with,
// the events it writes (one JSON line each), the "arm <crash point>"
// commands it reads, starting, hanging up on and killing a process (and
// the processes it forked), and the TCP variant for remote workers. What
// the events mean (the ledger, the counters, the faults) is the engine's.
//
// The protocol: a coordinator starts `aebench worker` with the
// ProcessConfig in the environment, the
// worker writes one JSON event per line on stdout and reads "arm <crash
// point>" lines on stdin. A remote worker (`aebench worker --coordinator
// HOST:PORT`) speaks the same over one TCP connection, after a first line
// from the coordinator that holds its ProcessConfig (Remote, Dial). Every
// second, and once at the end, a worker sends the histograms it recorded
// (claim, handler, complete, dispatch...) in HdrHistogram's compressed
// base64 form, which the coordinator merges into the run's: in the
// interval of the run's interval log it arrives in, up to a second after
// the values were taken (the totals are exact; an .hlog interval may hold
// a worker's previous second).
package workerproc

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
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
	Username string            `json:"username,omitempty"`
	Password string            `json:"password,omitempty"`
	// TLS is the rediss:// URL's TLS options (nil: plain TCP).
	TLS     *rclient.TLSFiles `json:"tls,omitempty"`
	Cluster bool              `json:"cluster,omitempty"` // Addr is a Redis Cluster node
	Index   int               `json:"index"`             // worker index in the run
	Gen     int               `json:"gen"`               // replacement count
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

// Event is one line a worker process writes to stdout.
type Event struct {
	E      string `json:"e"` // claimed, started, completed, failed, fenced, unknown, refused, done, point, ready, calls, counts, hist, err
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
	// RD, on a driver's started event: the system itself flags this
	// delivery as a redelivery (kombu's redelivered, Celery's driver).
	RD bool `json:"rd,omitempty"`
}

// Pipe writes a worker's events as JSON lines, flushed one by one: a
// SIGKILL must find every event of the work done before it on the pipe. It
// is the worker's ledger.Events (and the engine's claims and unknown
// outcomes), sent on to the coordinator.
type Pipe struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	// Measuring is the worker engine's measured window: a started job's
	// handler, dispatch and calls are recorded inside it (the coordinator
	// alone knows a job's intended and due times).
	Measuring func(time.Time) bool
}

// NewPipe writes events to w.
func NewPipe(w io.Writer) *Pipe {
	bw := bufio.NewWriter(w)
	return &Pipe{w: bw, enc: json.NewEncoder(bw)}
}

// Send writes one event.
func (p *Pipe) Send(ev Event) {
	p.mu.Lock()
	_ = p.enc.Encode(ev)
	_ = p.w.Flush()
	p.mu.Unlock()
}

// CompleteRefused tells the coordinator that Redis refused a Complete of
// id at maxmemory (ledger.Ledger.CompleteRefused).
func (p *Pipe) CompleteRefused(id string) {
	p.Send(Event{E: "refused", ID: id, T: time.Now().UnixNano()})
}

// ErrorCounts are a worker process's store errors, sent once at its end
// (a "counts" event, as JSON in Msg): the coordinator adds them to the
// run's counters. A killed worker's are lost with it.
type ErrorCounts struct {
	Claim        int64 `json:"claim,omitempty"`
	Complete     int64 `json:"complete,omitempty"`
	Fail         int64 `json:"fail,omitempty"`
	Extend       int64 `json:"extend,omitempty"`
	OOMCompletes int64 `json:"oom_completes,omitempty"`
	OOMFails     int64 `json:"oom_fails,omitempty"`
}

// SendCounts sends c as a "counts" event.
func (p *Pipe) SendCounts(c ErrorCounts) {
	b, _ := json.Marshal(c)
	p.Send(Event{E: "counts", Msg: string(b), T: time.Now().UnixNano()})
}

// SendHists sends every non-empty histogram of set, encoded, and resets it.
func (p *Pipe) SendHists(set *hist.Set) {
	for t, h := range set {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			continue
		}
		p.Send(Event{E: "hist", Point: hist.Tag(t).String(), Msg: string(b), T: time.Now().UnixNano()})
		h.Reset()
	}
}

func (p *Pipe) Claimed(cs []jobstore.Claimed, at time.Time) {
	for _, c := range cs {
		p.Send(Event{E: "claimed", ID: c.Lease.JobID, A: c.Lease.Attempt, T: at.UnixNano(), Tok: c.Lease.Token})
	}
}

func (p *Pipe) Started(id string, attempt int, at time.Time) ledger.JobTimes {
	p.Send(Event{E: "started", ID: id, A: attempt, T: at.UnixNano()})
	return ledger.JobTimes{Known: p.Measuring != nil, Measured: p.Measuring != nil && p.Measuring(at)}
}

func (p *Pipe) Completed(id string, attempt int, at time.Time) ledger.JobTimes {
	p.Send(Event{E: "completed", ID: id, A: attempt, T: at.UnixNano()})
	return ledger.JobTimes{}
}

// CompletedAfter is Completed with the handler's end, from which the
// coordinator records the job's ack wait.
func (p *Pipe) CompletedAfter(id string, attempt int, at, handlerEnd time.Time) ledger.JobTimes {
	p.Send(Event{E: "completed", ID: id, A: attempt, T: at.UnixNano(), H: handlerEnd.UnixNano()})
	return ledger.JobTimes{}
}

func (p *Pipe) Failed(id string, attempt int, res jobstore.FailResult, at time.Time) {
	p.Send(Event{E: "failed", ID: id, A: attempt, T: at.UnixNano(), Status: int(res.Status), RunAt: res.RunAt.UnixNano()})
}

func (p *Pipe) Fenced(id string, attempt int, at time.Time) {
	p.Send(Event{E: "fenced", ID: id, A: attempt, T: at.UnixNano()})
}

func (p *Pipe) Recovered(jobstore.RecoverResult, time.Time) {}

func (p *Pipe) Unknown(id string, attempt int, token string, at time.Time) {
	p.Send(Event{E: "unknown", ID: id, A: attempt, Tok: token, T: at.UnixNano()})
}

// ReadEvents reads a worker's events from r until it ends: each is handed
// to each, a line that is no event to bad.
func ReadEvents(r io.Reader, each func(Event), bad func(line string, err error)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			bad(sc.Text(), err)
			continue
		}
		each(ev)
	}
}

// ReadCommands reads the coordinator's commands on a worker's stdin until
// it closes: "arm <crash point>" is handed to arm.
func ReadCommands(r io.Reader, arm func(point string)) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if cmd == "arm" {
			arm(arg)
		}
	}
}

// DecodeHist is the histogram a "hist" event carries.
func DecodeHist(ev Event) (*hdr.Histogram, error) { return hdr.Decode([]byte(ev.Msg)) }
