package driver

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

// RQ is the Python driver: Debian's python3-rq (1.13) under Debian's
// /usr/bin/python3, whatever other Python is on PATH.
var RQ = Spec{Name: "rq", Command: []string{"/usr/bin/python3", "driver.py"}, Probe: []string{"/usr/bin/python3", "-c", "import rq"},
	Install: "apt-get install python3-rq (Debian's /usr/bin/python3)"}

// Specs lists the drivers in listing order.
func Specs() []Spec { return []Spec{BullMQ, Sidekiq, RQ} }

// Declared is what a driver's hello declares, for listings and the
// applicability of scenarios before any driver runs.
type Declared struct {
	Doc      string
	Loses    []string // fault kinds under which it declares losing in-flight jobs
	Recovers bool     // it takes back a killed worker's jobs itself
	// Queues: the claim policies it serves over several queues (its
	// hello's caps.queues; registry.Backend.NativeQueues).
	Queues []string
}

// DeclaredBy holds each driver's declaration by name.
var DeclaredBy = map[string]Declared{
	"bullmq": {Doc: "BullMQ (Node): Queue.addBulk, Worker with concurrency, delayed jobs, attempts with backoff, stalled-job recovery; store.queues as job priorities (strict)", Recovers: true,
		Queues: []string{"strict"}},
	"sidekiq": {Doc: "Sidekiq (Ruby): push_bulk, the open-source BasicFetch, perform_at, retries; a SIGKILL loses the jobs a process holds; store.queues as Sidekiq queues, ordered (strict) or weighted",
		Loses: []string{"worker_kill"}, Queues: []string{"strict", "weighted"}},
	"rq": {Doc: "RQ (Python): enqueue_many and enqueue_at, SimpleWorker processes with the scheduler, Retry; a killed worker's job, or one whose worker quit on a Redis restart, goes to the failed registry; store.queues as RQ queues, in order (strict) or RoundRobinWorker's rotation (round_robin)",
		Loses: []string{"worker_kill", "redis_restart"}, Queues: []string{"strict", "round_robin"}},
}
