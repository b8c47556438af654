package asynq

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
)

// Option documents one backend setting (the registry's, package spec).
type Option = spec.Option

// Option names.
const (
	OptionTaskCheck       = "task_check_interval"
	OptionDelayedCheck    = "delayed_task_check_interval"
	OptionJanitor         = "janitor_interval"
	OptionConcurrency     = "concurrency"
	OptionShutdownTimeout = "shutdown_timeout"
)

// Defaults. The intervals are asynq's own defaults, so an unconfigured run
// measures asynq as its users get it; ShutdownTimeout is shorter than
// asynq's 8 s because Close waits for it when tasks are still unclaimed.
const (
	DefaultTaskCheck       = time.Second
	DefaultDelayedCheck    = 5 * time.Second
	DefaultJanitor         = 8 * time.Second
	DefaultConcurrency     = 64
	DefaultShutdownTimeout = time.Second
)

// Config holds asynq's settings that aebench exposes.
type Config struct {
	// TaskCheckInterval is how long asynq's processor sleeps (half of it
	// plus a random part up to all of it) when the queue is empty: its idle
	// latency. asynq.Config.TaskCheckInterval.
	TaskCheckInterval time.Duration
	// DelayedTaskCheckInterval is how often asynq's forwarder moves due
	// scheduled and retry tasks to pending. asynq.Config.DelayedTaskCheckInterval.
	DelayedTaskCheckInterval time.Duration
	// JanitorInterval is how often expired completed tasks are deleted.
	JanitorInterval time.Duration
	// Concurrency is how many tasks asynq's server holds at once: the most
	// jobs the workers of one Store can have claimed, plus those prefetched.
	Concurrency int
	// ShutdownTimeout is how long Close lets held tasks finish before asynq
	// pushes them back to pending.
	ShutdownTimeout time.Duration
	// Native: peer_mode native (spec.OptionPeerMode): tasks are enqueued
	// as asynq's users do, without asynq.Retention (asynq's default
	// deletes a task as it completes) and without the header that carries
	// CreatedAt; contract keeps finished tasks for Options.Retention.
	Native bool
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{TaskCheckInterval: DefaultTaskCheck, DelayedTaskCheckInterval: DefaultDelayedCheck,
		JanitorInterval: DefaultJanitor, Concurrency: DefaultConcurrency, ShutdownTimeout: DefaultShutdownTimeout}
}

const durationAllowed = "a duration from 1ms to 1h (\"100ms\", \"1s\")"

// Options lists the settings ParseConfig reads.
func Options() []Option {
	return []Option{
		{Name: OptionTaskCheck, Allowed: durationAllowed, Default: DefaultTaskCheck.String(), ClaimPoll: true,
			Doc: "asynq.Config.TaskCheckInterval: the processor's sleep when the queue is empty (between half and 1.5 times it), so an idle job waits up to that long"},
		{Name: OptionDelayedCheck, Allowed: durationAllowed, Default: DefaultDelayedCheck.String(),
			Doc: "asynq.Config.DelayedTaskCheckInterval: how often the forwarder moves due delayed and retry tasks to pending"},
		{Name: OptionJanitor, Allowed: durationAllowed, Default: DefaultJanitor.String(),
			Doc: "asynq.Config.JanitorInterval: how often completed tasks past their retention are deleted"},
		{Name: OptionConcurrency, Allowed: "a whole number from 1 to 100000", Default: strconv.Itoa(DefaultConcurrency),
			Doc: "asynq.Config.Concurrency: tasks one Store's server holds at once (claimed or waiting for a Claim); set it to at least the jobs its workers keep in flight"},
		{Name: OptionShutdownTimeout, Allowed: durationAllowed, Default: DefaultShutdownTimeout.String(),
			Doc: "asynq.Config.ShutdownTimeout: how long Close waits for held tasks before asynq pushes them back to pending"},
		spec.PeerModeOption(),
	}
}

// ParseConfig reads the settings in extra (keys as Options names them) over
// the defaults; a bad value is an ErrInvalid naming the key and what is allowed.
func ParseConfig(extra map[string]string) (Config, error) {
	cfg := DefaultConfig()
	for _, d := range []struct {
		name string
		into *time.Duration
	}{{OptionTaskCheck, &cfg.TaskCheckInterval}, {OptionDelayedCheck, &cfg.DelayedTaskCheckInterval},
		{OptionJanitor, &cfg.JanitorInterval}, {OptionShutdownTimeout, &cfg.ShutdownTimeout}} {
		v, ok := extra[d.name]
		if !ok {
			continue
		}
		x, err := time.ParseDuration(v)
		if err != nil || x < time.Millisecond || x > time.Hour {
			return cfg, fmt.Errorf("%w: backend asynq: option %s %q: allowed is %s", jobstore.ErrInvalid, d.name, v, durationAllowed)
		}
		*d.into = x
	}
	if v, ok := extra[OptionConcurrency]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			return cfg, fmt.Errorf("%w: backend asynq: option %s %q: allowed is a whole number from 1 to 100000", jobstore.ErrInvalid, OptionConcurrency, v)
		}
		cfg.Concurrency = n
	}
	native, err := spec.PeerMode("asynq", extra)
	if err != nil {
		return cfg, err
	}
	cfg.Native = native
	return cfg, cfg.check()
}

func (c Config) check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{OptionTaskCheck, c.TaskCheckInterval}, {OptionDelayedCheck, c.DelayedTaskCheckInterval},
		{OptionJanitor, c.JanitorInterval}, {OptionShutdownTimeout, c.ShutdownTimeout}} {
		if d.v < time.Millisecond || d.v > time.Hour {
			return fmt.Errorf("%w: backend asynq: %s %v: allowed is %s", jobstore.ErrInvalid, d.name, d.v, durationAllowed)
		}
	}
	if c.Concurrency < 1 || c.Concurrency > 100000 {
		return fmt.Errorf("%w: backend asynq: %s %d: allowed is a whole number from 1 to 100000", jobstore.ErrInvalid, OptionConcurrency, c.Concurrency)
	}
	return nil
}
