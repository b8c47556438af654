'use strict';
// aebench driver for BullMQ, protocol 1 (docs/drivers.md).
//
// Roles (argv[2]): hello, client (enqueue, inspect, stats), worker (BullMQ's
// own Worker loop) and loop (the plain loop the driver's overhead is
// measured against). The configuration comes as JSON in
// AEBENCH_DRIVER_CONFIG; requests arrive as JSON lines on stdin, events
// leave as JSON lines on stdout (synchronous writes on a pipe on Linux,
// gathered at most a millisecond: see FLUSH_GAP_MS), logs go to stderr.
//
// Settings, as BullMQ's own documents recommend for reliability and
// throughput: Queue.addBulk for enqueue batches; attempts = the job's retries + 1
// with a fixed backoff of backoff_ms; lockDuration and stalledInterval set
// to the scenario's lease, so a killed worker's jobs come back at the next
// stalled check; maxStalledCount 1 (BullMQ's default); finished jobs kept
// for retention_ms (removeOnComplete/removeOnFail by age), as aebench's
// stores keep finished records for Options.Retention; with peer_mode
// native, BullMQ's auto-removal as its guide shows it (removeOnComplete:
// true, failed jobs kept, BullMQ's default), its cheapest setting. With the
// scenario's queues (cfg.queues, store.queues) a job's queue is a BullMQ
// priority, its queue's place in the list (1, the highest, first):
// BullMQ's prioritized jobs are served strictly by priority, FIFO within
// one, so the driver declares the strict policy only.
const { Queue, Worker } = require('bullmq');
const fs = require('fs');
const readline = require('readline');

const PROTOCOL = 1;
const cfg = JSON.parse(process.env.AEBENCH_DRIVER_CONFIG || '{}');
const role = process.argv[2] || cfg.role || 'hello';

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
// A worker's events leave in one write at most every FLUSH_GAP_MS: with
// 1 ms BullMQ ran at 0.83x its plain loop in the overhead check's turns,
// with 10 ms at 0.89-0.93x. Their timestamps
// are taken when they happen, so the gathering delays aebench's
// bookkeeping, never what it measures. When the run schedules faults
// (events_at_once) each event leaves as it happens, so a SIGKILL cuts off
// at most the event of its instant; BullMQ keeps finished jobs
// (removeOnComplete by age), so a completion whose event was cut off is
// read back from Redis (docs/drivers.md).
const FLUSH_GAP_MS = 10;
let pending = [];
let armed = false;
let lastFlush = 0;
// fs.writeSync skips the stream machinery of process.stdout (a pipe's
// writes are synchronous either way).
const flush = () => {
  armed = false;
  lastFlush = performance.now();
  const s = pending.join('');
  pending = [];
  writeAll(s);
};
function writeAll(s) {
  const b = Buffer.from(s);
  for (let off = 0; off < b.length;) {
    try {
      off += fs.writeSync(1, b, off);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
    }
  }
}
const event = (line) => {
  if (cfg.events_at_once) {
    writeAll(line);
    return;
  }
  pending.push(line);
  if (armed) return;
  armed = true;
  const wait = lastFlush + FLUSH_GAP_MS - performance.now();
  if (wait <= 0) setImmediate(flush);
  else setTimeout(flush, wait);
};
const nowNs = () => Math.round((performance.timeOrigin + performance.now()) * 1e6);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// connection is ioredis's options for the run's Redis: an ACL user and,
// for a rediss:// Redis, TLS with the URL's CA, client certificate and
// verification (Node checks an IP host against the certificate's IP
// names itself; an IP is not a valid SNI server name).
function connection() {
  const r = cfg.redis || {};
  const c = { host: r.host || '127.0.0.1', port: r.port, username: r.username || undefined,
    password: r.password || undefined, db: r.db || 0, maxRetriesPerRequest: null };
  const t = r.tls;
  if (t) {
    const name = t.server_name || c.host;
    c.tls = { rejectUnauthorized: !t.skip_verify, servername: require('net').isIP(name) ? undefined : name };
    if (t.ca_file) c.tls.ca = fs.readFileSync(t.ca_file);
    if (t.cert_file) {
      c.tls.cert = fs.readFileSync(t.cert_file);
      c.tls.key = fs.readFileSync(t.key_file);
    }
  }
  return c;
}

// PRIORITY maps a queue's name to its BullMQ priority (1 highest).
const PRIORITY = new Map((cfg.queues || []).map((q, i) => [q.name, i + 1]));

function jobOpts(j) {
  const o = { jobId: j.id, attempts: (j.r || 0) + 1 };
  if (NATIVE) {
    o.removeOnComplete = true;
  } else {
    const keep = { age: Math.max(1, Math.ceil((cfg.retention_ms || 3600000) / 1000)) };
    o.removeOnComplete = keep;
    o.removeOnFail = keep;
  }
  if (PRIORITY.size > 0) o.priority = PRIORITY.get(j.q) || 1;
  if (cfg.backoff_ms > 0) o.backoff = { type: 'fixed', delay: cfg.backoff_ms };
  const delay = j.at ? j.at - Date.now() : 0;
  if (delay > 0) o.delay = delay;
  return o;
}

const NATIVE = cfg.peer_mode === 'native';

function hello() {
  out({ e: 'hello', protocol: PROTOCOL, driver: 'bullmq', driver_version: '1.0.0', system: 'bullmq',
    system_version: require('bullmq/package.json').version, runtime: 'node ' + process.version,
    caps: { delayed: true, retries: 'fixed backoff', recovery: 'stalled-check', batch_enqueue: true, inspect: true,
      queues: ['strict'] },
    loses: [],
    guarantees: 'at least once: a killed worker\'s active job goes back to wait at the next stalled check ' +
      '(stalledInterval = the lease) and runs again; a job stalled more than maxStalledCount (1) times fails',
    removes_finished: NATIVE ? 'peer_mode native: removeOnComplete true deletes a completed job\'s hash as it completes ' +
      '(BullMQ\'s auto-removal), so a completion whose event a kill cut off cannot be read back' : undefined });
}

// The state protocol 1 knows for a BullMQ state, and whether BullMQ will
// still reach the job: an active job whose worker died is taken back by the
// stalled check.
const STATES = { waiting: 'waiting', prioritized: 'waiting', 'waiting-children': 'waiting', delayed: 'delayed',
  active: 'active', completed: 'completed', failed: 'failed' };

async function client() {
  hello();
  const queue = new Queue(cfg.queue, { connection: connection() });
  await queue.waitUntilReady();
  out({ e: 'ready' });
  const rl = readline.createInterface({ input: process.stdin });
  const pending = new Set();
  rl.on('line', (line) => {
    const p = serve(queue, JSON.parse(line)).catch((err) => ({ e: 'refused', msg: String(err && err.message) }));
    pending.add(p);
    p.then((reply) => { pending.delete(p); out(reply); });
  });
  rl.on('close', async () => { await Promise.all(pending); await queue.close(); process.exit(0); });
}

// inspect answers the states of many jobs at once. Queue.getJobState per
// id finds a waiting job with LPOS over the wait list, O(backlog) per id:
// a read-back of 20k ids behind a 50k backlog took over 10 s. Here every
// state's ids are read once with Queue.getRanges (one call a state) into
// a map, kept for SNAPSHOT_TTL_MS across the chunks of one read-back. The
// states are read in the order a job moves through them, a later one
// overriding an earlier, so a job that moved on between two reads is
// found where it went; an id found nowhere (it left delayed for wait
// between those two reads) is asked again with getJobState, exactly.
// A request of fewer than SNAPSHOT_MIN_IDS ids (a Get, a small read-back)
// is answered exactly, id by id: a snapshot's answer may be up to its TTL
// old (drivers check found a completed job read back as waiting).
const SNAPSHOT_TTL_MS = 2000;
const SNAPSHOT_MIN_IDS = 1000;
const SNAPSHOT_ORDER = ['wait', 'paused', 'prioritized', 'waiting-children', 'delayed', 'active', 'completed', 'failed'];
const SNAPSHOT_STATE = { wait: 'waiting', paused: 'waiting' };
let snapshot = { at: -Infinity, of: null };
async function inspect(queue, ids) {
  if (ids.length < SNAPSHOT_MIN_IDS) return Promise.all(ids.map((id) => queue.getJobState(id)));
  if (performance.now() - snapshot.at > SNAPSHOT_TTL_MS) {
    const of = new Map();
    for (const type of SNAPSHOT_ORDER) {
      for (const id of await queue.getRanges([type], 0, -1)) of.set(id, SNAPSHOT_STATE[type] || type);
    }
    snapshot = { at: performance.now(), of };
  }
  const states = [];
  for (const id of ids) states.push(snapshot.of.get(id) || await queue.getJobState(id));
  return states;
}

async function serve(queue, req) {
  const seq = req.seq;
  switch (req.op) {
    case 'enqueue':
      try {
        await queue.addBulk(req.jobs.map((j) => ({ name: 'j', data: { p: j.p, h: j.h }, opts: jobOpts(j) })));
        return { e: 'ack', seq };
      } catch (err) {
        return { e: 'refused', seq, msg: String(err.message) };
      }
    case 'inspect': {
      const states = await inspect(queue, req.ids);
      return { e: 'states', seq, states: states.map((s) => {
        const st = STATES[s] || 'unknown';
        return { s: st, r: st !== 'unknown' };
      }) };
    }
    case 'stats': {
      const c = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed');
      return { e: 'stats', seq, due: c.waiting + c.prioritized, delayed: c.delayed, active: c.active,
        completed: c.completed, dead: c.failed };
    }
    default:
      return { e: 'refused', seq, msg: 'unknown op ' + JSON.stringify(req.op) };
  }
}

function worker() {
  hello();
  const plan = (job) => {
    const h = (job.data && job.data.h) || [];
    return h.length ? h[Math.min(job.attemptsStarted - 1, h.length - 1)] : [0, 0];
  };
  // run keeps each active job's attempt and handler end beside the job,
  // not on it: a property added to BullMQ's Job objects would change
  // their shape under BullMQ's own code.
  // Without faults a job's start travels in its completed or failed event
  // ("s"): one event a job, not two (docs/drivers.md). When the run
  // schedules faults the start leaves at once, so a kill finds it.
  const run = new WeakMap();
  // A handler with no work to do reads the clock once: its end is its
  // start (a second read cost BullMQ about 2% of its jobs/s in the
  // overhead check, for a difference of well under a microsecond).
  const w = new Worker(cfg.queue, async (job) => {
    const s = nowNs();
    const r = { a: job.attemptsStarted - 1, h: s, q: JSON.stringify(job.id), s };
    run.set(job, r);
    if (cfg.events_at_once) {
      event(`{"e":"started","id":${r.q},"a":${r.a},"t":${r.s}}\n`);
      r.s = 0;
    }
    const [us, fail] = plan(job);
    if (us > 0) {
      await sleep(us / 1000);
      r.h = nowNs();
    }
    if (fail) throw new Error('aebench: injected handler failure');
  }, { connection: connection(), concurrency: cfg.concurrency || 1, autorun: false,
    lockDuration: cfg.lease_ms || 30000, stalledInterval: cfg.lease_ms || 30000, maxStalledCount: 1 });
  w.on('completed', (job) => {
    const r = run.get(job) || { a: job.attemptsStarted - 1, h: 0, q: JSON.stringify(job.id), s: 0 };
    event(`{"e":"completed","id":${r.q},"a":${r.a},"t":${nowNs()},"h":${r.h},"s":${r.s}}\n`);
  });
  w.on('failed', (job, err) => {
    if (!job) return out({ e: 'err', msg: 'failed without a job: ' + (err && err.message) });
    const dead = job.attemptsMade >= (job.opts.attempts || 1);
    const ra = dead ? 0 : (Date.now() + (cfg.backoff_ms || 0)) * 1e6;
    const r = run.get(job);
    event(JSON.stringify({ e: 'failed', id: job.id, a: r ? r.a : job.attemptsStarted - 1, t: nowNs(), dead, ra, s: r ? r.s : 0 }) + '\n');
  });
  w.on('error', (err) => out({ e: 'err', msg: String(err && err.message) }));
  w.waitUntilReady().then(() => { out({ e: 'ready' }); w.run(); });
  // Stdin's end is the clean shutdown: finish what is active, then exit.
  process.stdin.resume();
  process.stdin.on('end', async () => { await w.close(); flush(); process.exit(0); });
}

// loop is the plain program the driver is measured against: n jobs added
// with addBulk, then one Worker with the same options drains them; it
// prints the drain's jobs/s over its last four fifths (the first fifth
// warms the runtime up, in the loop as in the driver).
async function loop() {
  const n = cfg.jobs || 10000;
  const queue = new Queue(cfg.queue, { connection: connection() });
  for (let i = 0; !cfg.prefilled && i < n; i += 100) {
    const batch = [];
    for (let k = i; k < Math.min(n, i + 100); k++) batch.push({ name: 'j', data: { p: cfg.payload || '', h: [[0, 0]] }, opts: jobOpts({ id: 'L' + k }) });
    await queue.addBulk(batch);
  }
  let done = 0;
  let t0 = 0;
  const skip = Math.floor(n / 5); // warm-up: the rate is taken over the last 4/5
  // Each completion's time (CLOCK_REALTIME ns), printed at the end: the
  // time-sliced check counts the loop's jobs in each of its slices.
  const times = new Array(n);
  const finished = new Promise((resolve) => {
    const w = new Worker(cfg.queue, async () => {}, { connection: connection(), concurrency: cfg.concurrency || 1,
      autorun: false, lockDuration: cfg.lease_ms || 30000, stalledInterval: cfg.lease_ms || 30000 });
    w.on('completed', () => {
      times[done] = nowNs();
      if (++done === skip) t0 = performance.now();
      if (done === n) resolve(w);
    });
    w.waitUntilReady().then(() => w.run());
  });
  const w = await finished;
  const secs = (performance.now() - t0) / 1000;
  // writeAll: a write to a pipe this long may come back short, and exit
  // would drop what process.stdout had not written yet.
  writeAll(JSON.stringify({ e: 'loop', jobs: n - skip, seconds: secs, jobs_per_s: (n - skip) / secs, times }) + '\n');
  await w.close();
  await queue.close();
  process.exit(0);
}

const roles = { hello: async () => { hello(); process.exit(0); }, client, worker, loop };
if (!roles[role]) {
  process.stderr.write(`bullmq driver: unknown role ${JSON.stringify(role)}; allowed: ${Object.keys(roles).join(', ')}\n`);
  process.exit(2);
}
Promise.resolve(roles[role]()).catch((err) => { process.stderr.write(`bullmq driver: ${err && err.stack}\n`); process.exit(1); });
