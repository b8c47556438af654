package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/driver/drivertest"
	"github.com/aebench/aebench/harness/summary"
)

// driverACL is what an ACL user needs for the job systems behind the
// drivers: keys of any name (bull:*, rq:*, Sidekiq's queue:* and its
// process keys, named by host and pid), reads, writes, blocking pops,
// scripts, pub/sub (BullMQ's and RQ's events), and INFO; nothing
// dangerous (no FLUSHALL, CONFIG, KEYS, DEBUG, CLIENT KILL) but CLIENT
// LIST: RQ's Worker reads it at start to learn its own address
// (rq/worker/base.py 263, 3.0.0: client_list() after client_setname),
// and dies on the refusal, which it catches only as a ResponseError of
// CLIENT SETNAME. And TIME: kombu's binding scripts (Celery's Redis
// transport, kombu/transport/redis.py) read the server's clock.
var driverACL = []string{"on", ">s3cr3t", "~*", "&*", "-@all", "+@read", "+@write", "+@blocking",
	"+@scripting", "+@connection", "+@keyspace", "+@transaction", "+@pubsub", "-@dangerous", "+info", "+client|list", "+time"}

// TestDriversTLSAndACL runs each job system's driver against a spawned
// redis-server that speaks TLS (rediss:// with a CA and a client
// certificate) as an ACL user with only driverACL's rights: the driver's
// client and worker both connect, and every job is accounted for.
func TestDriversTLSAndACL(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, spec driver.Spec) {
		u := startTLSRedis(t, t.TempDir(), driverACL)
		src := fmt.Sprintf(`
name: driver-tls-%s
duration: 1s
warmup: 300ms
drain: 30s
calibration: off
redis: {mode: url, url: %q}
backends: [%s]
producers: {rate: 50}
workers: {count: 1, processes: 1, concurrency: 3, handler: 5ms}
`, spec.Name, u, spec.Name)
		outcome, out := runScenarioText(t, "driver-tls.yaml", src)
		if len(outcome.Summary.Runs) != 1 {
			t.Fatalf("%d runs\n%s", len(outcome.Summary.Runs), out)
		}
		r := outcome.Summary.Runs[0]
		if r.Status != summary.StatusOK || r.Ledger.Completed == 0 || r.Ledger.Lost != 0 {
			t.Errorf("status %s (%s), completed %d, lost %d; problems %v\n%s", r.Status, r.Error, r.Ledger.Completed, r.Ledger.Lost, r.Ledger.Problems, out)
		}
		if strings.Contains(out, "s3cr3t") {
			t.Error("the password shows in the output")
		}
	})
}
