package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/procio"
	"github.com/aebench/aebench/rclient"
)

// maxPlan bounds the attempts a job's handler plan lists; a later attempt
// plays the last entry.
const maxPlan = 16

// Store is a peer job system behind its driver: Enqueue, Get, Locate and
// Stats go to the driver's client process; the jobs run in the system's
// own worker loop (WorkerCommand), never through Claim.
type Store struct {
	spec  Spec
	hello Hello
	o     jobstore.Options
	addr  RedisAddr
	plan  func(id string, attempt int) (time.Duration, bool)
	// native: peer_mode native (Config.PeerMode); opts: the driver's
	// own options (Config.Options).
	native bool
	opts   map[string]string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex // one request line at a time
	mu     sync.Mutex
	seq    int64
	wait   map[int64]chan reply
	dead   error // the client process ended; every later request fails with it
	ended  chan struct{}
	stderr procio.Capture
}

type reply struct {
	E      string  `json:"e"`
	Seq    int64   `json:"seq"`
	Msg    string  `json:"msg"`
	States []state `json:"states"`
	Due    int64   `json:"due"`
	Dly    int64   `json:"delayed"`
	Active int64   `json:"active"`
	Done   int64   `json:"completed"`
	Dead   int64   `json:"dead"`
}

type state struct {
	S string `json:"s"` // waiting, delayed, active, completed, failed, unknown
	R bool   `json:"r"` // the system will still reach the job
	// L: not reachable now, but the system takes the job back itself
	// later, and why (jobstore.Location.Later).
	L string `json:"l,omitempty"`
}

// New starts the driver's client process on the Redis c reaches.
func New(ctx context.Context, c rclient.Client, o jobstore.Options, spec Spec, native bool, own map[string]string) (*Store, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	ro, ok := c.(interface{ Options() rclient.Options })
	if !ok || len(ro.Options().Addrs) == 0 {
		return nil, fmt.Errorf("driver %s: the Redis client does not say where Redis is", spec.Name)
	}
	opts := ro.Options()
	if opts.Cluster {
		return nil, fmt.Errorf("%w: driver %s runs on one Redis server, not a cluster (redis.mode cluster)", jobstore.ErrInvalid, spec.Name)
	}
	addr, err := redisAddr(opts.Addrs[0], opts.Password, opts.DB)
	if err != nil {
		return nil, err
	}
	addr.Username = opts.Username
	if opts.TLS != nil {
		files := opts.TLSFiles
		if files.ServerName == "" {
			files.ServerName = opts.TLS.ServerName
		}
		addr.TLS = &files
	}
	s := &Store{spec: spec, o: o, addr: addr, native: native, opts: own, wait: map[int64]chan reply{}, ended: make(chan struct{})}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	if err := s.checkQueues(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func redisAddr(hostport, password string, db int) (RedisAddr, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return RedisAddr{}, fmt.Errorf("driver: Redis address %q: %w", hostport, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return RedisAddr{}, fmt.Errorf("driver: Redis port %q: %w", port, err)
	}
	return RedisAddr{Host: host, Port: p, Password: password, DB: db}, nil
}

func (s *Store) config(role string) Config {
	c := Config{Role: role, Redis: s.addr, Queue: s.o.Queue, BackoffMs: s.o.Backoff.Base.Milliseconds(),
		RetentionMs: s.o.Retention.Milliseconds()}
	if s.native {
		c.PeerMode = "native"
	}
	c.Options = s.opts
	for _, q := range s.o.Queues {
		c.Queues = append(c.Queues, QueueConf{Name: q.Name, Weight: q.Weight})
	}
	if len(c.Queues) > 0 {
		c.QueuePolicy = s.o.QueuePolicy
	}
	return c
}

// checkQueues holds the store's queues and policy to what the driver's
// hello declares it serves (caps.queues).
func (s *Store) checkQueues() error {
	if len(s.o.Queues) == 0 {
		return nil
	}
	if !slices.Contains(s.hello.Caps.Queues, s.o.QueuePolicy) {
		return fmt.Errorf("%w: driver %s: store.queue_policy %s: its hello declares queues %v", jobstore.ErrInvalid, s.spec.Name, s.o.QueuePolicy, s.hello.Caps.Queues)
	}
	return nil
}

// queueOf checks a job's queue: "" (the first) or one of the store's.
func (s *Store) queueOf(j jobstore.NewJob) (string, error) {
	if j.Queue == "" || slices.ContainsFunc(s.o.Queues, func(q jobstore.QueueWeight) bool { return q.Name == j.Queue }) {
		return j.Queue, nil
	}
	return "", fmt.Errorf("%w: job %s: queue %q is not one of the store's", jobstore.ErrInvalid, j.ID, j.Queue)
}

// start runs the client process and waits for its hello and ready.
func (s *Store) start(ctx context.Context) error {
	cmd, err := s.spec.Cmd(context.Background(), s.config("client"))
	if err != nil {
		return err
	}
	ownGroup(cmd)
	cmd.Stderr = &s.stderr
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("driver %s: start client: %w", s.spec.Name, err)
	}
	s.cmd = cmd
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	type hr struct {
		h   Hello
		err error
	}
	got := make(chan hr, 1)
	go func() {
		h, err := readHello(s.spec.Name, sc)
		got <- hr{h, err}
		if err == nil {
			s.read(sc)
		}
		_ = cmd.Wait()
		s.fail(fmt.Errorf("driver %s: client process ended: %s", s.spec.Name, s.stderrTail()))
		close(s.ended)
	}()
	select {
	case r := <-got:
		if r.err != nil {
			_ = cmd.Process.Kill()
			return fmt.Errorf("%w (stderr: %s)", r.err, s.stderrTail())
		}
		s.hello = r.h
		return nil
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return fmt.Errorf("driver %s: client not ready: %w", s.spec.Name, ctx.Err())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("driver %s: client not ready within 60s (stderr: %s)", s.spec.Name, s.stderrTail())
	}
}

func (s *Store) stderrTail() string {
	t := strings.TrimSpace(s.stderr.String())
	if len(t) > 400 {
		t = "..." + t[len(t)-400:]
	}
	return t
}

// read hands each reply to the request waiting on its seq.
func (s *Store) read(sc *bufio.Scanner) {
	for sc.Scan() {
		var r reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue
		}
		s.mu.Lock()
		ch := s.wait[r.Seq]
		delete(s.wait, r.Seq)
		s.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

func (s *Store) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead == nil {
		s.dead = err
	}
	for seq, ch := range s.wait {
		ch <- reply{E: "refused", Seq: seq, Msg: err.Error()}
		delete(s.wait, seq)
	}
}

// request sends one request and waits for its reply.
func (s *Store) request(ctx context.Context, req map[string]any) (reply, error) {
	ch := make(chan reply, 1)
	s.mu.Lock()
	if s.dead != nil {
		s.mu.Unlock()
		return reply{}, s.dead
	}
	s.seq++
	seq := s.seq
	s.wait[seq] = ch
	s.mu.Unlock()
	req["seq"] = seq
	line, err := json.Marshal(req)
	if err != nil {
		return reply{}, err
	}
	s.wmu.Lock()
	_, err = s.stdin.Write(append(line, '\n'))
	s.wmu.Unlock()
	if err != nil {
		return reply{}, fmt.Errorf("driver %s: %w", s.spec.Name, err)
	}
	select {
	case r := <-ch:
		if r.E == "refused" {
			return r, fmt.Errorf("driver %s refused %s: %s", s.spec.Name, req["op"], r.Msg)
		}
		return r, nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.wait, seq)
		s.mu.Unlock()
		return reply{}, fmt.Errorf("driver %s: %s: %w", s.spec.Name, req["op"], ctx.Err())
	}
}

type wireJob struct {
	ID    string     `json:"id"`
	At    int64      `json:"at,omitempty"` // RunAt, unix ms; 0: now
	P     string     `json:"p"`
	H     [][2]int64 `json:"h"`           // per attempt: handler µs, fail 0/1
	Retry int        `json:"r"`           // retries after the first attempt
	Q     string     `json:"q,omitempty"` // the job's queue (Config.Queues); "": the first
}

// Enqueue sends the jobs to the driver in one request (the system's batch
// enqueue when it has one).
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if err := jobstore.CheckBatch(jobs, s.o); err != nil {
		return err
	}
	w := make([]wireJob, len(jobs))
	for i, j := range jobs {
		if j.ID == "" {
			return fmt.Errorf("%w: empty job id", jobstore.ErrInvalid)
		}
		if !utf8.Valid(j.Payload) {
			return fmt.Errorf("%w: job %s: driver payloads travel as JSON strings and must be UTF-8", jobstore.ErrInvalid, j.ID)
		}
		q, err := s.queueOf(j)
		if err != nil {
			return err
		}
		w[i] = wireJob{ID: j.ID, P: string(j.Payload), H: s.planFor(j.ID, j.MaxRetries), Retry: j.MaxRetries, Q: q}
		if !j.RunAt.IsZero() {
			w[i].At = j.RunAt.UnixMilli()
		}
	}
	_, err := s.request(ctx, map[string]any{"op": "enqueue", "jobs": w})
	return err
}

func (s *Store) planFor(id string, retries int) [][2]int64 {
	n := min(retries+1, maxPlan)
	h := make([][2]int64, n)
	for a := range h {
		if s.plan == nil {
			continue
		}
		d, fail := s.plan(id, a)
		h[a][0] = d.Microseconds()
		if fail {
			h[a][1] = 1
		}
	}
	return h
}

// SetHandlerPlan implements jobstore.HandlerPlanner.
func (s *Store) SetHandlerPlan(plan func(id string, attempt int) (time.Duration, bool)) {
	s.plan = plan
}

// WorkerCommand implements jobstore.ExternalWorkers: the driver's worker
// role, running the system's own worker loop.
func (s *Store) WorkerCommand(w jobstore.WorkerSpec) (*exec.Cmd, error) {
	addr, err := redisAddr(w.Addr, w.Password, s.addr.DB)
	if err != nil {
		return nil, err
	}
	// The worker reaches the same Redis (perhaps through the network-fault
	// proxy, which passes TLS through) as the same user.
	addr.Username, addr.TLS = s.addr.Username, s.addr.TLS
	cfg := s.config("worker")
	cfg.Redis, cfg.Concurrency, cfg.Index, cfg.LeaseMs = addr, max(1, w.Concurrency), w.Index, w.Lease.Milliseconds()
	cfg.EventsAtOnce = w.Faults
	return s.spec.Cmd(context.Background(), cfg)
}

// DeclaredLoss implements jobstore.LossDeclarer from the driver's hello.
func (s *Store) DeclaredLoss() ([]string, string) {
	return s.hello.Loses, s.hello.System + " " + s.hello.SystemVersion + ": " + s.hello.Guarantees
}

// HoldsExtra implements jobstore.HoldDeclarer: the jobs a process may
// hold unreported, as its hello declares (holds_extra).
func (s *Store) HoldsExtra() int { return s.hello.HoldsExtra }

// DeclaredEarly implements jobstore.EarlyDeclarer from the driver's hello.
func (s *Store) DeclaredEarly() (time.Duration, string) {
	return time.Duration(s.hello.Early.MaxMs) * time.Millisecond, s.hello.Early.Why
}

// Hello is what the driver declared at start.
func (s *Store) Hello() Hello { return s.hello }

var statusOf = map[string]jobstore.Status{
	"waiting": jobstore.StatusQueued, "delayed": jobstore.StatusScheduled, "active": jobstore.StatusInProgress,
	"completed": jobstore.StatusCompleted, "failed": jobstore.StatusFailed,
}

// RemovesFinished implements jobstore.FinishedRemover: what the driver's
// hello declares for its mode.
func (s *Store) RemovesFinished() string { return s.hello.RemovesFinished }

// Locate implements jobstore.Locator through the driver's inspect.
func (s *Store) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	r, err := s.request(ctx, map[string]any{"op": "inspect", "ids": ids})
	if err != nil {
		return nil, err
	}
	if len(r.States) != len(ids) {
		return nil, fmt.Errorf("driver %s: inspect of %d ids answered %d states", s.spec.Name, len(ids), len(r.States))
	}
	out := make([]jobstore.Location, len(ids))
	for i, st := range r.States {
		status, found := statusOf[st.S]
		out[i] = jobstore.Location{Found: found, Status: status, Reachable: found && st.R, Later: st.L}
	}
	return out, nil
}

// Get reads one job's state through inspect; the record holds the id and
// status only (a driver keeps the system's own record).
func (s *Store) Get(ctx context.Context, id string) (jobstore.Job, error) {
	l, err := s.Locate(ctx, []string{id})
	if err != nil {
		return jobstore.Job{}, err
	}
	if !l[0].Found {
		return jobstore.Job{}, fmt.Errorf("%w: %s (driver %s)", jobstore.ErrNotFound, id, s.spec.Name)
	}
	return jobstore.Job{ID: id, Status: l[0].Status}, nil
}

// Stats implements jobstore.Store through the driver's stats request.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	r, err := s.request(ctx, map[string]any{"op": "stats"})
	if err != nil {
		return jobstore.Stats{}, err
	}
	return jobstore.Stats{Due: r.Due, Delayed: r.Dly, InProgress: r.Active, Completed: r.Done, Dead: r.Dead}, nil
}

func (s *Store) own(op string) error {
	return fmt.Errorf("%w: %s: %s runs its own worker loop (driver worker processes)", jobstore.ErrUnsupported, op, s.spec.Name)
}

// Claim is not how a peer's jobs run: see WorkerCommand.
func (s *Store) Claim(context.Context, jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return nil, s.own("Claim")
}

// Extend is the system's own (its worker renews its locks).
func (s *Store) Extend(_ context.Context, l jobstore.Lease, _ time.Duration) (jobstore.Lease, error) {
	return l, s.own("Extend")
}

// Complete is the system's own.
func (s *Store) Complete(context.Context, jobstore.Lease, []byte) error { return s.own("Complete") }

// Fail is the system's own.
func (s *Store) Fail(context.Context, jobstore.Lease, string) (jobstore.FailResult, error) {
	return jobstore.FailResult{}, s.own("Fail")
}

// Recover has nothing to do: a system that recovers does it in its own
// workers (BullMQ's stalled check).
func (s *Store) Recover(context.Context, int) (jobstore.RecoverResult, error) {
	return jobstore.RecoverResult{}, nil
}

// Cancel is not part of protocol 1.
func (s *Store) Cancel(context.Context, string) error { return s.own("Cancel") }

// Capabilities maps the driver's declared capabilities; it holds several
// queues (CapQueues) when the run gave it store.queues.
func (s *Store) Capabilities() jobstore.Capabilities {
	cs := CapsOf(s.hello)
	if len(s.o.Queues) > 1 {
		cs[jobstore.CapQueues] = true
	}
	return cs
}

// CapsOf maps a hello's capabilities onto aebench's.
func CapsOf(h Hello) jobstore.Capabilities {
	cs := jobstore.Capabilities{}
	if h.Caps.Delayed {
		cs[jobstore.CapDelayedJobs], cs[jobstore.CapNativeDelay] = true, true
	}
	if h.Caps.Retries != "" {
		cs[jobstore.CapRetries] = true
	}
	if h.Caps.Recovery != "" && h.Caps.Recovery != "none" {
		cs[jobstore.CapSelfRecovery] = true
	}
	return cs
}

// Close ends the client process: stdin closes, it finishes its requests
// and exits; after 10s it is killed.
func (s *Store) Close() error {
	_ = s.stdin.Close()
	select {
	case <-s.ended:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.ended
	}
	return nil
}
