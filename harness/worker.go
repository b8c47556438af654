package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
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
	Config   Config `json:"config"`
	Queue    string `json:"queue"`
	Addr     string `json:"addr"` // the Redis, or the network-fault proxy
	Password string `json:"password,omitempty"`
	Index    int    `json:"index"` // worker index in the run
	Gen      int    `json:"gen"`   // replacement count
}

// IsWorkerProcess reports whether this process was started as a worker.
func IsWorkerProcess() bool { return os.Getenv(WorkerEnv) == "1" }

// workerEvent is one line a worker process writes to stdout.
type workerEvent struct {
	E      string `json:"e"` // claimed, started, completed, failed, fenced, unknown, done, point, ready
	ID     string `json:"id,omitempty"`
	A      int    `json:"a,omitempty"` // attempt
	T      int64  `json:"t,omitempty"` // unix ns
	Tok    string `json:"tok,omitempty"`
	Status int    `json:"st,omitempty"`
	RunAt  int64  `json:"ra,omitempty"`
	Point  string `json:"p,omitempty"`
	Msg    string `json:"msg,omitempty"`
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

// WorkerMain is `aebench worker`: it builds the store the coordinator
// describes in $AEBENCH_WORKER_CONFIG, runs one worker with the same loop
// as in-process workers, writes its events as JSON lines on stdout, and
// takes commands on stdin ("arm <crash point>"); it exits when stdin
// closes. It returns the exit code.
func WorkerMain(stdin io.Reader, stdout, stderr io.Writer) int {
	var wc ProcessConfig
	if err := json.Unmarshal([]byte(os.Getenv(WorkerConfigEnv)), &wc); err != nil {
		fmt.Fprintf(stderr, "aebench worker: $%s: %v\n", WorkerConfigEnv, err)
		return exitCodeUsage
	}
	if err := runWorker(wc, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "aebench worker: %v\n", err)
		return 1
	}
	return 0
}

const exitCodeUsage = 2

func runWorker(wc ProcessConfig, stdin io.Reader, stdout io.Writer) error {
	cfg := wc.Config
	var err error
	// Distributions travel as text; the sampler is rebuilt here.
	if cfg.Workers.Handler, err = ParseDist(cfg.Workers.HandlerText); err != nil {
		return fmt.Errorf("handler %q: %w", cfg.Workers.HandlerText, err)
	}
	be, err := LookupBackend(cfg.Backend.Name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, err := rclient.New(cfg.Client, rclient.Options{Addrs: []string{wc.Addr}, Password: wc.Password})
	if err != nil {
		return err
	}
	defer client.Close()
	store, err := be.New(ctx, client, jobstore.Options{
		Queue: wc.Queue, Encoding: jobstore.Encoding(cfg.Encoding), Retention: cfg.Store.Retention,
		Backoff:      jobstore.Backoff{Base: cfg.Store.BackoffBase, Max: cfg.Store.BackoffMax, Jitter: cfg.Store.BackoffJitter},
		PollInterval: cfg.Store.PollInterval, Seed: cfg.Seed,
	}, cfg.Backend.Options)
	if err != nil {
		return fmt.Errorf("build store: %w", err)
	}
	defer store.Close()
	pe := newPipeEvents(stdout)
	e := &engine{cfg: cfg, store: store, wstore: store, events: pe, hardStop: make(chan struct{})}
	block := make(chan struct{}) // never closed: a worker at its crash point waits for SIGKILL
	e.ft = &faultRun{workers: map[int]*worker{}, onPoint: func(_ *worker, ev faults.Event) {
		pe.send(workerEvent{E: "point", Point: string(ev.Point), T: time.Now().UnixNano()})
		<-block
	}}
	var wg sync.WaitGroup
	e.ft.ctx, e.ft.wg = ctx, &wg
	e.workerDone = func(id string) { pe.send(workerEvent{E: "done", ID: id}) }
	w := e.startWorker(ctx, &wg, wc.Index, wc.Gen)
	pe.send(workerEvent{E: "ready", T: time.Now().UnixNano()})
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if cmd == "arm" {
			ev := faults.Event{Point: faults.Point(arg)}
			w.armed.Store(&ev)
		}
	}
	// stdin closed: the coordinator is done with us.
	close(e.hardStop)
	cancel()
	wg.Wait()
	return nil
}
