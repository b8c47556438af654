// Package jobstore holds the JobStore contract that every aebench backend
// implements and every harness component drives: the Store interface, the job
// record, leases, options, capabilities and the sentinel errors that name
// contract outcomes.
//
// The contract is at-least-once: a claimed job is protected by a lease (a
// random token and a deadline on the store's clock). A worker extends the lease
// while it works (Extend), then Complete or Fail it. Any call that presents a
// lease whose token no longer matches the job record (because Recover or
// another claimer took the job over) gets ErrLeaseLost and changes nothing:
// that is the fencing the seed designs lacked.
//
// Every time decision (is a job due, has a lease expired, when does a retry
// run) uses Options.Clock, passed into Redis scripts as an argument and never
// read from Redis TIME, so tests and simulations can run on a controlled clock.
// Times are kept with millisecond precision.
//
// Rules every backend follows, and the conformance suite checks:
//   - Fencing is by token alone: a lease past its deadline that no Recover has
//     taken yet still completes (nobody else holds the job), as in asynq.
//   - Fail with RetryCount < MaxRetries schedules a retry at
//     now + Backoff.Delay(RetryCount) (jittered), Status Scheduled,
//     RetryCount+1; otherwise the job is dead-lettered (Status Failed).
//     MaxRetries 3 thus allows 4 runs in all.
//   - Recover treats an expired lease like a failure with no delay: the job is
//     Scheduled and due at once with RetryCount+1, or dead-lettered with Error
//     "lease expired" when its retries are spent.
//   - A backend that implements Mover may leave due jobs unclaimable until
//     Promote runs; callers that drive such a store run the mover (the
//     harness in a loop, the conformance suite before each claim).
//   - Bad input (empty id, negative MaxRetries, Max or Lease <= 0, a payload
//     over Options.MaxPayload) is rejected with an error wrapping ErrInvalid
//     that names the field and what is allowed.
//
// Every aebench job store keeps all of these rules. A store that is not a
// job store in the usual sense (a reference floor, a peer queue) is held
// only to the rules whose core capability it declares (CoreCapabilities:
// fencing, lease-recovery, retries, delayed-jobs, ...).
package jobstore

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"time"
)

// Status is a job's state. The numbers are AsyncEndpoints' JobStatus values.
type Status int

// Job states, as AsyncEndpoints numbers them.
const (
	StatusQueued     Status = 100 // due now (or at RunAt) and never failed
	StatusScheduled  Status = 200 // a retry (after Fail or Recover), due at RunAt
	StatusInProgress Status = 300 // claimed under a lease
	StatusCompleted  Status = 400
	StatusFailed     Status = 500 // dead-lettered: retries exhausted
	StatusCanceled   Status = 600
)

func (s Status) String() string {
	switch s {
	case StatusQueued:
		return "Queued"
	case StatusScheduled:
		return "Scheduled"
	case StatusInProgress:
		return "InProgress"
	case StatusCompleted:
		return "Completed"
	case StatusFailed:
		return "Failed"
	case StatusCanceled:
		return "Canceled"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Job is a job record: the fields of seed 001 (AsyncEndpoints' Job) plus
// RunAt, the lease token and the lease deadline. Zero times mean "not set".
type Job struct {
	ID   string
	Name string
	// Queue is the queue the job sits in, from a store with CapQueues.
	Queue       string
	Status      Status
	Headers     map[string][]string
	RouteParams map[string]string
	QueryParams map[string][]string
	Payload     []byte
	Result      []byte
	Error       string
	RetryCount  int
	MaxRetries  int
	// RetryDelayUntil is when a retried job may run again; it equals RunAt
	// after a Fail that schedules a retry.
	RetryDelayUntil time.Time
	WorkerID        string
	CreatedAt       time.Time
	StartedAt       time.Time
	CompletedAt     time.Time
	LastUpdatedAt   time.Time
	// RunAt is the earliest time the job may be claimed.
	RunAt time.Time
	// LeaseToken is the token of the current (or last) claim.
	LeaseToken string
	// LeaseDeadline is the deadline of the current claim on the store's clock.
	LeaseDeadline time.Time
	// Ref is the backend's own handle on the job in its index (a ZSET member,
	// a stream entry id, a bucket key); opaque outside the backend.
	Ref string
}

// NewJob is what a producer enqueues.
type NewJob struct {
	// ID must be non-empty and unique within the queue; a duplicate of a job
	// still in the store is rejected with ErrDuplicateID.
	ID      string
	Name    string
	Payload []byte
	// RunAt is the earliest time the job may start; zero means now. A past
	// RunAt is kept as given, so a backdated job sorts before later ones.
	RunAt       time.Time
	MaxRetries  int
	Headers     map[string][]string
	RouteParams map[string]string
	QueryParams map[string][]string
	// Queue names the job's queue in a store with CapQueues ("": its
	// first); a store without it has one queue and ignores it.
	Queue string
}

// Lease is a worker's claim on one job. It is a value: Extend returns a new one.
type Lease struct {
	JobID    string
	Token    string
	Deadline time.Time
	// Attempt is the job's RetryCount when it was claimed; Fail derives the
	// retry's backoff from it.
	Attempt int
}

// Claimed is a job handed to a worker together with its lease.
//
// Job is the claim's view of the record: what a worker needs to run the job
// (ID, Name, Payload, RetryCount) and what the claim itself wrote (Status
// InProgress, WorkerID, StartedAt, LastUpdatedAt, LeaseToken,
// LeaseDeadline), each equal to what Get returns right after the claim. A
// store may leave every other field zero (the aebench strategies do: their
// claim reads four fields of the record, not all of it, which was about a
// sixth of a batched job's Redis work); Get reads the whole record.
type Claimed struct {
	Job   Job
	Lease Lease
}

// ClaimRequest asks for up to Max due jobs.
type ClaimRequest struct {
	// WorkerID is recorded in each claimed job's record.
	WorkerID string
	// Max is the most jobs to return; it must be > 0.
	Max int
	// Lease is how long the claim holds before Recover may take the job back; it must be > 0.
	Lease time.Duration
	// Wait is how long to wait for work when none is due: 0 returns at once.
	// Backends with CapBlockingClaim block in Redis; others poll every
	// Options.PollInterval. A context deadline shorter than Wait wins.
	Wait time.Duration
}

// FailResult says what Fail did with a job.
type FailResult struct {
	// Status is StatusScheduled (a retry is due at RunAt) or StatusFailed (dead-lettered).
	Status Status
	RunAt  time.Time
}

// RecoverResult lists the jobs one Recover call took back from expired leases.
type RecoverResult struct {
	// Requeued are due again, each with RetryCount+1.
	Requeued []string
	// DeadLettered had no retries left.
	DeadLettered []string
	// Returned are due again with RetryCount unchanged: a store that hands
	// jobs to blocked claimers (a hand-off) leased them to a claimer that
	// never touched them (no Extend, Complete or Fail within the
	// provisional lease: it died while registered, or its reply was
	// lost), so no attempt was made.
	Returned []string
}

// Len is how many jobs r took back.
func (r RecoverResult) Len() int { return len(r.Requeued) + len(r.DeadLettered) + len(r.Returned) }

// Stats counts a queue's jobs. Due and Delayed count jobs waiting to run
// (RunAt <= now and RunAt > now on the store's clock); a backend that keeps
// delayed jobs out of sight (see each backend's package doc) says how it counts.
type Stats struct {
	Due        int64
	Delayed    int64
	InProgress int64
	Dead       int64
	// Completed counts completions since the queue was created; records
	// themselves expire after Options.Retention.
	Completed int64
}

// Add adds o's counts to s: a store of several stores (shards, queues)
// reports their sum.
func (s *Stats) Add(o Stats) {
	s.Due += o.Due
	s.Delayed += o.Delayed
	s.InProgress += o.InProgress
	s.Dead += o.Dead
	s.Completed += o.Completed
}

// Store is the JobStore contract. All methods are safe for concurrent use.
type Store interface {
	// Enqueue stores jobs atomically: all of them, or none when any is invalid
	// or a duplicate (ErrDuplicateID, ErrInvalid).
	Enqueue(ctx context.Context, jobs ...NewJob) error
	// Claim takes up to req.Max due jobs, oldest RunAt first (FIFO among equal
	// RunAt), each under a fresh lease. It returns an empty slice, not an
	// error, when no job became due within req.Wait. A lease may end
	// sooner than req.Lease (Lease.Deadline says when): a store that hands
	// jobs to blocked claimers grants a provisional lease, so that a job
	// handed to a claimer that died is soon taken back (Recover's
	// Returned); the holder keeps the job by its first Extend, Complete or
	// Fail before that deadline. A Claim that fails may still return jobs
	// it leased to the caller (handed to it before the failure): the caller
	// owns them as any claimed job.
	Claim(ctx context.Context, req ClaimRequest) ([]Claimed, error)
	// Extend moves a lease's deadline to now+d (a heartbeat).
	Extend(ctx context.Context, l Lease, d time.Duration) (Lease, error)
	// Complete marks a job Completed with its result; the record then expires
	// after Options.Retention.
	Complete(ctx context.Context, l Lease, result []byte) error
	// Fail records reason and either schedules a retry with backoff (while
	// RetryCount < MaxRetries; RetryCount is incremented) or dead-letters the job.
	Fail(ctx context.Context, l Lease, reason string) (FailResult, error)
	// Recover takes back up to max jobs whose lease deadline has passed:
	// each becomes due now with RetryCount+1, or is dead-lettered when its
	// retries are spent. Any number of recoverers may run at once; each stuck
	// job is recovered by exactly one of them.
	Recover(ctx context.Context, max int) (RecoverResult, error)
	// Get returns a job's record, or ErrNotFound.
	Get(ctx context.Context, id string) (Job, error)
	// Cancel cancels a Queued or Scheduled job (ErrNotCancelable otherwise).
	Cancel(ctx context.Context, id string) error
	// Stats counts the queue's jobs.
	Stats(ctx context.Context) (Stats, error)
	// Capabilities declares what the strategy can and cannot do.
	Capabilities() Capabilities
	// Close releases what the store holds; it does not close the Redis client.
	Close() error
}

// Mover is implemented by backends that keep delayed jobs apart from ready
// ones and can promote them in a separate loop (a background mover). Promote
// moves up to max jobs that are due on the store's clock and reports how many
// it moved. Several movers may run at once: a job is promoted exactly once.
type Mover interface {
	Promote(ctx context.Context, max int) (int, error)
}

// Auditor is implemented by stores that can count, once a run has drained,
// what their design left behind or did on the way that the ledger of
// worker events cannot see: entries a claim refused and left pending, a job
// added to a stream twice, a job promoted before its time. Audit returns
// counts by name (snake_case); the harness records them as the run's
// "audit" and the claims command reads the seed flaws off them. A count is
// either read from Redis after the drain (the same read for a seed variant
// and its corrected store) or counted by the store as it ran; each
// store's doc says which. It is optional, and never on a hot path.
type Auditor interface {
	Audit(ctx context.Context) (map[string]int64, error)
}

// Location is where Locate found a job's record.
type Location struct {
	// Found: the record exists (Status is then its status).
	Found  bool
	Status Status
	// Reachable: a finished record, or an open one that the store's claims,
	// movers or recovery will reach: waiting in an index they read (a queue
	// or delayed set member, a stream entry, a bucket member) or held under
	// a lease in the active index. An open record that is not reachable is
	// in no queue: nothing will ever run it.
	Reachable bool
	// Later, on an open record that is not Reachable: the system under
	// test takes it back itself, later than the run can wait (RQ retries
	// an abandoned job once its started-registry entry expires), in the
	// store's words. The read-back counts such a job unfinished, not lost.
	Later string
}

// FinishedRemover is implemented by a store that deletes a job's record
// when the job finishes (a peer on its own defaults: BullMQ's
// removeOnComplete). RemovesFinished says so in the store's words, or "".
// The read-back then cannot tell a started job that finished, its event
// cut off, from one that vanished: it counts a started job it no longer
// finds as unconfirmed, declared with these words, never as lost or
// completed. A job never started and not found is still lost.
type FinishedRemover interface {
	RemovesFinished() string
}

// Locator is implemented by stores that can tell, for a batch of job ids,
// whether each record sits where the store will reach it. The harness's
// read-back after the drain asks it for every job the ledger still holds
// open, so a job a mover or a claim dropped is counted lost whatever the
// backlog beside it. It reads, never writes.
type Locator interface {
	Locate(ctx context.Context, ids []string) ([]Location, error)
}

// Completion is one lease to complete, with its result.
type Completion struct {
	Lease  Lease
	Result []byte
}

// BatchCompleter is implemented by stores that can acknowledge many leases
// in one call (one round trip where the strategy allows), the way a worker
// that flushes its acknowledgements in batches wants to. It is optional:
// CompleteAll falls back to Complete for a store without it.
//
// CompleteMany completes each lease as Complete would, independently: one
// whose token no longer holds the job gets ErrLeaseLost (and changes
// nothing), an invalid one ErrInvalid, and the others complete. It returns
// one error (nil: completed) per completion, in order, and a non-nil second
// error only when the call as a whole failed (Redis unreachable, store
// closed), in which case any of the completions may or may not have
// happened.
type BatchCompleter interface {
	CompleteMany(ctx context.Context, cs []Completion) ([]error, error)
}

// CompleteAll completes every completion in cs: in one CompleteMany call
// when s implements BatchCompleter, else one Complete each. The per-lease
// errors and the whole-call error mean what they mean for CompleteMany; in
// the fallback, an error that is not a contract outcome (ErrLeaseLost,
// ErrNotFound, ErrInvalid) stops the loop and is the whole-call error.
func CompleteAll(ctx context.Context, s Store, cs []Completion) ([]error, error) {
	if b, ok := s.(BatchCompleter); ok {
		return b.CompleteMany(ctx, cs)
	}
	errs := make([]error, len(cs))
	for i, c := range cs {
		err := s.Complete(ctx, c.Lease, c.Result)
		if err != nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid) {
			return errs, err
		}
		errs[i] = err
	}
	return errs, nil
}

// Sentinel errors for contract outcomes. Backends wrap them with %w; test with errors.Is.
var (
	ErrNotFound      = errors.New("jobstore: job not found")
	ErrDuplicateID   = errors.New("jobstore: duplicate job id")
	ErrLeaseLost     = errors.New("jobstore: lease lost (job recovered or taken over)")
	ErrNotCancelable = errors.New("jobstore: job is not queued or scheduled")
	ErrInvalid       = errors.New("jobstore: invalid argument")
	ErrClosed        = errors.New("jobstore: store closed")
	// ErrUnsupported: a wrapper (a sharded or simulated-time store) was
	// asked for an optional method its store does not implement.
	ErrUnsupported = errors.New("jobstore: not supported by this store")
	// ErrNotReplicated: the write reached the master but fewer replicas
	// than Options.WaitReplicas confirmed it within WaitTimeout; the job
	// may exist, and a failover may lose it. Not an acknowledgement.
	ErrNotReplicated = errors.New("jobstore: write not confirmed by the replicas asked for")
)

// ExternalWorkers is implemented by a store whose jobs run in the worker
// loop of the job system it stands for (a peer behind a driver process,
// docs/drivers.md), not in aebench's Claim/Complete workers. The harness
// then starts every worker of a run as WorkerCommand's process and reads
// its events (started, completed, failed) into the ledger, as it does for
// its own worker processes.
type ExternalWorkers interface {
	WorkerCommand(w WorkerSpec) (*exec.Cmd, error)
}

// Serving is implemented by a store whose jobs run in its own worker loop
// in this process (asynq's Server calling its handler). In a run without
// faults whose workers are all in process, or all worker processes, the
// harness then runs no Claim loop: Serve calls h for each job on the goroutine that dequeued it, as
// the system's users run it. Through Claim, each job would pass from that
// goroutine to a claimer and back, two goroutine hand-offs a job that the
// system's users never pay. A Serving store still implements Claim for the
// runs that need aebench's own workers (crash points).
type Serving interface {
	// Serve runs the store's worker loop until ctx ends, then stops it and
	// returns when its handlers have returned. A Serve after a Claim (or a
	// second Serve) is ErrInvalid: one store runs one loop.
	Serve(ctx context.Context, h ServeFunc) error
}

// ServeFunc runs one served job c and ends it with end.Complete or
// end.Fail; one that returns without either (its ctx ended) leaves the
// job to the store, as a handler cut off by a shutdown does.
type ServeFunc func(ctx context.Context, c Claimed, end Ender)

// Ender ends a served job; Complete and Fail mean what they mean on a
// Store, for the job's attempt.
type Ender interface {
	Complete(result []byte) error
	Fail(reason string) (FailResult, error)
}

// WorkerSpec is one worker process of an ExternalWorkers store.
type WorkerSpec struct {
	Index, Gen  int // worker index in the run, replacement count
	Concurrency int // jobs the process runs at once
	// Addr and Password reach Redis from the worker: the network-fault
	// proxy when the run has one.
	Addr, Password string
	// Lease is the scenario's workers.lease: a system with a lock or
	// visibility timeout sets it from this.
	Lease time.Duration
	// Faults: the run schedules faults. A kill cuts off whatever events the
	// process has not yet written, and a cut-off completion of a system that
	// keeps no record of finished jobs would read as a lost job, so the
	// process writes each event as it happens instead of gathering them.
	Faults bool
}

// HandlerPlanner is implemented by ExternalWorkers stores: the harness gives
// them its handler's plan (how long attempt a of job id runs, and whether it
// fails) before the first Enqueue, so the system's own worker plays the
// same handler as aebench's workers do.
type HandlerPlanner interface {
	SetHandlerPlan(plan func(id string, attempt int) (time.Duration, bool))
}

// LossDeclarer is implemented by a store whose design loses jobs under
// some faults, by its own documents (Sidekiq's open-source fetch under a
// SIGKILL): under those fault kinds, a lost job that such a fault caught
// in flight (started by the killed process, not finished) is that
// system's documented behaviour, reported with its count, not a failed
// run. Every other lost job still fails the run, job by job, not by count.
type LossDeclarer interface {
	DeclaredLoss() (faultKinds []string, why string)
}

// HoldDeclarer is implemented by a LossDeclarer whose worker process may
// hold jobs it has not yet reported started (Sidekiq's scheduled poller
// between ZPOPBYSCORE and LPUSH): HoldsExtra is how many such jobs one
// process may hold. Under each fault of a declared kind, up to that many
// lost jobs per process it hit (one for a kill, every process for a Redis
// fault) are declared too, each acknowledged before the fault, due by then
// and never started.
type HoldDeclarer interface {
	HoldsExtra() int
}

// EarlyDeclarer is implemented by a store whose design may start a delayed
// job before its RunAt, by up to max, by its own code (RQ scores scheduled
// jobs in whole seconds): such early starts are reported with their count
// as that system's behaviour; an earlier start is still a problem.
type EarlyDeclarer interface {
	DeclaredEarly() (max time.Duration, why string)
}
