"""A minimal aebench driver (docs/drivers.md, "Writing a driver"): a tiny job
system on Redis (a list of due ids, a sorted set of delayed ones, a hash per
job) and its driver in one file, Python 3's standard library only (RESP is
spoken over a socket). It passes `aebench drivers check docs/minimal-driver`.
A real driver calls its system's own API where this one writes the keys."""
import json, os, socket, sys, threading, time

CFG = json.loads(os.environ.get("AEBENCH_DRIVER_CONFIG") or "{}")
Q = "{%s}" % CFG.get("queue", "minimal")  # one hash tag for every key
OUT = threading.Lock()


def out(obj):  # one whole line per write, so processes never interleave
    with OUT:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


class Redis:
    """Just enough RESP: send a command, read its reply."""

    def __init__(self):
        r = CFG.get("redis") or {}
        self.s = socket.create_connection((r.get("host", "127.0.0.1"), r.get("port", 6379)))
        self.f = self.s.makefile("rb")
        if r.get("password"):
            self.call(*(["AUTH", r["username"]] if r.get("username") else ["AUTH"]), r["password"])

    def call(self, *args):
        msg = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in (str(x).encode() for x in args))
        self.s.sendall(msg)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest.decode()
        if kind == b"$":
            return None if rest == b"-1" else self.f.read(int(rest) + 2)[:-2].decode()
        return None if rest == b"-1" else [self.read() for _ in range(int(rest))]


def hello():
    out({"e": "hello", "protocol": 1, "driver": "minimal", "driver_version": "1.0.0", "system": "minimal",
         "system_version": "1.0.0", "runtime": "python " + sys.version.split()[0],
         "caps": {"delayed": True, "retries": "fixed backoff", "recovery": "none", "batch_enqueue": True, "inspect": True},
         "loses": ["worker_kill"], "guarantees": "at most once under a crash: a job a killed worker holds is never run again"})


def serve(r, req):
    op, seq = req.get("op"), req.get("seq")
    if op == "enqueue":
        now = time.time() * 1000
        for j in req["jobs"]:
            due = not j.get("at") or j["at"] <= now
            r.call("HSET", Q + ":job:" + j["id"], "s", "waiting" if due else "delayed", "h", json.dumps(j.get("h")), "r", j.get("r", 0), "a", 0)
            r.call("RPUSH", Q + ":wait", j["id"]) if due else r.call("ZADD", Q + ":delayed", j["at"], j["id"])
        return {"e": "ack", "seq": seq}
    if op == "inspect":
        states = []
        for i in req["ids"]:
            s, pid = r.call("HMGET", Q + ":job:" + i, "s", "pid")
            live = s != "active" or os.path.exists("/proc/%s" % pid)  # a killed worker's job is never run again
            states.append({"s": s or "unknown", "r": bool(s) and live})
        return {"e": "states", "seq": seq, "states": states}
    if op == "stats":
        n = [r.call(c, Q + k) for c, k in (("LLEN", ":wait"), ("ZCARD", ":delayed"), ("SCARD", ":active"))]
        done, dead = (int(r.call("GET", Q + k) or 0) for k in (":completed", ":dead"))
        return {"e": "stats", "seq": seq, "due": n[0], "delayed": n[1], "active": n[2], "completed": done, "dead": dead}
    return {"e": "refused", "seq": seq, "msg": "unknown op %r" % op}


def client():
    hello()
    r = Redis()
    out({"e": "ready"})
    for line in sys.stdin:
        out(serve(r, json.loads(line)))


def work(stop):
    r = Redis()
    while not stop.is_set():
        now = time.time() * 1000
        for i in r.call("ZRANGEBYSCORE", Q + ":delayed", "-inf", now, "LIMIT", 0, 100):
            if r.call("ZREM", Q + ":delayed", i):  # whoever removes it moves it
                r.call("HSET", Q + ":job:" + i, "s", "waiting")
                r.call("RPUSH", Q + ":wait", i)
        got = r.call("BLPOP", Q + ":wait", "0.1")
        if not got:
            continue
        i, key = got[1], Q + ":job:" + got[1]
        h, retries, a = r.call("HMGET", key, "h", "r", "a")
        r.call("HSET", key, "s", "active", "pid", os.getpid())
        r.call("SADD", Q + ":active", i)
        a, plan = int(a), json.loads(h) or [[0, 0]]
        out({"e": "started", "id": i, "a": a, "t": time.time_ns()})
        us, fail = plan[min(a, len(plan) - 1)]
        time.sleep(us / 1e6)
        end = time.time_ns()
        r.call("SREM", Q + ":active", i)
        if not fail:
            r.call("HSET", key, "s", "completed")
            r.call("INCR", Q + ":completed")
            out({"e": "completed", "id": i, "a": a, "t": time.time_ns(), "h": end})
        elif a < int(retries):
            ra = time.time_ns() + CFG.get("backoff_ms", 1000) * 10**6
            r.call("HSET", key, "s", "delayed", "a", a + 1)
            r.call("ZADD", Q + ":delayed", ra // 10**6, i)
            out({"e": "failed", "id": i, "a": a, "t": time.time_ns(), "dead": False, "ra": ra})
        else:
            r.call("HSET", key, "s", "failed")
            r.call("INCR", Q + ":dead")
            out({"e": "failed", "id": i, "a": a, "t": time.time_ns(), "dead": True, "ra": 0})


def worker():
    hello()
    stop = threading.Event()
    threads = [threading.Thread(target=work, args=(stop,)) for _ in range(max(1, CFG.get("concurrency", 1)))]
    for t in threads:
        t.start()
    out({"e": "ready"})
    sys.stdin.read()  # stdin's end is the clean shutdown: finish what is held, then exit
    stop.set()
    for t in threads:
        t.join()


if __name__ == "__main__":
    {"hello": hello, "client": client, "worker": worker}[sys.argv[-1]]()
