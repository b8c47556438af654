# frozen_string_literal: true

# The job class and event middleware of aebench's Sidekiq driver (required
# by driver.rb, and by Sidekiq's CLI with -r in the worker role).
require "fiddle"
require "json"
require "openssl"
require "sidekiq"
require "sidekiq/api"
# Debian's redis-rb 4.8 warns on every call Sidekiq 6.4 makes the 4.x way.
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
# Sidekiq's logger writes to stdout by default; stdout carries the events.
Sidekiq.logger = Sidekiq::Logger.new($stderr)
Sidekiq.logger.level = Logger::WARN

module Aebench
  CFG = JSON.parse(ENV["AEBENCH_DRIVER_CONFIG"] || "{}")
  # EVENTS is the process's stdout when it started; driver.rb points $stdout
  # at stderr, so Sidekiq's logs never mix with the events.
  EVENTS = IO.new(1, "w").tap { |io| io.sync = true }
  def self.emit(obj) = write(JSON.generate(obj) + "\n")

  # write puts lines on the pipe in one write(2) while holding the GVL:
  # IO#syswrite gives the GVL up around the syscall and then waits to get it
  # back behind Sidekiq's other threads, which cost about a quarter of
  # Sidekiq's jobs/s. libc's write through Fiddle (need_gvl: true) keeps it;
  # a short write finishes with syswrite.
  WRITE = Fiddle::Function.new(Fiddle::Handle::DEFAULT["write"], [Fiddle::TYPE_INT, Fiddle::TYPE_VOIDP, Fiddle::TYPE_SIZE_T],
    Fiddle::TYPE_SSIZE_T, need_gvl: true)
  def self.write(line)
    n = WRITE.call(1, line, line.bytesize)
    return if n == line.bytesize
    EVENTS.syswrite(n.positive? ? line.byteslice(n..) : line)
  end

  # event gathers a worker's event lines and writes them at most once every
  # FLUSH_GAP (a write per event cost about a sixth of Sidekiq's jobs/s);
  # the flusher thread writes what a burst's end left behind. Their
  # timestamps are taken when they happen. When the run schedules faults
  # (events_at_once), each is written as it happens: a SIGKILL would cut
  # off a gathered completion, and Sidekiq keeps no record of a finished
  # job to read it back from, so it would read as lost.
  #
  # The lock is held through a write: with a 1 ms gap Sidekiq's threads
  # waited on it (futex waits in a profile); every 10 ms it is seldom held
  # (0.88-0.91x its plain loop in the overhead check's turns; 5 ms: 0.88x).
  FLUSH_GAP = 0.010
  FLUSH_TAIL = 0.02 # the flusher's period: a burst's last events wait at most this
  AT_ONCE = CFG["events_at_once"] == true
  @buf = +""
  @last_flush = 0.0
  @lock = Mutex.new
  def self.event(line)
    return write(line) if AT_ONCE # write holds the GVL: whole lines

    @lock.synchronize do
      @buf << line
      now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      flush_locked(now) if now - @last_flush >= FLUSH_GAP
    end
  end

  def self.flush_locked(now)
    @last_flush = now
    return if @buf.empty?

    write(@buf)
    @buf = +""
  end

  def self.flush = @lock.synchronize { flush_locked(Process.clock_gettime(Process::CLOCK_MONOTONIC)) }

  def self.start_flusher
    at_exit { flush } # Sidekiq's clean stop ends in exit
    Thread.new do
      Kernel.loop do
        sleep FLUSH_TAIL
        flush unless @buf.empty?
      end
    end
  end

  def self.now_ns = Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)

  # The scenario's queues (store.queues), highest priority first: each is
  # the Sidekiq queue <queue>.<name>; without them, the one queue.
  QUEUES = (CFG["queues"] || []).map { |q| ["#{CFG["queue"]}.#{q["name"]}", q["weight"].to_i] }
  def self.queue_names = QUEUES.empty? ? [CFG["queue"]] : QUEUES.map(&:first)
  def self.queue_of(name) = name.to_s.empty? || QUEUES.empty? ? queue_names.first : "#{CFG["queue"]}.#{name}"

  # queue_args are the CLI's -q options: in order without weights, which
  # Sidekiq fetches strictly (BRPOP over the list as given), or with
  # them, which it fetches weighted (a shuffle by weight per fetch:
  # sidekiq/fetch.rb queues_cmd).
  def self.queue_args
    return ["-q", CFG["queue"]] if QUEUES.empty?

    weighted = CFG["queue_policy"] == "weighted"
    QUEUES.flat_map { |name, w| ["-q", weighted ? "#{name},#{[w, 1].max}" : name] }
  end

  # redis_options are redis-rb's options for the run's Redis: an ACL user
  # and password apart from the URL (redis-rb takes them as options), and
  # for a rediss:// Redis its CA, client certificate and verification.
  def self.redis_options
    r = CFG["redis"] || {}
    t = r["tls"]
    o = {url: "#{t ? "rediss" : "redis"}://#{r["host"] || "127.0.0.1"}:#{r["port"]}/#{r["db"] || 0}"}
    o[:username] = r["username"] unless r["username"].to_s.empty?
    o[:password] = r["password"] unless r["password"].to_s.empty?
    return o unless t

    p = {verify_mode: t["skip_verify"] ? OpenSSL::SSL::VERIFY_NONE : OpenSSL::SSL::VERIFY_PEER}
    p[:ca_file] = t["ca_file"] unless t["ca_file"].to_s.empty?
    unless t["cert_file"].to_s.empty?
      p[:cert] = OpenSSL::X509::Certificate.new(File.read(t["cert_file"]))
      p[:key] = OpenSSL::PKey.read(File.read(t["key_file"]))
    end
    o.merge(ssl_params: p)
  end

  # Job runs the plan aebench gave the job: args are [id, payload, plan],
  # plan[attempt] = [handler µs, fail 0/1].
  class Job
    include Sidekiq::Worker
    sidekiq_options queue: CFG["queue"], backtrace: false
    sidekiq_retry_in { |_count, _exc| (CFG.fetch("backoff_ms", 0) / 1000.0).ceil }

    def perform(_id, _payload, plan)
      step = (plan || [])[[Thread.current[:ae_attempt].to_i, (plan || [0]).size - 1].min] || [0, 0]
      sleep(step[0] / 1e6) if step[0].positive?
      Thread.current[:ae_h] = Aebench.now_ns
      raise "aebench: injected handler failure" if step[1] == 1
    end
  end

  # Events reports start, completion and failure around each job. Sidekiq's
  # retry handling wraps the middleware, so a failure is reported before
  # Sidekiq writes its retry (dead when the retries are spent).
  class Events
    # Events reports each job's start and end. Without faults (not
    # events_at_once) a job's start travels in its completed or failed
    # event ("s"): one event a job, not two, as the engine's reader
    # allows (docs/drivers.md); two cost Sidekiq a tenth of its jobs/s.
    # Started and completed are written without JSON.generate.
    def call(_worker, job, _queue)
      id = job["args"][0]
      a = job["retry_count"] ? job["retry_count"] + 1 : 0
      Thread.current[:ae_attempt] = a
      # aebench's ids need no escaping; to_json (a fifth of the events'
      # cost) only for one that does.
      q = id.is_a?(String) && id.count("\"\\\\\x00-\x1f").zero? ? %("#{id}") : id.to_json
      s = Aebench.now_ns
      Aebench.event(%({"e":"started","id":#{q},"a":#{a},"t":#{s}}\n)) if AT_ONCE
      s = 0 if AT_ONCE
      begin
        yield
      rescue Exception # rubocop:disable Lint/RescueException
        dead = a >= job["retry"].to_i # retry: the job's retries (push_bulk's "retry")
        ra = dead ? 0 : Aebench.now_ns + (CFG.fetch("backoff_ms", 0) / 1000.0).ceil * 1_000_000_000
        Aebench.event(JSON.generate({e: "failed", id: id, a: a, t: Aebench.now_ns, dead: dead, ra: ra, s: s}) + "\n")
        raise
      end
      Aebench.event(%({"e":"completed","id":#{q},"a":#{a},"t":#{Aebench.now_ns},"h":#{Thread.current[:ae_h].to_i},"s":#{s}}\n))
    end
  end
end

module Aebench
  # configure_server! is called once Sidekiq's CLI is loaded (Sidekiq runs
  # configure_server blocks only in a server process).
  def self.configure_server!
    Sidekiq.configure_server do |config|
      # Sidekiq sizes its pool from the concurrency it knows when the pool is
      # made, before the CLI parses -c (its default, 10), and checks it then
      # and again at -c: at -c 16 the default pool (10 + 5) is refused. Its
      # own rule (concurrency + 5) over the larger of the two passes both.
      config.redis = redis_options.merge(size: [CFG.fetch("concurrency", 1).to_i, 10].max + 5)
      config.server_middleware { |chain| chain.add Events }
      config.on(:startup) do
        start_flusher
        emit({e: "ready"})
      end
    end
  end
end
Sidekiq.configure_client { |config| config.redis = Aebench.redis_options.merge(size: 10) }
