package driver

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// The drivers in this repository (drivers/<name>/, each with its README
// and pinned versions). What each declares is its hello's; Declared below
// mirrors it for listings made without running the driver, and a test
// holds the two equal.

// BullMQ is the Node driver: BullMQ and ioredis pinned in its
// package-lock.json, installed with npm ci.
var BullMQ = Spec{Name: "bullmq", Command: []string{"node", "driver.js"}, Needs: "node_modules/bullmq/package.json",
	Install: "Node.js 20 and npm (apt-get install nodejs npm), then npm ci in drivers/bullmq"}

// Sidekiq is the Ruby driver: Debian's ruby-sidekiq (6.4).
var Sidekiq = Spec{Name: "sidekiq", Command: []string{"ruby", "driver.rb"}, Probe: []string{"ruby", "-e", "require 'sidekiq'"},
	Install: "apt-get install ruby-sidekiq"}

// RQ is the Python driver on PyPI's RQ 3.0.0 and redis-py 8.1, in
// drivers/rq/.venv, made by `make drivers` from requirements.lock (pinned
// with hashes).
var RQ = Spec{Name: "rq", Command: []string{".venv/bin/python", "driver.py"}, Needs: ".venv/bin/rq",
	Install: "apt-get install python3-venv, then make drivers (a venv in drivers/rq from its requirements.lock)"}

// Celery is the Python driver on PyPI's Celery 5.7.0 with its Redis
// transport, in drivers/celery/.venv, made by `make drivers` from
// requirements.lock (pinned with hashes).
var Celery = Spec{Name: "celery", Command: []string{".venv/bin/python", "driver.py"}, Needs: ".venv/bin/celery",
	Install: "apt-get install python3-venv, then make drivers (a venv in drivers/celery from its requirements.lock)"}

// Specs lists the drivers in listing order.
func Specs() []Spec { return []Spec{BullMQ, Sidekiq, RQ, Celery} }

// Declared is what a driver's hello declares, for listings and the
// applicability of scenarios before any driver runs.
type Declared struct {
	Doc      string
	Loses    []string // fault kinds under which it declares losing in-flight jobs
	Recovers bool     // it takes back a killed worker's jobs itself
	// Queues: the claim policies it serves over several queues (its
	// hello's caps.queues; registry.Backend.NativeQueues).
	Queues []string
	// Options are its backend options beyond peer_mode, passed to every
	// process in Config.Options (durations as whole milliseconds, under
	// the option's name + "_ms").
	Options []Option
}

// Option is a driver's backend option: a duration or a bool.
type Option struct {
	Name, Doc, Default string
	Duration           bool // a duration from 1ms to 24h; else true or false
}

// DeclaredBy holds each driver's declaration by name.
var DeclaredBy = map[string]Declared{
	"bullmq": {Doc: "BullMQ (Node): Queue.addBulk, Worker with concurrency, delayed jobs, attempts with backoff, stalled-job recovery; store.queues as job priorities (strict)", Recovers: true,
		Queues: []string{"strict"}},
	"sidekiq": {Doc: "Sidekiq (Ruby): push_bulk, the open-source BasicFetch, perform_at, retries; a SIGKILL loses the jobs a process holds; store.queues as Sidekiq queues, ordered (strict) or weighted",
		Loses: []string{"worker_kill"}, Queues: []string{"strict", "weighted"}},
	"rq": {Doc: "RQ (Python): enqueue_many and enqueue_at, SimpleWorker processes with the scheduler, Retry; a killed worker's job, or one whose worker quit on a Redis restart, is retried by RQ's cleanup minutes later while it has retries left and goes to the failed registry otherwise; store.queues as RQ queues, in order (strict) or rotated after each job (round_robin, RQ's dequeue_strategy)",
		Loses: []string{"worker_kill", "redis_restart"}, Queues: []string{"strict", "round_robin"}},
	"celery": {Doc: "Celery (Python, PyPI 5.7.0): apply_async with eta, the prefork worker, self.retry; Redis broker and result backend; acks early by default (a SIGKILL loses the tasks a worker runs), a task whose ETA lies beyond visibility_timeout runs twice",
		Loses: []string{"worker_kill"}, Options: []Option{
			{Name: "visibility_timeout", Duration: true, Default: "1h", Doc: "broker_transport_options visibility_timeout: how long a delivered task may stay unacknowledged before the broker restores it to the queue"},
			{Name: "acks_late", Default: "false", Doc: "task_acks_late: acknowledge after the task ran (a killed worker's task comes back after visibility_timeout) instead of as it starts"},
			{Name: "restore_interval", Duration: true, Default: "10s x 10", Doc: "kombu's unacked_restore_interval with unacked_restore_throttle 1: how often a worker sweeps for unacknowledged tasks past visibility_timeout (kombu's default: every 10th of 10 s ticks)"},
		}},
}

// ParseOptions reads a driver's backend options (all but peer_mode) into
// what its processes are told (Config.Options); a bad value or an
// unknown key is an error naming it and what is allowed.
func ParseOptions(name string, extra map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range extra {
		if k == "peer_mode" {
			continue
		}
		i := slices.IndexFunc(DeclaredBy[name].Options, func(o Option) bool { return o.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("%w: backend %s: unknown option %q", jobstore.ErrInvalid, name, k)
		}
		if !DeclaredBy[name].Options[i].Duration {
			if v != "true" && v != "false" {
				return nil, fmt.Errorf("%w: backend %s: option %s %q: allowed is true or false", jobstore.ErrInvalid, name, k, v)
			}
			out[k] = v
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d > 24*time.Hour {
			return nil, fmt.Errorf("%w: backend %s: option %s %q: allowed is a duration from 1ms to 24h (\"3s\")", jobstore.ErrInvalid, name, k, v)
		}
		out[k+"_ms"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return out, nil
}
