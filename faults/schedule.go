// Package faults is aebench's fault injection: the seeded fault schedule a
// scenario's `faults:` section declares (parsed and validated here, with
// file:line errors), the fault kinds (worker crashes in process and worker
// process kills at crash points, recoverer and mover crashes, Redis
// restarts and pauses, network faults through an in-process toxiproxy), the
// Injector that fires them at their times, and the Tracker that measures
// recovery: for every job in flight at a fault, how long until it starts
// again, how many ran twice and how many were lost.
//
// Dependencies flow one way: the harness imports this package and hands the
// Injector its hooks (a Target); this package knows nothing of the harness,
// only the jobstore contract and rclient.
package faults

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/suggest"
)

// Kind names a fault.
type Kind string

// The fault kinds a scenario may schedule.
const (
	// WorkerCrash stops an in-process worker at a crash point: it drops its
	// leases without acking or heartbeating; a new worker replaces it after
	// ReplaceAfter.
	WorkerCrash Kind = "worker_crash"
	// WorkerKill SIGKILLs an `aebench worker` process at a crash point (or
	// at a random moment) and starts a new one after ReplaceAfter.
	WorkerKill Kind = "worker_kill"
	// RecovererCrash crashes the recoverer between its read and its script
	// step; the loop restarts after ReplaceAfter.
	RecovererCrash Kind = "recoverer_crash"
	// MoverCrash does the same to the Promote loop.
	MoverCrash Kind = "mover_crash"
	// RedisRestart kills the embedded redis-server (SIGKILL, nothing
	// flushed) and starts it again on the same port after Duration.
	RedisRestart Kind = "redis_restart"
	// RedisPause stops redis-server with SIGSTOP for Duration, then SIGCONT.
	RedisPause Kind = "redis_pause"
	// MemoryPressure fills memory with ballast keys for Duration.
	MemoryPressure Kind = "memory_pressure"
	// NetLatency adds Latency +- Jitter to every packet between the workers
	// and Redis for Duration.
	NetLatency Kind = "net_latency"
	// NetReset resets the workers' connections to Redis (TCP RST) for Duration.
	NetReset Kind = "net_reset"
	// NetTimeout black-holes the workers' connections for Duration: nothing
	// passes, calls end at their own deadlines.
	NetTimeout Kind = "net_timeout"
)

// MasterKill SIGKILLs the master of a spawned cluster that holds the
// queue's slot (a sharded queue's first shard) and leaves it down: with
// redis.replicas the cluster promotes its replica, and the ledger counts the
// acknowledged jobs the replica never got.
const MasterKill Kind = "master_kill"

// NetPartition cuts the replication links of the master that holds the
// queue's slot for Duration: its replicas stop receiving its writes while
// clients still reach it (spawned replicas replicate through a proxy each;
// see redisserver's replication links). A master_kill during the cut
// shows what an asynchronous failover loses.
const NetPartition Kind = "net_partition"

// WorkerLost is not scheduled: it is what a run records when a remote
// worker's connection ends before the run's stop (the host died, the
// network broke). Its jobs in flight are its affected jobs.
const WorkerLost Kind = "worker_lost"

// Kinds lists every kind, for errors and docs (Descriptors' order).
func Kinds() []Kind {
	var out []Kind
	for _, d := range Descriptors() {
		out = append(out, d.Kind)
	}
	return out
}

// Point is where in a worker's loop (or a maintenance call) a crash lands.
type Point string

// Crash points.
const (
	AfterClaim   Point = "after_claim"   // Claim returned the job; the handler has not started
	InHandler    Point = "in_handler"    // the handler is running
	AfterHandler Point = "after_handler" // the handler finished; Complete or Fail not sent
	// AfterComplete: Complete returned nil and its event has not left the
	// worker; only a worker_kill lands there (the coordinator must learn the
	// outcome by reading the record back).
	AfterComplete Point = "after_complete"
	// Random: a process kill at a random moment, not at a point.
	Random Point = "random"
	// BetweenSteps: a Recover or Promote call crashes after its plain read
	// and before the script that rechecks and moves.
	BetweenSteps Point = "between_steps"
)

// InLoop says whether p is a point in a worker's loop that a worker must
// reach (armed, then announced); a random kill lands wherever it is.
func (p Point) InLoop() bool { return p != Random }

// Labelled says whether a plot marker names p: a worker's point, not the
// maintenance loops' only one (or none).
func (p Point) Labelled() bool { return p != "" && p != BetweenSteps }

// WorkerPoints are the crash points inside the worker loop.
func WorkerPoints() []Point { return []Point{AfterClaim, InHandler, AfterHandler} }

// Fault is one entry of a scenario's faults list.
type Fault struct {
	Kind Kind `json:"kind"`
	// At lists fixed times, from the start of the run (warm-up included).
	At []time.Duration `json:"at_ns,omitempty"`
	// AtPhase, when an item of at named a phase of the load profile
	// (overload+10s), holds that name at the item's index ("" for a time
	// from the run's start); At then holds the offset into the phase until
	// the scenario places it (ResolvePhases).
	AtPhase []string `json:"at_phase,omitempty"`
	// Every fires the fault repeatedly, each gap drawn uniformly from
	// [Every/2, 3*Every/2] (seeded), from From until Until.
	Every time.Duration `json:"every_ns,omitempty"`
	From  time.Duration `json:"from_ns,omitempty"`
	Until time.Duration `json:"until_ns,omitempty"` // 0: the end of the measured window
	// Point is the crash point (worker and maintenance kinds).
	Point Point `json:"point,omitempty"`
	// Worker picks the victim by index among the workers of its kind; -1 picks one at random (seeded).
	Worker int `json:"worker"`
	// Steps (recoverer_crash, mover_crash) is how many of the call's
	// commands go through before the crash; 0 means 1, the plain read. A
	// seed variant's mover that moves job by job in separate commands
	// (ZREM, then XADD) is caught between them with steps 2.
	Steps int `json:"steps,omitempty"`
	// ReplaceAfter is how long a crashed worker, process or loop stays down.
	ReplaceAfter time.Duration `json:"replace_after_ns,omitempty"`
	// Duration is how long a Redis or network fault lasts.
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Latency and Jitter are for NetLatency.
	Latency time.Duration `json:"latency_ns,omitempty"`
	Jitter  time.Duration `json:"jitter_ns,omitempty"`
	// Fill (memory_pressure) is how much ballast to write, as a share of
	// maxmemory (1.2: past it); BallastTTL the ballast keys' TTL (0: none,
	// so volatile-* policies can evict only what has a TTL: the jobs'
	// records with a retention).
	Fill       float64       `json:"fill,omitempty"`
	BallastTTL time.Duration `json:"ballast_ttl_ns,omitempty"`

	Line, Column int `json:"-"`
}

// Defaults of a fault entry.
const (
	DefaultReplaceAfter = 500 * time.Millisecond
	DefaultDuration     = 2 * time.Second
	DefaultLatency      = 50 * time.Millisecond
	// DefaultFill: memory_pressure writes 120% of maxmemory.
	DefaultFill = 1.2
)

// Descriptor is the fault's kind's descriptor (zero for an unknown kind).
func (f Fault) Descriptor() Descriptor {
	d, _ := Describe(f.Kind)
	return d
}

// IsWorkerKind: the fault acts on workers.
func (f Fault) IsWorkerKind() bool { return f.Descriptor().Worker }

// NeedsProxy: the fault acts on the network between workers and Redis.
func (f Fault) NeedsProxy() bool { return f.Descriptor().Needs.Proxy }

// NeedsReplicas: the fault acts on a spawned cluster's masters and their
// replicas.
func (f Fault) NeedsReplicas() bool { return f.Descriptor().Needs.Replicas }

// NeedsOwnedRedis: the fault acts on the redis-server process.
func (f Fault) NeedsOwnedRedis() bool { return f.Descriptor().Needs.OwnedRedis }

// String is a short description for tables and plot markers.
func (f Fault) String() string {
	s := string(f.Kind)
	if f.Point != "" {
		s += "@" + string(f.Point)
	}
	return s
}

// Error is a problem in the faults section, located in the file.
type Error struct {
	Line, Column int
	Field        string
	Msg          string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

// Parse reads a scenario's `faults:` value: a list of mappings.
func Parse(n *yaml.Node) ([]Fault, error) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	errAt := func(at *yaml.Node, field, msg string) error {
		return &Error{Line: at.Line, Column: at.Column, Field: field, Msg: msg}
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errAt(n, "faults", "must be a list of mappings, each with a kind: "+kindList())
	}
	var out []Fault
	for i, item := range n.Content {
		for item.Kind == yaml.AliasNode {
			item = item.Alias
		}
		fp := fmt.Sprintf("faults[%d]", i)
		if item.Kind != yaml.MappingNode {
			return nil, errAt(item, fp, "must be a mapping with a kind: "+kindList())
		}
		f := Fault{Worker: -1, Line: item.Line, Column: item.Column}
		seen := map[string]*yaml.Node{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			for v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if seen[k.Value] != nil {
				return nil, errAt(k, fp+"."+k.Value, "appears twice")
			}
			seen[k.Value] = v
			if err := f.set(k.Value, v); err != nil {
				if e, ok := err.(*Error); ok {
					e.Field = fp + "." + e.Field
					return nil, e
				}
				at := v
				if strings.HasPrefix(err.Error(), "unknown field") {
					at = k
				}
				return nil, errAt(at, fp+"."+k.Value, err.Error())
			}
		}
		if seen["kind"] == nil {
			return nil, errAt(item, fp, "needs a kind: "+kindList())
		}
		if err := f.check(); err != nil {
			at := item
			if v := seen[err.field]; v != nil {
				at = v
			}
			return nil, errAt(at, fp+"."+err.field, err.msg)
		}
		out = append(out, f)
	}
	return out, nil
}

func kindList() string { return strings.Join(kindNames(), ", ") }

func kindNames() []string {
	var s []string
	for _, k := range Kinds() {
		s = append(s, string(k))
	}
	return s
}

// phaseTime reads one item of at: a duration from the run's start, or a
// phase of the load profile and an offset into it (overload, overload+10s).
func phaseTime(v *yaml.Node) (string, time.Duration, error) {
	if v.Kind == yaml.ScalarNode {
		name, off, plus := strings.Cut(strings.TrimSpace(v.Value), "+")
		if isPhaseName(name) {
			if !plus {
				return name, 0, nil
			}
			d, err := time.ParseDuration(strings.TrimSpace(off))
			if err != nil || d < 0 || d > MaxDuration {
				return "", 0, fmt.Errorf("%q: allowed: a duration (3s), a phase (overload) or a phase and an offset into it (overload+10s)", v.Value)
			}
			return name, d, nil
		}
	}
	d, err := dur(v, 0)
	if err != nil {
		return "", 0, fmt.Errorf("%w; or a phase of the profile and an offset into it (overload+10s)", err)
	}
	return "", d, nil
}

// isPhaseName says name looks like a phase's where a time could be: a
// letter or _ first, so 10s and 1h30m stay durations.
func isPhaseName(name string) bool {
	for i, r := range name {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r != '-' && (r < '0' || r > '9')) {
			return false
		}
	}
	return name != ""
}

// ResolvePhases places the items of at given relative to a phase: start
// says where a phase begins from the run's start (false: no such phase).
// It returns a copy; f is left as parsed.
func (f Fault) ResolvePhases(start func(phase string) (time.Duration, bool)) (Fault, error) {
	if f.AtPhase == nil {
		return f, nil
	}
	out := f
	out.At = slices.Clone(f.At)
	for i, ph := range f.AtPhase {
		if ph == "" {
			continue
		}
		s, ok := start(ph)
		if !ok {
			return f, fmt.Errorf("at %s+%s names no phase of the profile", ph, f.At[i])
		}
		out.At[i] = s + f.At[i]
	}
	return out, nil
}

func dur(v *yaml.Node, min time.Duration) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("expects a duration (500ms, 2s), not a list or mapping")
	}
	if v.Value == "0" {
		if min > 0 {
			return 0, fmt.Errorf("0 is below the minimum %s", min)
		}
		return 0, nil
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 500ms, 2s)", v.Value)
	}
	if d < min || d < 0 {
		return 0, fmt.Errorf("%s is below the minimum %s", d, min)
	}
	if d > MaxDuration {
		return 0, fmt.Errorf("%s is above the maximum 24h (a run lasts at most 24h)", d)
	}
	return d, nil
}

// MaxDuration bounds every duration of a fault, as the scenario bounds a
// run's duration.
const MaxDuration = 24 * time.Hour

func (f *Fault) set(key string, v *yaml.Node) error {
	var err error
	switch key {
	case "kind":
		k := Kind(v.Value)
		if v.Kind != yaml.ScalarNode || !slices.Contains(Kinds(), k) {
			return fmt.Errorf("%q is not a fault kind%s; allowed: %s", v.Value, suggest.DidYouMean(v.Value, kindNames()), kindList())
		}
		f.Kind = k
	case "at":
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		if len(items) == 0 {
			return fmt.Errorf("an empty list; give one time or several (3s, [2s, 5s])")
		}
		for i, it := range items {
			phase, d, err := phaseTime(it)
			if err != nil {
				return err
			}
			if phase != "" && f.AtPhase == nil {
				f.AtPhase = make([]string, len(items))
			}
			if phase != "" {
				f.AtPhase[i] = phase
			}
			f.At = append(f.At, d)
		}
	case "every":
		f.Every, err = dur(v, 10*time.Millisecond)
	case "from":
		f.From, err = dur(v, 0)
	case "until":
		f.Until, err = dur(v, time.Millisecond)
	case "point":
		f.Point = Point(v.Value)
	case "worker":
		n, perr := strconv.Atoi(v.Value)
		if v.Value == "random" {
			n, perr = -1, nil
		}
		if perr != nil || n < -1 || n > 1023 {
			return fmt.Errorf("%q: allowed is a worker index 0..1023 or random", v.Value)
		}
		f.Worker = n
	case "steps":
		n, perr := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || perr != nil || n < 1 || n > 1000 {
			return fmt.Errorf("%q: allowed is an integer 1..1000 (commands of the call before the crash)", v.Value)
		}
		f.Steps = n
	case "replace_after":
		f.ReplaceAfter, err = dur(v, 0)
	case "duration":
		f.Duration, err = dur(v, time.Millisecond)
	case "latency":
		f.Latency, err = dur(v, time.Millisecond)
	case "jitter":
		f.Jitter, err = dur(v, 0)
	case "fill":
		x, perr := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || perr != nil || x < 0.05 || x > 10 {
			return fmt.Errorf("%q: allowed is a share of maxmemory 0.05..10 (1.2: 20%% past it)", v.Value)
		}
		f.Fill = x
	case "ballast_ttl":
		f.BallastTTL, err = dur(v, 0)
	default:
		return fmt.Errorf("unknown field %q; allowed: kind, at, every, from, until, point, worker, steps, replace_after, duration, latency, jitter, fill, ballast_ttl", key)
	}
	return err
}

type checkErr struct{ field, msg string }

// check validates what depends on the kind, and sets defaults.
func (f *Fault) check() *checkErr {
	if len(f.At) == 0 && f.Every == 0 {
		return &checkErr{"at", "a fault needs at (a time or a list of times from the run's start) or every (a mean interval)"}
	}
	if len(f.At) > 0 && f.Every > 0 {
		return &checkErr{"every", "give at or every, not both"}
	}
	if f.Until > 0 && f.Until <= f.From {
		return &checkErr{"until", fmt.Sprintf("%s is not after from %s", f.Until, f.From)}
	}
	d := f.Descriptor()
	if e := f.checkPoint(d); e != nil {
		return e
	}
	if d.Replace && f.ReplaceAfter == 0 {
		f.ReplaceAfter = DefaultReplaceAfter
	}
	if f.Steps > 0 && !d.Steps {
		return &checkErr{"steps", fmt.Sprintf("%s takes no steps (only recoverer_crash and mover_crash do)", f.Kind)}
	}
	if !d.Worker && f.Worker >= 0 {
		return &checkErr{"worker", fmt.Sprintf("%s does not act on a worker", f.Kind)}
	}
	if d.Duration {
		if f.Duration == 0 {
			f.Duration = DefaultDuration
		}
	} else if f.Duration != 0 {
		return &checkErr{"duration", fmt.Sprintf("%s has no duration (use replace_after for how long the victim stays down)", f.Kind)}
	}
	if d.Ballast && f.Fill == 0 {
		f.Fill = DefaultFill
	} else if !d.Ballast && (f.Fill != 0 || f.BallastTTL != 0) {
		return &checkErr{"fill", fmt.Sprintf("%s writes no ballast (only memory_pressure does)", f.Kind)}
	}
	if d.Latency {
		if f.Latency == 0 {
			f.Latency = DefaultLatency
		}
		if f.Jitter > f.Latency {
			return &checkErr{"jitter", fmt.Sprintf("%s is above latency %s", f.Jitter, f.Latency)}
		}
	} else if f.Latency != 0 || f.Jitter != 0 {
		return &checkErr{"latency", fmt.Sprintf("%s takes no latency or jitter", f.Kind)}
	}
	return nil
}

// checkPoint checks (and defaults) the crash point against the kind's.
func (f *Fault) checkPoint(d Descriptor) *checkErr {
	if d.Points == nil {
		if f.Point != "" {
			return &checkErr{"point", fmt.Sprintf("%s takes no crash point", f.Kind)}
		}
		return nil
	}
	if f.Point == "" {
		f.Point = d.Points[0]
		return nil
	}
	if !slices.Contains(d.Points, f.Point) {
		var s []string
		for _, p := range d.Points {
			s = append(s, string(p))
		}
		return &checkErr{"point", fmt.Sprintf("%q is not a crash point of %s; allowed: %s", f.Point, f.Kind, strings.Join(s, ", "))}
	}
	return nil
}

// Event is one firing of a fault in a run's schedule.
type Event struct {
	// Index numbers the events of a run in time order, from 1.
	Index int
	At    time.Duration // from the run's start
	Fault Fault
	// Point is the crash point of this firing (Random for a worker_crash
	// resolves to one of the worker points here, seeded).
	Point Point
	// Worker is the victim's index, or -1 when the target decides.
	Worker int
}

// Plan expands faults into the events of one run of length end (warm-up
// plus measured window), in time order. The same seed gives the same plan.
func Plan(fs []Fault, seed int64, end time.Duration) []Event {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xfa017))
	var out []Event
	add := func(f Fault, at time.Duration) {
		ev := Event{At: at, Fault: f, Point: f.Point, Worker: f.Worker}
		if f.Kind == WorkerCrash && f.Point == Random {
			ps := WorkerPoints()
			ev.Point = ps[rng.IntN(len(ps))]
		}
		out = append(out, ev)
	}
	for _, f := range fs {
		until := end
		if f.Until > 0 && f.Until < until {
			until = f.Until
		}
		for _, at := range f.At {
			if at < end {
				add(f, at)
			}
		}
		if f.Every > 0 {
			t := f.From
			for {
				t += f.Every/2 + time.Duration(rng.Int64N(int64(f.Every)+1))
				if t >= until {
					break
				}
				add(f, t)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	for i := range out {
		out[i].Index = i + 1
	}
	return out
}
