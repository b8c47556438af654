# frozen_string_literal: true

# A plain Sidekiq program, written apart from aebench's driver and sharing
# no code with it: Sidekiq 6.4 (Debian's ruby-sidekiq) as its wiki shows
# it, with its defaults (BasicFetch, logs at WARN as aebench's driver
# runs). It pushes --jobs jobs with Sidekiq::Client.push_bulk, then a
# Sidekiq::Launcher with --concurrency threads drains them with a perform
# that only records its end, and prints one JSON line: the jobs/s over the
# completions after the first fifth (the warm-up).
require "json"
require "sidekiq"
require "sidekiq/launcher"
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

opts = ARGV.each_slice(2).to_h { |k, v| [k.delete_prefix("--"), v] }
JOBS = Integer(opts.fetch("jobs", "10000"))
CONC = Integer(opts.fetch("concurrency", "10"))
QUEUE = opts.fetch("queue", "plain")
pass = opts["password"].to_s.empty? ? nil : opts["password"]
# The pool the server needs, as Sidekiq's CLI sizes it (concurrency + 5):
# one process is both client and server here.
redis = {url: "redis://#{opts.fetch("host", "127.0.0.1")}:#{opts.fetch("port", "6379")}/0", password: pass, size: CONC + 5}
Sidekiq.configure_client { |c| c.redis = redis }
Sidekiq.configure_server { |c| c.redis = redis }
Sidekiq.logger = Sidekiq::Logger.new($stderr)
Sidekiq.logger.level = Logger::WARN

TIMES = Queue.new

class PlainJob
  include Sidekiq::Worker
  def perform(_k, _p) = TIMES << Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

payload = "a" * 64
(0...JOBS).each_slice(1000) do |ks|
  Sidekiq::Client.push_bulk("class" => PlainJob, "queue" => QUEUE, "args" => ks.map { |k| [k, payload] })
end
launcher = Sidekiq::Launcher.new(Sidekiq.options.merge(concurrency: CONC, queues: [QUEUE]))
launcher.run
times = Array.new(JOBS) { TIMES.pop }.sort
skip = JOBS / 5
secs = times[-1] - times[skip - 1]
$stdout.puts JSON.generate({jobs_per_s: (JOBS - skip) / secs, jobs: JOBS - skip, seconds: secs})
$stdout.flush
launcher.stop
exit!(0)
