"""aebench driver for RQ, protocol 1 (docs/drivers.md).

Roles (argv[1]): hello, client (enqueue, inspect, stats), worker (RQ's own
worker loop) and loop (the plain loop the driver's overhead is measured
against). The configuration comes as JSON in AEBENCH_DRIVER_CONFIG;
requests arrive as JSON lines on stdin, events leave as JSON lines on
stdout, logs go to stderr. Run with drivers/rq/.venv/bin/python (RQ 3.0.0
from requirements.lock; make drivers makes it).

Settings, as RQ's documents recommend: SimpleWorker (no fork per job: RQ's
performance notes), one per unit of concurrency, each in its own process
(an RQ worker runs one job at a time) and restarted when it quits on an
error, as the supervisor RQ's deployment documents use would; with_scheduler=True so enqueue_at
and retry intervals run; Retry(max=the job's retries, interval=backoff rounded up
to whole seconds, as RQ takes seconds); result_ttl and failure_ttl =
retention. Worker names carry the process id, so inspect can tell a job
held by a live worker from one a killed worker abandoned: RQ retries such a
job while it has retries left, once its started-registry entry expires and
a cleanup runs (LATER), and moves it to the failed registry otherwise.
The scenario's queues (store.queues) are RQ queues <queue>.<name>, which a
worker listens to in order (strict: RQ's Worker takes from the first queue
that has a job) or rotated after each job (round_robin: RQ's own
dequeue_strategy="round_robin"); RQ has no weighted policy. Line numbers
cited are RQ 3.0.0's.
"""
import concurrent.futures
import datetime
import json
import math
import os
import signal
import sys
import threading
import time

import redis
import rq
from rq.job import Job, JobStatus, Retry
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.worker import SimpleWorker

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aebench_rq_job  # noqa: E402

PROTOCOL = 1
CLIENT_THREADS = 8
CFG = json.loads(os.environ.get("AEBENCH_DRIVER_CONFIG") or "{}")
FUNC = "aebench_rq_job.handle"


def out(obj):
    aebench_rq_job.emit(json.dumps(obj, separators=(",", ":")))


def connect():
    """The run's Redis: an ACL user and, for a rediss:// Redis, TLS with
    the URL's CA, client certificate and verification (redis-py's ssl_*
    options)."""
    r = CFG.get("redis") or {}
    kw = dict(host=r.get("host", "127.0.0.1"), port=r.get("port", 6379), db=r.get("db", 0),
              username=r.get("username") or None, password=r.get("password") or None)
    t = r.get("tls")
    if t is not None:
        verify = not t.get("skip_verify")
        kw.update(ssl=True, ssl_ca_certs=t.get("ca_file") or None, ssl_certfile=t.get("cert_file") or None,
                  ssl_keyfile=t.get("key_file") or None, ssl_cert_reqs="required" if verify else "none",
                  ssl_check_hostname=verify)
    return redis.Redis(**kw)


def queue_names():
    """RQ's queue names, highest priority first: one per scenario queue,
    or the one queue."""
    qs = CFG.get("queues") or []
    return ["%s.%s" % (CFG["queue"], q["name"]) for q in qs] or [CFG["queue"]]


def queue_of(name):
    return "%s.%s" % (CFG["queue"], name) if name and CFG.get("queues") else queue_names()[0]


NATIVE = CFG.get("peer_mode") == "native"


def keep_s():
    return max(1, math.ceil(CFG.get("retention_ms", 3600000) / 1000))


def keep():
    """The finished-job TTLs: retention (contract), or none given, so RQ's
    defaults hold (peer_mode native: result_ttl 500 s, failure_ttl a year)."""
    return {} if NATIVE else dict(result_ttl=keep_s(), failure_ttl=keep_s())


def retry(n):
    return Retry(max=n, interval=math.ceil(CFG.get("backoff_ms", 0) / 1000)) if n > 0 else None


def hello():
    out({"e": "hello", "protocol": PROTOCOL, "driver": "rq", "driver_version": "2.0.0", "system": "rq",
         "system_version": rq.__version__, "runtime": "python " + sys.version.split()[0],
         "caps": {"delayed": True, "retries": "fixed interval (whole seconds)", "recovery": "none",
                  "batch_enqueue": True, "inspect": True, "queues": ["strict", "round_robin"]},
         "loses": ["worker_kill", "redis_restart"],
         "early": {"max_ms": 1000, "why": "rq/registry.py 650 ScheduledJobRegistry.schedule scores a job "
                   "calendar.timegm(utctimetuple()), whole seconds: a delayed job can start up to 1 s early"},
         "guarantees": "a killed worker's job (or one whose worker quit on a Redis restart) stays in the started "
                       "registry until its entry expires, job timeout + 60 s (rq/worker/worker_classes.py 293 SimpleWorker."
                       "get_heartbeat_ttl: 180 + 60 s by default), and the next StartedJobRegistry.cleanup (rq/"
                       "registry.py 268, run at worker start, every 10 minutes and by registry.count) retries it while "
                       "it has retries left (at least once) and moves it to the failed registry otherwise: at most "
                       "once, and lost, only for jobs with no retries; delayed jobs and retries wait for the "
                       "scheduler's 1 s pass; when the process holding the scheduler's lock dies, they wait until "
                       "the lock expires (rq/scheduler.py 134 acquire_locks: ttl interval + 60) and another worker "
                       "starts or runs its maintenance (rq/worker/base.py 1061 run_maintenance_tasks, every 10 "
                       "minutes)",
         **({"removes_finished": "peer_mode native: RQ's default result_ttl (500 s) deletes a finished job's hash "
             "500 s after it finishes (rq/defaults.py DEFAULT_RESULT_TTL)"} if NATIVE else {})})


def enqueue(queues, jobs):
    by_queue = {}
    for j in jobs:
        by_queue.setdefault(queue_of(j.get("q")), []).append(j)
    for name, js in by_queue.items():
        enqueue_on(queues[name], js)


def enqueue_on(q, jobs):
    now = time.time() * 1000
    kw = keep()
    with q.connection.pipeline() as pipe:
        ready = [Queue.prepare_data(FUNC, args=(j.get("p", ""), j.get("h")), job_id=j["id"], retry=retry(j.get("r", 0)), **kw)
                 for j in jobs if not j.get("at") or j["at"] <= now]
        if ready:
            q.enqueue_many(ready, pipeline=pipe)
        for j in jobs:
            if j.get("at") and j["at"] > now:
                at = datetime.datetime.fromtimestamp(j["at"] / 1000, tz=datetime.timezone.utc)
                q.enqueue_at(at, FUNC, j.get("p", ""), j.get("h"), job_id=j["id"], pipeline=pipe,
                           retry=retry(j.get("r", 0)), **kw)
        pipe.execute()


STATES = {JobStatus.CREATED: "waiting", JobStatus.QUEUED: "waiting", JobStatus.READY_TO_ENQUEUE: "waiting",
          JobStatus.RATE_LIMITED: "waiting", JobStatus.SCHEDULED: "delayed", JobStatus.DEFERRED: "delayed",
          JobStatus.STARTED: "active", JobStatus.FINISHED: "completed", JobStatus.FAILED: "failed",
          JobStatus.STOPPED: "failed", JobStatus.CANCELED: "failed"}


def start_ticks(pid):
    """The process's start time in clock ticks since boot (/proc/<pid>/stat
    field 22): with the pid, it names the process, which a pid alone does
    not once a killed process's pid is reused."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def alive(job_id, worker_name, conn):
    """A started job is reachable only while the worker holding it works on
    it: its process lives (names are "ae-<pid>-<start ticks>-<n>-<generation>"),
    RQ still has the worker registered, alive, and that worker's current job
    is this one. RQ takes an abandoned job back only through its cleanup
    (LATER), and a worker that quit on a lost connection leaves its job
    behind in a process that lives on; a killed worker's pid may belong to
    another process by the drain's end (peers-crash showed two such jobs as
    still running)."""
    try:
        _, pid, ticks = (worker_name or "").split("-")[:3]
        if start_ticks(int(pid)) != int(ticks):
            return False
    except (ValueError, OSError):
        return False
    w = SimpleWorker.find_by_key(SimpleWorker.redis_worker_namespace_prefix + worker_name, connection=conn)
    # A worker that registered its death (forget, after work() quit on a
    # lost connection) keeps its key, with its current job, for 60 s
    # (rq/worker/base.py 970 register_death): it works on nothing.
    return w is not None and w.death_date is None and w.get_current_job_id() == job_id


LATER = ("RQ retries an abandoned job with retries left once its started-registry entry expires (job timeout "
         "+ 60 s, rq/worker/worker_classes.py 293 SimpleWorker.get_heartbeat_ttl) and a "
         "StartedJobRegistry.cleanup runs (rq/registry.py 268)")


LATER_SCHEDULED = ("RQ's scheduler died with the worker process that held its lock: delayed jobs and retries wait "
                   "until the lock expires (rq/scheduler.py 134: interval + 60 s) and a live worker takes it at its "
                   "maintenance, every 10 minutes (rq/worker/base.py 1061)")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return pid > 0


def scheduler_gone(conn, queue, memo):
    """Whether queue's scheduled jobs wait on a dead scheduler: its lock
    (rq:scheduler-lock:<queue>) names a scheduler whose process is gone
    (its metadata hash, rq:scheduler:<name>, holds its pid; a hash gone
    with its 61 s TTL counts as gone). No lock is not: a worker takes it at
    its start (before any worker ran, say), and a live one at its
    maintenance, so for the 61 s of a dead scheduler's lock the jobs are
    later, and after it reachable again, as RQ's next maintenance may come
    at any time within 10 minutes."""
    if queue not in memo:
        name = conn.get(RQScheduler.get_locking_key(queue))
        pid = int(conn.hget(SCHEDULER_KEY_TEMPLATE % name.decode(), "pid") or 0) if name else 0
        memo[queue] = name is not None and not pid_alive(pid)
    return memo[queue]


def inspect(conn, ids):
    """Each job's state, whether RQ will still reach it, and for a job a
    dead worker abandoned with retries left, that RQ takes it back later
    (LATER): its started-registry entry must expire first. The three fields
    it needs are read for every id in one pipeline of HMGETs on RQ's job
    hashes (Job.key_for): Job.fetch_many loads and unpickles whole jobs,
    which read a 200k backlog back in 32 s."""
    with conn.pipeline(transaction=False) as pipe:
        for i in ids:
            pipe.hmget(Job.key_for(i), "status", "worker_name", "retries_left", "origin")
        rows = pipe.execute()
    res, memo = [], {}
    for i, (status, worker, left, origin) in zip(ids, rows):
        st = STATES.get(status.decode(), "unknown") if status is not None else "unknown"
        worker = worker.decode() if worker is not None else ""
        reach = st != "unknown" and (st != "active" or alive(i, worker, conn))
        r = {"s": st, "r": reach}
        if st == "active" and not reach and int(left or 0) > 0:
            r["l"] = LATER
        elif status == b"scheduled" and origin and scheduler_gone(conn, origin.decode(), memo):
            r.update(r=False, l=LATER_SCHEDULED)
        res.append(r)
    return res


def client():
    """Requests are served by a pool of threads, as aebench's producers send
    them concurrently: one thread would cap enqueues at its round trips."""
    hello()
    conn = connect()
    queues = {name: rq.Queue(name, connection=conn) for name in queue_names()}
    out({"e": "ready"})
    with concurrent.futures.ThreadPoolExecutor(max_workers=CLIENT_THREADS) as pool:
        for line in sys.stdin:
            pool.submit(serve, conn, queues, json.loads(line))


def stats(queues):
    """The counts summed over the queues (RQ keeps registries per queue)."""
    qs = queues.values()
    return {"due": sum(q.count for q in qs), "delayed": sum(q.scheduled_job_registry.count for q in qs),
            "active": sum(q.started_job_registry.count for q in qs),
            "completed": sum(q.finished_job_registry.count for q in qs),
            "dead": sum(q.failed_job_registry.count for q in qs)}


def serve(conn, queues, req):
    seq = req.get("seq")
    try:
        if req["op"] == "enqueue":
            enqueue(queues, req["jobs"])
            out({"e": "ack", "seq": seq})
        elif req["op"] == "inspect":
            out({"e": "states", "seq": seq, "states": inspect(conn, req["ids"])})
        elif req["op"] == "stats":
            out(dict(e="stats", seq=seq, **stats(queues)))
        else:
            out({"e": "refused", "seq": seq, "msg": "unknown op %r" % req.get("op")})
    except Exception as err:  # a refusal names the cause; the process goes on
        out({"e": "refused", "seq": seq, "msg": "%s: %s" % (type(err).__name__, err)})


class EventWorker(SimpleWorker):
    """SimpleWorker that reports each job's end after RQ has written it."""

    stop_signalled = False

    def request_stop(self, signum, frame):
        """RQ's warm shutdown, remembered: an idle worker's work() returns
        as it does after an unhandled error (rq/worker.py work: StopRequested
        and a bare except both break out), and _stop_requested is set only
        when the worker was busy, so without this run_worker restarted a
        worker asked to stop, and the process never exited (aebench killed
        it 5 s later; drivers check found it)."""
        self.stop_signalled = True
        super().request_stop(signum, frame)

    def handle_job_success(self, job, queue, *args, **kwargs):
        super().handle_job_success(job, queue, *args, **kwargs)
        out({"e": "completed", "id": job.id, "a": int(job.meta.get("ae_attempt", 0)), "t": time.time_ns(),
             "h": int(job.meta.get("ae_h", 0))})

    def handle_job_failure(self, job, queue, *args, **kwargs):
        attempt = int(job.meta.get("ae_attempt", 0))
        dead = not (job.retries_left and job.retries_left > 0)
        if not dead:
            # The next run's attempt travels in the job's meta, saved with
            # the retry RQ writes below.
            job.meta["ae_attempt"] = attempt + 1
        super().handle_job_failure(job, queue, *args, **kwargs)
        ra = 0 if dead else (time.time_ns() + math.ceil(CFG.get("backoff_ms", 0) / 1000) * 10**9)
        out({"e": "failed", "id": job.id, "a": attempt, "t": time.time_ns(), "dead": dead, "ra": ra})


def die_with_parent():
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def run_worker(n, burst=False):
    """One SimpleWorker, restarted as a supervisor would restart it: RQ's
    work() quits on an unhandled error such as a lost Redis connection,
    and RQ's deployment documents run workers under systemd or
    supervisord, which start them again. A stop RQ was asked for (SIGTERM,
    the warm shutdown) ends it."""
    die_with_parent()
    for generation in range(1000):
        conn = connect()
        w = EventWorker([rq.Queue(name, connection=conn) for name in queue_names()], connection=conn,
                        name="ae-%d-%d-%d-%d" % (os.getpid(), start_ticks(os.getpid()), n, generation))
        try:
            w.work(with_scheduler=True, burst=burst, logging_level="WARNING",
                   dequeue_strategy="round_robin" if CFG.get("queue_policy") == "round_robin" else "default")
        except Exception as e:  # noqa: BLE001 - the supervisor restarts whatever ended it
            sys.stderr.write("rq driver: worker %d ended: %r; restarting in 1s\n" % (n, e))
            forget(w)
        if burst or w.stop_signalled or getattr(w, "_stop_requested", False):
            return
        time.sleep(1)


def forget(w):
    """Unregisters a worker whose work() ended on an error, once Redis
    answers again (RQ's own teardown tried while it was away): bookkeeping
    for inspect, which then sees its job abandoned. The job is left as RQ
    left it."""
    for _ in range(20):
        try:
            w.register_death()
            return
        except Exception:  # noqa: BLE001 - Redis may still be restarting
            time.sleep(0.5)


def worker():
    hello()
    kids = []
    for n in range(max(1, CFG.get("concurrency", 1))):
        pid = os.fork()
        if pid == 0:
            sys.stdin.close()
            run_worker(n)
            os._exit(0)
        kids.append(pid)
    stopping = threading.Event()

    def reap():
        """A worker process that ends before the shutdown (RQ's Worker
        refused by Redis at start, say) ends this one too, so aebench sees
        the worker gone rather than a worker that runs nothing."""
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return
        if not stopping.is_set():
            sys.stderr.write("rq driver: worker process %d ended before the shutdown (status %d)\n" % (pid, status))
            os._exit(1)

    threading.Thread(target=reap, daemon=True).start()
    out({"e": "ready"})
    sys.stdin.read()  # stdin's end is the clean shutdown
    stopping.set()
    for pid in kids:
        os.kill(pid, signal.SIGTERM)  # RQ's warm shutdown: finish the job, then exit
    for pid in kids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # the reaper took it
            pass


def loop():
    """The plain loop: n jobs with enqueue_many, then the same workers (as
    processes of SimpleWorker) drain them; the rate is taken over the last
    four fifths (the first warms up), from the jobs' own end times."""
    n = CFG.get("jobs", 10000)
    conn = connect()
    q = rq.Queue(CFG["queue"], connection=conn)
    for i in range(0, 0 if CFG.get("prefilled") else n, 100):
        q.enqueue_many([rq.Queue.prepare_data(FUNC, args=(CFG.get("payload", ""), [[0, 0]]), job_id="L%d" % k,
                                              result_ttl=keep_s(), failure_ttl=keep_s())
                        for k in range(i, min(n, i + 100))])
    kids = []
    for k in range(max(1, CFG.get("concurrency", 1))):
        pid = os.fork()
        if pid == 0:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the handler's events are not the loop's
            conn = connect()
            SimpleWorker([rq.Queue(CFG["queue"], connection=conn)], connection=conn).work(burst=True, logging_level="WARNING")
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    # RQ keeps each job's end (UTC, to the microsecond): the loop's
    # completion times, read back after the drain, cost its loop nothing.
    utc = datetime.timezone.utc
    ends = sorted(round(j.ended_at.replace(tzinfo=utc).timestamp() * 1e6) * 1000
                  for j in Job.fetch_many(["%s%d" % (CFG.get("id_prefix") or "L", k) for k in range(n)], connection=conn) if j and j.ended_at)
    skip = n // 5
    secs = (ends[-1] - ends[skip - 1]) / 1e9
    out({"e": "loop", "jobs": n - skip, "seconds": secs, "jobs_per_s": (n - skip) / secs, "times": ends})


Queue = rq.Queue
ROLES = {"hello": hello, "client": client, "worker": worker, "loop": loop}

if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else CFG.get("role", "hello")
    if role not in ROLES:
        sys.stderr.write("rq driver: unknown role %r; allowed: %s\n" % (role, ", ".join(ROLES)))
        sys.exit(2)
    ROLES[role]()
