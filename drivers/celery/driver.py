"""aebench's Celery driver (docs/drivers.md, protocol 1).

Roles (argv[1]): hello, client (enqueue, inspect, stats) and worker
(Celery's own worker, prefork pool, in this process). The configuration
comes as JSON in AEBENCH_DRIVER_CONFIG; requests arrive as JSON lines on
stdin, events leave as JSON lines on stdout (fd 1 kept for them; whatever
Celery prints goes to stderr). Run with drivers/celery/.venv/bin/python
(Celery 5.7.0 from requirements.lock; make drivers).

Settings, as Celery's documents give them: the Redis broker and the Redis
result backend on the run's Redis; one queue (the run's queue name);
apply_async per job with task_id = aebench's id (Celery has no bulk
enqueue) and eta for delayed jobs; a failed attempt retries with
self.retry(countdown=backoff, max_retries=the job's retries); prefork pool
with concurrency processes; prefetch multiplier 4 (its default); acks
early (task_acks_late False, its default) unless the backend option
acks_late is true. Options (backend options, Config.options):
visibility_timeout_ms (broker_transport_options visibility_timeout,
Celery's default 1 h), acks_late, restore_interval_ms (kombu's
unacked_restore_interval with unacked_restore_throttle 1: how often a
worker sweeps the unacked index; kombu's default sweeps every 10 x 10 s).
peer_mode contract also sets task_track_started (a started task reads
STARTED) and result_expires = retention; native keeps Celery's defaults.

What Celery guarantees, and the driver declares: with acks early a task
is acknowledged as it starts, so a killed worker loses the tasks it runs;
a task with an ETA or countdown is taken by a worker at once and held in
its memory, unacknowledged, until it is due, so when its due time is
further away than visibility_timeout the broker's restore_visible puts it
back in the queue while the first worker still holds it, and it runs
twice (Celery's documents, "Visibility timeout": the task is redelivered
to another worker and executed).
"""
import concurrent.futures
import datetime
import json
import os
import signal
import sys
import threading
import time
import urllib.parse

EVENTS = os.dup(1)  # stdout as started: events only
os.dup2(2, 1)  # everything Celery and Python print goes to stderr
sys.stdout = sys.stderr

from celery import Celery, signals  # noqa: E402
import celery  # noqa: E402

PROTOCOL = 1
CFG = json.loads(os.environ.get("AEBENCH_DRIVER_CONFIG") or "{}")
OPT = CFG.get("options") or {}
QUEUE = CFG.get("queue", "aebench")
NATIVE = CFG.get("peer_mode") == "native"
ACKS_LATE = OPT.get("acks_late") == "true"
VT_S = int(OPT.get("visibility_timeout_ms", 3600000)) / 1000
OUT = threading.Lock()


def out(obj):
    line = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    with OUT:
        while line:
            line = line[os.write(EVENTS, line):]


def redis_url():
    r = CFG.get("redis") or {}
    user = urllib.parse.quote(r.get("username") or "", safe="")
    pw = urllib.parse.quote(r.get("password") or "", safe="")
    auth = "%s:%s@" % (user, pw) if pw else ""
    scheme = "rediss" if r.get("tls") is not None else "redis"
    return "%s://%s%s:%d/%d" % (scheme, auth, r.get("host", "127.0.0.1"), r.get("port", 6379), r.get("db", 0))


def ssl_opts():
    t = (CFG.get("redis") or {}).get("tls")
    if t is None:
        return None
    import ssl
    return {"ssl_cert_reqs": ssl.CERT_NONE if t.get("skip_verify") else ssl.CERT_REQUIRED,
            "ssl_ca_certs": t.get("ca_file") or None, "ssl_certfile": t.get("cert_file") or None,
            "ssl_keyfile": t.get("key_file") or None}


def make_app():
    app = Celery("aebench", broker=redis_url(), backend=redis_url())
    transport = {"visibility_timeout": VT_S}
    if OPT.get("restore_interval_ms"):
        transport.update(unacked_restore_interval=int(OPT["restore_interval_ms"]) / 1000, unacked_restore_throttle=1)
    conf = dict(task_default_queue=QUEUE, broker_transport_options=transport, task_acks_late=ACKS_LATE,
                worker_hijack_root_logger=False, broker_connection_retry_on_startup=True)
    if not NATIVE:
        conf.update(task_track_started=True, result_expires=max(1, CFG.get("retention_ms", 3600000) // 1000))
    if ssl_opts():
        conf.update(broker_use_ssl=ssl_opts(), redis_backend_use_ssl=ssl_opts())
    app.conf.update(conf)
    return app


APP = make_app()


class PlannedFailure(Exception):
    """The handler plan's failure of this attempt."""


@APP.task(name="aebench.handle", bind=True)
def handle(self, p, h, retries):
    a = self.request.retries
    started = {"e": "started", "id": self.request.id, "a": a, "t": time.time_ns()}
    if (self.request.delivery_info or {}).get("redelivered"):
        started["rd"] = True  # kombu restored the message: Celery's own redelivery flag
    out(started)
    us, fail = (h or [[0, 0]])[min(a, len(h or [[0, 0]]) - 1)]
    time.sleep(us / 1e6)
    self.request.ae_end = time.time_ns()
    if fail:
        if a < retries:
            raise self.retry(countdown=CFG.get("backoff_ms", 1000) / 1000, max_retries=retries, exc=PlannedFailure())
        raise PlannedFailure()
    return None


# The outcome events leave after Celery's tracer has written the result
# (celery/app/trace.py: mark_as_done, then task_success; mark_as_retry,
# then task_retry; mark_as_failure, then task_failure).
@signals.task_success.connect
def _success(sender=None, **_):
    r = sender.request
    out({"e": "completed", "id": r.id, "a": r.retries, "t": time.time_ns(), "h": getattr(r, "ae_end", 0)})


@signals.task_retry.connect
def _retry(request=None, reason=None, **_):
    due = getattr(reason, "when", None)
    ra = time.time_ns() + int(CFG.get("backoff_ms", 1000) * 1e6)
    if isinstance(due, datetime.datetime):
        ra = int(due.timestamp() * 1e9)
    out({"e": "failed", "id": request.id, "a": request.retries, "t": time.time_ns(), "dead": False, "ra": ra})


@signals.task_failure.connect
def _failure(sender=None, task_id=None, **_):
    out({"e": "failed", "id": task_id, "a": sender.request.retries, "t": time.time_ns(), "dead": True, "ra": 0})


def hello():
    recovery = "visibility_timeout" if ACKS_LATE else "none"
    out({"e": "hello", "protocol": PROTOCOL, "driver": "celery", "driver_version": "1.0.0", "system": "celery",
         "system_version": celery.__version__, "runtime": "python " + sys.version.split()[0],
         "caps": {"delayed": True, "retries": "self.retry(countdown)", "recovery": recovery, "batch_enqueue": False,
                  "inspect": True},
         "loses": [] if ACKS_LATE else ["worker_kill"],
         # Jobs a killed worker process may take with it unreported: one
         # kombu popped (BRPOP) and had not yet written to its unacked
         # hash, and with acks early one per pool process, acknowledged
         # as the process accepted it and not yet started (peers' sigkill
         # test lost two such jobs that were never started).
         "holds_extra": 1 if ACKS_LATE else 1 + max(1, CFG.get("concurrency", 1)),
         "guarantees": ("acks late: a killed worker's task stays unacknowledged and the broker restores it %ss "
                        "(visibility_timeout) after its delivery, at the next sweep: at least once" % VT_S if ACKS_LATE else
                        "acks early (Celery's default): a task is acknowledged as it starts, so a killed worker loses "
                        "the tasks it runs: at most once for them") +
                       "; a task with an ETA or countdown is held unacknowledged in a worker's memory until due, and "
                       "one due later than visibility_timeout (%ss) after its delivery is restored to the queue while "
                       "held and runs twice (Celery's documents, Visibility timeout)" % VT_S})


def enqueue(jobs):
    now = time.time() * 1000
    for j in jobs:
        kw = dict(args=(j.get("p", ""), j.get("h"), j.get("r", 0)), task_id=j["id"], queue=QUEUE)
        if j.get("at") and j["at"] > now:
            kw["eta"] = datetime.datetime.fromtimestamp(j["at"] / 1000, tz=datetime.timezone.utc)
        handle.apply_async(**kw)


STATES = {"SUCCESS": "completed", "FAILURE": "failed", "RETRY": "delayed", "STARTED": "active"}


def broker_view(r, held=None):
    """Where the broker holds each task not yet finished: in the queue
    (waiting, or delayed by its eta) or in the unacked hash (taken by a
    worker: held for its eta, or running under acks late). Each is
    (state, abandoned): given held (a function giving the ids the live
    workers hold), a task in the unacked hash that none holds was taken by
    a worker that died, and waits for kombu to restore it (LATER); counts
    need not ask (a broadcast)."""
    now = time.time()
    view = {}
    for raw in r.lrange(QUEUE, 0, -1):
        hd = json.loads(raw).get("headers") or {}
        view[hd.get("id")] = ("delayed" if hd.get("eta") and parse_eta(hd["eta"]) > now else "waiting", False)
    for raw in r.hvals("unacked"):
        hd = (json.loads(raw)[0] or {}).get("headers") or {}
        i = hd.get("id")
        view[i] = ("delayed" if hd.get("eta") and parse_eta(hd["eta"]) > now else "active",
                   held is not None and i not in held())
    return view


LATER = ("kombu restores a message a dead worker held unacknowledged once visibility_timeout has passed since its "
         "delivery, at a worker's next restore sweep (kombu/transport/redis.py, QoS.restore_visible)")


HELD = {"at": -1.0, "ids": set()}
HELD_LOCK = threading.Lock()
HELD_FOR = 1.0  # seconds an answer serves later inspects


def live_held():
    """The ids of the tasks the live workers hold, by Celery's remote
    control (a broadcast: each worker answers with its running, prefetched
    and ETA-held tasks); none when no worker answers. One broadcast serves
    the inspects of the next HELD_FOR seconds: after a kill aebench reads
    the killed worker's jobs back again and again, and a broadcast each
    (1.5 s) held the client's threads from the producers' enqueues (e2e
    p50 12 s in the peers' sigkill run)."""
    with HELD_LOCK:
        if time.monotonic() - HELD["at"] < HELD_FOR:
            return HELD["ids"]
        ins = APP.control.inspect(timeout=0.5)
        held = set()
        for ask in (ins.active, ins.reserved, ins.scheduled):
            for tasks in (ask() or {}).values():
                for t in tasks or []:
                    held.add(t.get("id") or (t.get("request") or {}).get("id"))
        HELD.update(at=time.monotonic(), ids=held)
        return held


def parse_eta(s):
    return datetime.datetime.fromisoformat(s).timestamp()


def inspect(ids):
    """Each task's state: the result backend's, else the broker's. A
    started or unacknowledged task that no live worker holds is
    unreachable: lost when its message was acknowledged (acks early), taken
    back later when kombu will restore it (LATER)."""
    r = APP.backend.client
    metas = r.mget(["celery-task-meta-" + i for i in ids])
    memo = {}

    def held():
        if "held" not in memo:
            memo["held"] = live_held()
        return memo["held"]

    def view():
        if "view" not in memo:
            memo["view"] = broker_view(r, held)
        return memo["view"]

    res, gone_at = [], []
    for n, (i, m) in enumerate(zip(ids, metas)):
        st = STATES.get(json.loads(m).get("status")) if m else None
        gone = later = False
        if st is None:
            st, later = view().get(i, ("unknown", False))
            gone = later
        elif st == "active" and i not in held():
            gone, later = True, view().get(i, ("", False))[1]
        if gone:
            gone_at.append(n)
        res.append({"s": st, "r": st != "unknown" and not gone, **({"l": LATER} if later else {})})
    # A task that finished between the read above and the workers' answer
    # is held by none and is not abandoned: its result says so now.
    if gone_at:
        again = r.mget(["celery-task-meta-" + ids[n] for n in gone_at])
        for n, m in zip(gone_at, again):
            st = STATES.get(json.loads(m).get("status")) if m else None
            if st in ("completed", "failed", "delayed"):
                res[n] = {"s": st, "r": True}
    return res


def serve(req):
    seq = req.get("seq")
    try:
        if req["op"] == "enqueue":
            enqueue(req["jobs"])
            out({"e": "ack", "seq": seq})
        elif req["op"] == "inspect":
            out({"e": "states", "seq": seq, "states": inspect(req["ids"])})
        elif req["op"] == "stats":
            view = broker_view(APP.backend.client)
            vals = [st for st, _ in view.values()]
            out({"e": "stats", "seq": seq, "due": vals.count("waiting"), "delayed": vals.count("delayed"),
                 "active": vals.count("active"), "completed": 0, "dead": 0})
        else:
            out({"e": "refused", "seq": seq, "msg": "unknown op %r" % req.get("op")})
    except Exception as err:  # noqa: BLE001 - a refusal names the cause; the process goes on
        out({"e": "refused", "seq": seq, "msg": "%s: %s" % (type(err).__name__, err)})


def client():
    """Requests from a pool of threads, as aebench's producers send them
    concurrently."""
    hello()
    APP.backend.client.ping()
    out({"e": "ready"})
    # Inspects have their own threads: one may wait 1.5 s on the workers'
    # answers (live_held), and enqueues must not queue behind it.
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool, \
            concurrent.futures.ThreadPoolExecutor(max_workers=2) as slow:
        for line in sys.stdin:
            req = json.loads(line)
            (slow if req.get("op") == "inspect" else pool).submit(serve, req)


@signals.worker_ready.connect
def _ready(**_):
    out({"e": "ready"})


def worker():
    """Celery's worker in this process; stdin's end is its warm shutdown
    (SIGTERM: running tasks finish, held ones go back to the queue)."""
    hello()

    def watch():
        # The raw fd, not sys.stdin: the prefork pool forks while this
        # thread waits, and a child that touches sys.stdin (billiard
        # closes it) would wait forever on the buffer's lock held here.
        while os.read(0, 65536):
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()
    APP.worker_main(["worker", "--loglevel", os.environ.get("AE_CELERY_LOG", "WARNING"), "--pool", "prefork", "-Q", QUEUE,
                     "--concurrency", str(max(1, CFG.get("concurrency", 1))), "-n", "ae-%d@%%h" % os.getpid()])


if __name__ == "__main__":
    {"hello": hello, "client": client, "worker": worker}[sys.argv[-1]]()
