# frozen_string_literal: true

# aebench driver for Sidekiq, protocol 1 (docs/drivers.md).
#
# Roles (ARGV[0]): hello, client (enqueue, inspect, stats), worker
# (Sidekiq's own CLI and launcher in this process) and loop (the plain loop
# the driver's overhead is measured against). The configuration comes as
# JSON in AEBENCH_DRIVER_CONFIG; requests arrive as JSON lines on stdin,
# events leave as JSON lines on stdout, logs go to stderr.
#
# Settings, as Sidekiq's documents give them: the open-source BasicFetch
# (BRPOP; a killed process loses the jobs it holds, as Sidekiq's wiki says:
# reliable fetch is Sidekiq Pro's); concurrency threads in one process;
# Client.push_bulk for batches (aebench's id is the job's first argument,
# as push_bulk makes its own jids); perform_at through push_bulk's "at";
# retry: the job's retries with sidekiq_retry_in = backoff in whole seconds (Sidekiq
# adds its jitter of rand(10) * (count + 1) s); the scheduled poller at
# Sidekiq's default average_scheduled_poll_interval (5 s). The scenario's
# queues (store.queues) are Sidekiq queues, fetched in order (strict) or
# by weight (weighted), as Sidekiq's -q queue[,weight] options give them.
$stdout.sync = true
require_relative "aebench_job"
$stdout = $stderr # Sidekiq and Ruby print to stdout; only events go there

module Aebench
  PROTOCOL = 1

  def self.hello
    emit({e: "hello", protocol: PROTOCOL, driver: "sidekiq", driver_version: "1.0.0", system: "sidekiq",
          system_version: Sidekiq::VERSION, runtime: "ruby #{RUBY_VERSION}",
          caps: {delayed: true, retries: "sidekiq_retry_in + jitter", recovery: "none", batch_enqueue: true, inspect: true,
                 queues: %w[strict weighted]},
          loses: ["worker_kill"], holds_extra: 1,
          guarantees: "at most once under a crash: BasicFetch takes a job off the queue with BRPOP, so a killed " \
                      "process loses the jobs it holds (reliable fetch is Sidekiq Pro's); delayed jobs and retries " \
                      "wait for the scheduled poller, whose job between ZPOPBYSCORE and its push a kill also loses"})
  end

  def self.enqueue(jobs)
    now = Time.now.to_f
    jobs.group_by { |j| [j["r"].to_i, j["q"].to_s] }.each do |(retries, q), js|
      due, later = js.partition { |j| j["at"].to_i.zero? || j["at"] / 1000.0 <= now }
      item = {"class" => Job, "retry" => retries, "queue" => queue_of(q)}
      Sidekiq::Client.push_bulk(item.merge("args" => due.map { |j| [j["id"], j["p"], j["h"]] })) unless due.empty?
      next if later.empty?
      Sidekiq::Client.push_bulk(item.merge("args" => later.map { |j| [j["id"], j["p"], j["h"]] },
        "at" => later.map { |j| j["at"] / 1000.0 }))
    end
  end

  def self.pid_alive?(identity)
    Process.kill(0, identity.split(":")[-2].to_i)
    true
  rescue Errno::ESRCH, Errno::EPERM
    false
  end

  # where maps aebench ids to [state, reachable] from what Sidekiq keeps:
  # the queue, the scheduled, retry and dead sets, and the busy jobs of
  # live processes. A finished job leaves no record in Sidekiq. The lists
  # and sets are read whole with one LRANGE or ZRANGE each on Sidekiq's own
  # keys (Sidekiq::Queue#each pages them 50 at a time and builds a record
  # per job: 8 s for each 20k-id chunk behind a 190k backlog), read in the
  # order a job moves through them, a later one overriding an earlier. The
  # map is kept for SNAPSHOT_TTL, or twice what it took to build, across
  # the chunks of one read-back; a request of fewer than SNAPSHOT_MIN_IDS
  # ids (a Get, a small read-back) reads afresh, as a kept map may be
  # that old.
  SNAPSHOT_TTL = 2.0
  SNAPSHOT_MIN_IDS = 1000
  SNAPSHOT = Mutex.new
  def self.where(ids)
    return read_where if ids < SNAPSHOT_MIN_IDS
    SNAPSHOT.synchronize do
      now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      return @where if @where && now - @where_at < [SNAPSHOT_TTL, 2 * @where_took].max
      @where = read_where
      @where_at = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      @where_took = @where_at - now
      @where
    end
  end

  def self.read_where
    w = {}
    put = ->(payloads, state) { payloads.each { |p| w[JSON.parse(p)["args"][0]] = [state, true] } }
    Sidekiq.redis do |c|
      put.call(c.zrange("schedule", 0, -1), "delayed")
      put.call(c.zrange("retry", 0, -1), "delayed")
      queue_names.each { |q| put.call(c.lrange("queue:#{q}", 0, -1), "waiting") }
      put.call(c.zrange("dead", 0, -1), "failed")
    end
    Sidekiq::Workers.new.each do |identity, _tid, work|
      payload = work["payload"]
      payload = JSON.parse(payload) if payload.is_a?(String)
      w[payload["args"][0]] = ["active", pid_alive?(identity)]
    end
    w
  end

  def self.serve(req)
    case req["op"]
    when "enqueue"
      enqueue(req["jobs"])
      {e: "ack", seq: req["seq"]}
    when "inspect"
      w = where(req["ids"].size)
      {e: "states", seq: req["seq"], states: req["ids"].map { |id| s, r = w[id] || ["unknown", false]; {s: s, r: r} }}
    when "stats"
      st = Sidekiq::Stats.new
      {e: "stats", seq: req["seq"], due: queue_names.sum { |q| Sidekiq::Queue.new(q).size }, delayed: st.scheduled_size + st.retry_size,
       active: Sidekiq::Workers.new.size, completed: st.processed - st.failed, dead: st.dead_size}
    else
      {e: "refused", seq: req["seq"], msg: "unknown op #{req["op"].inspect}"}
    end
  rescue => e
    {e: "refused", seq: req["seq"], msg: "#{e.class}: #{e.message}"}
  end

  CLIENT_THREADS = 8

  # client serves requests from a pool of threads, as aebench's producers
  # send them concurrently: one thread would cap enqueues at its round trips.
  def self.client
    hello
    Sidekiq.redis(&:ping)
    emit({e: "ready"})
    work = Queue.new
    threads = Array.new(CLIENT_THREADS) do
      Thread.new { while (line = work.pop) do emit(serve(JSON.parse(line))) end }
    end
    $stdin.each_line { |line| work << line }
    work.close
    threads.each(&:join)
  end

  def self.worker
    hello
    require "sidekiq/cli"
    configure_server!
    cli = Sidekiq::CLI.instance
    cli.parse([*queue_args, "-c", CFG.fetch("concurrency", 1).to_s, "-t", "25",
      "-r", File.join(__dir__, "aebench_job.rb")])
    Sidekiq.logger = Sidekiq::Logger.new($stderr)
    Sidekiq.logger.level = Logger::WARN
    # Stdin's end is the clean shutdown: TERM is Sidekiq's, it finishes
    # what it holds (within -t) and exits.
    Thread.new { $stdin.read; Process.kill("TERM", Process.pid) }
    cli.run
  end

  # loop: n jobs pushed with push_bulk, then Sidekiq's CLI (the way Sidekiq
  # is run) with the same concurrency drains them; a server middleware
  # counts them and stops the process.
  def self.loop
    n = CFG.fetch("jobs", 10_000)
    unless CFG["prefilled"]
      (0...n).each_slice(100) { |s| Sidekiq::Client.push_bulk("class" => Job, "args" => s.map { |k| ["L#{k}", CFG["payload"].to_s, [[0, 0]]] }) }
    end
    require "sidekiq/cli"
    count = 0
    lock = Mutex.new
    t0 = nil
    skip = n / 5 # warm-up: the rate is taken over the last four fifths
    times = [] # each completion's CLOCK_REALTIME ns, for the time-sliced check
    Sidekiq.configure_server do |config|
      config.redis = redis_options
      config.server_middleware do |chain|
        chain.add(Class.new do
          define_method(:call) do |*, &b|
            b.call
            c = lock.synchronize do
              times << Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)
              count += 1
            end
            t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC) if c == skip
            next unless c == n
            secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
            Aebench.emit({e: "loop", jobs: n - skip, seconds: secs, jobs_per_s: (n - skip) / secs, times: times})
            Process.kill("TERM", Process.pid)
          end
        end)
      end
    end
    cli = Sidekiq::CLI.instance
    cli.parse(["-q", CFG["queue"], "-c", CFG.fetch("concurrency", 1).to_s, "-t", "5", "-r", File.join(__dir__, "aebench_job.rb")])
    Sidekiq.logger.level = Logger::WARN
    cli.run
  end
end

roles = %w[hello client worker loop]
role = ARGV[0] || Aebench::CFG["role"] || "hello"
unless roles.include?(role)
  warn "sidekiq driver: unknown role #{role.inspect}; allowed: #{roles.join(", ")}"
  exit 2
end
Aebench.send(role)
