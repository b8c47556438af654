// Package asynq runs hibiken/asynq, the most used Go job queue on Redis, as
// a peer behind the jobstore contract, through asynq's public API only, so
// aebench's stores are measured against what people actually run.
//
//	jobstore   asynq
//	Enqueue    Client.EnqueueContext per job: task id = job id, ProcessAt for a
//	           RunAt after now, MaxRetry, Retention; a taken id is ErrDuplicateID
//	Serve      (jobstore.Serving) the Server calls aebench's handler straight
//	           from its own goroutine, as asynq's users run it; the engine
//	           uses it for every run without faults whose workers are all in
//	           process (one Server) or all worker processes (one each), so
//	           asynq's own concurrency option sets the jobs in flight and it
//	           claims and acknowledges one task at a time
//	Claim      (runs with faults, or workers both in and out of process) a Server's handler
//	           hands each task it dequeues to Claim over a channel and blocks
//	           until Complete or Fail releases it; Claim returns up to Max
//	           delivered tasks, waiting up to Wait for the first
//	Complete   the handler writes the result (ResultWriter) and returns nil
//	Fail       the handler returns an error carrying the retry delay, which
//	           Config.RetryDelayFunc reads back; asynq retries or archives
//	Extend     moves the deadline the handler enforces; in Redis asynq's
//	           heartbeater renews its own lease (30 s, every 5 s) while the
//	           handler runs. A claim not renewed past its deadline (a crashed
//	           worker) makes the handler return a failure: asynq retries the
//	           task, or archives it when its retries are spent
//	Recover    nothing: asynq's recoverer (at start, then every minute) takes
//	           back tasks of a dead server whose lease expired 30 s ago
//	Get        Inspector.GetTaskInfo; Cancel: GetTaskInfo, then DeleteTask
//	Stats      Inspector.GetQueueInfo
//
// Keys are asynq's own (asynq:{queue}:...), under the queue's hash tag, plus
// asynq's global asynq:queues and asynq:servers sets. Options.Queue is the
// asynq queue name; with Options.Queues (store.queues) each queue is an
// asynq queue <Queue>.<name>, served by one server with asynq's weights
// (Config.Queues) or, under the strict policy, StrictPriority: asynq's own
// priority queues, so the peer declares jobstore.CapQueues (strict and
// weighted; it has no round-robin). Get and Cancel look in each queue.
// Job headers, route and query parameters and CreatedAt
// travel in asynq's task headers; Name is the task type after "ae:".
//
// The Redis connection is asynq's own go-redis client, built from the
// options the rclient.Client came from (rclient.OptionsOf): RedisClientOpt,
// or RedisClusterClientOpt on a cluster.
//
// Findings (behaviour of asynq v0.26.0 that the contract does not expect):
//   - Time is asynq's: it reads the machine's clock, never Options.Clock, and
//     keeps ProcessAt and retry times in whole Unix seconds, cut down, so a
//     delayed job could start up to a second early. The adapter rounds
//     ProcessAt up and adds a second to retry delays: a delayed job or retry
//     starts up to a second late, plus up to DelayedTaskCheckInterval for
//     the forwarder, never early.
//   - Complete and Fail return when the handler has been released; asynq
//     writes the outcome to Redis a moment later, so a Get right after may
//     still say InProgress, and a process killed in between runs the job again.
//   - The server dequeues up to Concurrency tasks whether or not a Claim is
//     waiting: a prefetched task is Active in asynq (InProgress in Stats and
//     Get) before any worker has it.
//   - Recovery is asynq's: a lease of 30 s and a recoverer every minute,
//     neither configurable; Recover does nothing, and a recovered task comes
//     back through Claim with RetryCount+1. Fencing is asynq's lease check
//     (a server whose lease lapsed does not write) plus a per-Store check of
//     the attempt number; a stale lease cannot be told from a new one across
//     processes.
//   - asynq has no batch enqueue: a bulk Enqueue is one Client call per job,
//     16 at a time (as asynq's users send a batch); not atomic: a duplicate
//     id fails the batch and leaves the batch's other jobs enqueued.
//   - Cancel deletes the task: a canceled job is then not found.
//   - Records are asynq's: only the hash encoding's fields it has (no
//     StartedAt, WorkerID or lease fields in Get), completed tasks kept for
//     Options.Retention, archived (dead) tasks kept by asynq's own limits.
//   - Stats.Completed is asynq's processed-minus-failed total.
//
// Conformance (TestConformance: conformance.RunStore with 10 ms task
// checks and a 100 ms forwarder; AEBENCH_ASYNQ_CONFORMANCE=1 adds the
// cluster and rueidis): every case passes, is skipped for a capability
// asynq does not declare (store-clock, lease-recovery, fencing,
// blocking-claim, atomic-bulk, record-encodings), or is skipped with a
// finding (Findings, printed by go test -v). The findings: push, not pull
// (a Claim with Wait 0 right after Enqueue finds nothing: asynq delivers a
// task at its processor's next poll), prefetched tasks counted InProgress,
// and RunAt in whole seconds. Options.Encoding is ignored: records are
// asynq's.
package asynq

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	hq "github.com/hibiken/asynq"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Doc is the one-line description the registry prints.
const Doc = "peer: hibiken/asynq v0.26.0 through its public API (Client, Server handler per task, Inspector); its own lease, heartbeat, retry, archive and recoverer"

// Limits is what the asynq peer does not guarantee under aebench's contract.
const Limits = "asynq's clock, not the store's (whole seconds for delayed and retry times); delayed jobs wait for the forwarder (delayed_task_check_interval); " +
	"an idle claim waits for asynq's poll (task_check_interval), never blocks in Redis; Complete/Fail return before asynq writes the outcome; " +
	"Recover is a no-op: a crashed worker's claim is given back when its lease passes, but a killed process's tasks only by asynq's recoverer, 60 to 120 s later (30 s lease expired for 30 s, a scan a minute); bulk enqueue as 16 concurrent calls (asynq has none), not atomic; canceled jobs are deleted; " +
	"records are asynq's (Options.Encoding ignored)"

// Caps returns what the asynq peer declares; Store.Capabilities returns the same.
func Caps() jobstore.Capabilities {
	return jobstore.Capabilities{
		jobstore.CapNativeDelay:   true, // a ZSET scored by ProcessAt
		jobstore.CapSelfRecovery:  true, // asynq's recoverer, not Recover
		jobstore.CapRetries:       true,
		jobstore.CapDelayedJobs:   true,
		jobstore.CapCancel:        true,
		jobstore.CapUniqueIDs:     true,
		jobstore.CapRetention:     true,
		jobstore.CapStrictFIFO:    true, // pending is a list
		jobstore.CapExactStats:    true,
		jobstore.CapLeaseRecovery: false, // asynq's own, not through Recover
		jobstore.CapFencing:       false,
	}
}

// typePrefix starts every task type, so an empty Name is a valid type.
const typePrefix = "ae:"

// Task headers that carry the job fields asynq has no place for.
const (
	hdrCreated = "ae-created" // Unix ms on Options.Clock
	hdrHeaders = "ae-headers" // JSON
	hdrRoute   = "ae-route"
	hdrQuery   = "ae-query"
)

// Store is one asynq queue: a Client, a Server feeding Claim, an Inspector.
type Store struct {
	o   jobstore.Options
	cfg Config

	client *hq.Client
	insp   *hq.Inspector
	// srv is the server feeding Claim, started by the first Claim (serve);
	// nil before. newServer builds it.
	srv       *hq.Server
	newServer func() *hq.Server
	srvOnce   sync.Once
	srvErr    error
	// served: Serve started the server (the harness's handler runs in
	// asynq's); false: Claim did, or nothing yet.
	served bool
	// serving: a Serve call has begun (a second one is refused).
	serving atomic.Bool

	deliveries chan *delivery // handler -> Claim
	closing    chan struct{}
	closeOnce  sync.Once

	mu   sync.Mutex
	held map[string]*delivery // by job id: claimed, not yet released
	rng  *rand.Rand
}

// delivery is one task a handler holds for a worker.
type delivery struct {
	job     jobstore.Job
	token   string
	release chan outcome
	// deadline is the claim's lease deadline on Options.Clock (zero until
	// claimed), under Store.mu: the handler gives the task back to asynq
	// when it passes without Extend.
	deadline time.Time
}

// outcome is how Complete or Fail releases a handler.
type outcome struct {
	result []byte
	err    error // nil: complete
}

// failure is the error a handler returns for Fail; RetryDelayFunc reads its delay.
type failure struct {
	reason string
	delay  time.Duration
}

func (f *failure) Error() string { return f.reason }

var (
	_ jobstore.Store   = (*Store)(nil)
	_ jobstore.Serving = (*Store)(nil)
)

// New builds the peer with the default Config.
func New(ctx context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	return NewWith(ctx, c, o, DefaultConfig())
}

// NewWith builds the peer; its asynq server starts with the first Claim.
func NewWith(_ context.Context, c rclient.Client, o jobstore.Options, cfg Config) (*Store, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	// Records are asynq's whatever Options.Encoding says: the peer does not
	// declare record-encodings, so nothing expects it to honour it.
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("%w: asynq: no Redis client", jobstore.ErrInvalid)
	}
	if len(o.Queues) > 0 && o.QueuePolicy != "strict" && o.QueuePolicy != "weighted" {
		return nil, fmt.Errorf("%w: asynq: queue policy %q: asynq claims strict (StrictPriority) or weighted", jobstore.ErrInvalid, o.QueuePolicy)
	}
	ro, ok := rclient.OptionsOf(c)
	if !ok {
		return nil, fmt.Errorf("%w: asynq: the %s client does not say where it connects (rclient.OptionsOf): build it with rclient.New", jobstore.ErrInvalid, c.Name())
	}
	conn := connOpt(ro)
	s := &Store{o: o, cfg: cfg, client: hq.NewClient(conn), insp: hq.NewInspector(conn),
		deliveries: make(chan *delivery), closing: make(chan struct{}),
		held: map[string]*delivery{}, rng: rand.New(rand.NewPCG(uint64(o.Seed), 0))}
	s.newServer = func() *hq.Server { return hq.NewServer(conn, s.serverConfig()) }
	return s, nil
}

// serverConfig is the asynq server's configuration.
func (s *Store) serverConfig() hq.Config {
	cfg := s.cfg
	queues := map[string]int{}
	for i, n := range s.queueNames() {
		queues[n] = max(s.weight(i), 1)
	}
	return hq.Config{
		Concurrency:              cfg.Concurrency,
		Queues:                   queues,
		StrictPriority:           s.o.QueuePolicy == "strict",
		TaskCheckInterval:        cfg.TaskCheckInterval,
		DelayedTaskCheckInterval: cfg.DelayedTaskCheckInterval,
		JanitorInterval:          cfg.JanitorInterval,
		ShutdownTimeout:          cfg.ShutdownTimeout,
		RetryDelayFunc:           retryDelay,
		Logger:                   quiet{},
		LogLevel:                 hq.FatalLevel,
	}
}

// serve starts the asynq server once, with handler h: at the first Claim
// (s.handle, feeding Claim) or at Serve (served: the harness's handler
// runs in asynq's). A Store that only enqueues, reads or recovers (the
// producers', a maintenance loop's) runs no server: one would dequeue
// tasks that no Claim takes.
func (s *Store) serve(h hq.Handler, served bool) error {
	s.srvOnce.Do(func() {
		s.served = served
		srv := s.newServer()
		if err := srv.Start(h); err != nil {
			s.srvErr = fmt.Errorf("asynq: start server: %w", err)
			return
		}
		s.mu.Lock()
		s.srv = srv
		s.mu.Unlock()
	})
	if s.srvErr == nil && s.served != served {
		return fmt.Errorf("%w: asynq: one Store runs one loop: Claim and Serve cannot both be used", jobstore.ErrInvalid)
	}
	return s.srvErr
}

func connOpt(o rclient.Options) hq.RedisConnOpt {
	dial := o.DialTimeout
	if dial == 0 {
		dial = 2 * time.Second
	}
	if o.Cluster {
		return hq.RedisClusterClientOpt{Addrs: o.Addrs, Username: o.Username, Password: o.Password, DialTimeout: dial, TLSConfig: o.TLS}
	}
	return hq.RedisClientOpt{Addr: o.Addrs[0], Username: o.Username, Password: o.Password, DB: o.DB, DialTimeout: dial, PoolSize: o.PoolSize, TLSConfig: o.TLS}
}

// retryDelay is asynq's RetryDelayFunc: the delay Fail chose, carried in
// the handler's error, plus a second, since asynq keeps the retry time in
// whole Unix seconds, cut down (a retry then runs up to a second late, never
// before the RunAt Fail reported); asynq's default for any other error.
func retryDelay(n int, e error, t *hq.Task) time.Duration {
	var f *failure
	if errors.As(e, &f) {
		return f.delay + time.Second
	}
	return hq.DefaultRetryDelayFunc(n, e, t)
}

// quiet drops asynq's log lines; errors reach aebench through the API.
type quiet struct{}

func (quiet) Debug(...any) {}
func (quiet) Info(...any)  {}
func (quiet) Warn(...any)  {}
func (quiet) Error(...any) {}
func (quiet) Fatal(...any) {}

// Capabilities returns Caps().
func (s *Store) Capabilities() jobstore.Capabilities {
	cs := Caps()
	if len(s.o.Queues) > 1 {
		cs[jobstore.CapQueues] = true
	}
	if s.cfg.Native {
		delete(cs, jobstore.CapRetention)
	}
	return cs
}

// RemovesFinished implements jobstore.FinishedRemover: with peer_mode
// native, asynq deletes a task as it completes.
func (s *Store) RemovesFinished() string {
	if !s.cfg.Native {
		return ""
	}
	return "peer_mode native: tasks enqueued without asynq.Retention, asynq's default, are deleted as they complete, so a completion whose event a kill cut off cannot be read back"
}

// queueNames are asynq's queue names: Options.Queue, or with
// Options.Queues one per queue, <Queue>.<name>, highest priority first.
func (s *Store) queueNames() []string {
	if len(s.o.Queues) == 0 {
		return []string{s.o.Queue}
	}
	out := make([]string, len(s.o.Queues))
	for i, q := range s.o.Queues {
		out[i] = s.o.Queue + "." + q.Name
	}
	return out
}

func (s *Store) weight(i int) int {
	if i < len(s.o.Queues) {
		return s.o.Queues[i].Weight
	}
	return 1
}

// queueOf is asynq's queue for a job's NewJob.Queue ("": the first).
func (s *Store) queueOf(name string) (string, error) {
	if name == "" || len(s.o.Queues) == 0 {
		return s.queueNames()[0], nil
	}
	for _, q := range s.o.Queues {
		if q.Name == name {
			return s.o.Queue + "." + name, nil
		}
	}
	return "", fmt.Errorf("%w: queue %q is not one of the store's", jobstore.ErrInvalid, name)
}

// QueueNames, QueueWeights and QueuePolicy say the queues asynq runs
// (conformance.QueueLister).
func (s *Store) QueueNames() []string {
	var out []string
	for _, q := range s.o.Queues {
		out = append(out, q.Name)
	}
	return out
}

// QueueWeights are the queues' weights.
func (s *Store) QueueWeights() []int {
	var out []int
	for _, q := range s.o.Queues {
		out = append(out, q.Weight)
	}
	return out
}

// QueuePolicy is strict (asynq's StrictPriority) or weighted.
func (s *Store) QueuePolicy() string { return s.o.QueuePolicy }

// Close stops the asynq server (held and prefetched tasks go back to
// pending after Config.ShutdownTimeout) and closes asynq's connections.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srvOnce.Do(func() {}) // no server starts after Close
		s.mu.Lock()
		srv := s.srv
		s.mu.Unlock()
		if srv != nil {
			srv.Shutdown()
		}
		_ = s.client.Close()
		_ = s.insp.Close()
	})
	return nil
}

func (s *Store) check() error {
	select {
	case <-s.closing:
		return jobstore.ErrClosed
	default:
		return nil
	}
}
