// A plain BullMQ program, written apart from aebench's driver and sharing
// no code with it: BullMQ as its guide shows it, with its defaults (jobs
// kept, attempts 1). It enqueues --jobs jobs with Queue.addBulk, then one
// Worker with --concurrency drains them with a processor that does
// nothing, and prints one JSON line: the jobs/s over the completions after
// the first fifth (the warm-up). Run with NODE_PATH at a node_modules that
// holds bullmq (aebench peer-check uses drivers/bullmq's, the same pinned
// release).
const { Queue, Worker } = require('bullmq');

const arg = (name, dflt) => {
  const i = process.argv.indexOf('--' + name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const connection = { host: arg('host', '127.0.0.1'), port: Number(arg('port', 6379)), password: arg('password', '') || undefined };
const jobs = Number(arg('jobs', 10000));
const concurrency = Number(arg('concurrency', 4));
const name = arg('queue', 'plain');

(async () => {
  const queue = new Queue(name, { connection });
  const payload = 'a'.repeat(64);
  for (let i = 0; i < jobs; i += 1000) {
    const batch = [];
    for (let k = i; k < Math.min(jobs, i + 1000); k++) batch.push({ name: 'j', data: { p: payload, k } });
    await queue.addBulk(batch);
  }
  const times = [];
  let finish;
  const done = new Promise((resolve) => { finish = resolve; });
  const worker = new Worker(name, async () => {}, { connection, concurrency });
  worker.on('completed', () => {
    times.push(performance.now());
    if (times.length === jobs) finish();
  });
  await done;
  const skip = Math.floor(jobs / 5);
  const secs = (times[times.length - 1] - times[skip - 1]) / 1000;
  process.stdout.write(JSON.stringify({ jobs_per_s: (jobs - skip) / secs, jobs: jobs - skip, seconds: secs }) + '\n');
  await worker.close();
  await queue.close();
  process.exit(0);
})();
