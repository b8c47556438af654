"""The job function the RQ driver enqueues (an importable module, as RQ
stores a function by its dotted name): it sleeps as the job's plan says,
then raises for an injected failure. The worker reports its start."""
import os
import time

import rq

PLAN_KEY = "h"


def emit(line):
    # One os.write per event: atomic on a pipe below PIPE_BUF, so the
    # worker processes of one driver never interleave a line.
    os.write(1, (line + "\n").encode())


def handle(payload, plan):
    job = rq.get_current_job()
    attempt = int(job.meta.get("ae_attempt", 0))
    step = plan[min(attempt, len(plan) - 1)] if plan else [0, 0]
    emit('{"e":"started","id":"%s","a":%d,"t":%d}' % (job.id, attempt, time.time_ns()))
    if step[0] > 0:
        time.sleep(step[0] / 1e6)
    job.meta["ae_h"] = time.time_ns()
    if step[1]:
        raise RuntimeError("aebench: injected handler failure")
    return None
