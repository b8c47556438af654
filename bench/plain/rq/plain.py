"""A plain RQ program, written apart from aebench's driver and sharing no
code with it: RQ as its documents show it, with its defaults
(enqueue_many, SimpleWorker processes in burst mode: RQ's performance
notes). It enqueues --jobs jobs of a function that does nothing, then
--concurrency worker processes drain them, and prints one JSON line: the
jobs/s over the jobs' own end times (RQ's ended_at) after the first fifth
(the warm-up). Run with the Python whose rq aebench's driver uses
(drivers/rq/.venv/bin/python)."""
import argparse
import json
import os
import sys

import redis
from rq import Queue, SimpleWorker
from rq.job import Job

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plainjob  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=6379)
ap.add_argument("--password", default="")
ap.add_argument("--jobs", type=int, default=10000)
ap.add_argument("--concurrency", type=int, default=4)
ap.add_argument("--queue", default="plain")
a = ap.parse_args()
conn = redis.Redis(host=a.host, port=a.port, password=a.password or None)
q = Queue(a.queue, connection=conn)
ids = ["p%d" % k for k in range(a.jobs)]
for i in range(0, a.jobs, 1000):
    q.enqueue_many([Queue.prepare_data(plainjob.nothing, args=("a" * 64,), job_id=j) for j in ids[i:i + 1000]])
kids = []
for _ in range(a.concurrency):
    pid = os.fork()
    if pid == 0:
        c = redis.Redis(host=a.host, port=a.port, password=a.password or None)
        SimpleWorker([Queue(a.queue, connection=c)], connection=c).work(burst=True, logging_level="WARNING")
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
ends = sorted(j.ended_at.timestamp() for j in Job.fetch_many(ids, connection=conn) if j and j.ended_at)
skip = len(ends) // 5
secs = ends[-1] - ends[skip - 1]
print(json.dumps({"jobs_per_s": (len(ends) - skip) / secs, "jobs": len(ends) - skip, "seconds": secs}))
