package engine

import (
	"time"

	"github.com/aebench/aebench/harness/health"
	"github.com/aebench/aebench/harness/hist"
)

// StatusLine is what the engine reports once a second.
type StatusLine struct {
	RunID      string
	Elapsed    time.Duration
	Phase      string // warmup, measure, drain
	EnqPerSec  float64
	DonePerSec float64
	Backlog    int64 // due: acknowledged, due, not running
	Delayed    int64 // acknowledged, waiting for a RunAt in the future
	InFlight   int64
	E2EP99     time.Duration // measured so far; 0 before any
	// RunQueueWaitMsPerS is how long the harness's threads waited for a
	// CPU in the last second, per second (health.RunQueueWait; 0 where
	// unknown).
	RunQueueWaitMsPerS float64
}

// SeriesPoint is one second of a run's time series.
type SeriesPoint struct {
	Second   int    `json:"second"`
	Phase    string `json:"phase"`
	Enqueued int64  `json:"enqueued"`
	// Sent is the jobs whose Enqueue call started in the second (Second-1
	// to Second from the run's start): the producers' delivered arrivals,
	// on the plan's clock rather than the collector's tick.
	Sent      int64 `json:"sent"`
	Started   int64 `json:"started"`
	Completed int64 `json:"completed"`
	Retried   int64 `json:"retried"`
	Dead      int64 `json:"dead"`
	// Backlog is acknowledged, not finished and not running; BacklogDelayed
	// the part of it waiting for a RunAt in the future, BacklogDue the rest.
	Backlog        int64 `json:"backlog"`
	BacklogDue     int64 `json:"backlog_due"`
	BacklogDelayed int64 `json:"backlog_delayed"`
	InFlight       int64 `json:"in_flight"`
	// E2ESamples is how many e2e latencies the second recorded; with none
	// E2EP50Ms and E2EP99Ms mean nothing (timeseries.csv leaves them empty).
	E2ESamples int64   `json:"e2e_samples"`
	E2EP50Ms   float64 `json:"e2e_p50_ms"`
	E2EP99Ms   float64 `json:"e2e_p99_ms"`
	// ClaimP50Ms and ClaimP99Ms are the second's claim latencies (0
	// without a claim); Faults the fault events fired in it.
	ClaimP50Ms float64 `json:"claim_p50_ms"`
	ClaimP99Ms float64 `json:"claim_p99_ms"`
	Faults     int64   `json:"faults"`
	// RunQueueWaitMsPerS: the harness's threads' wait for a CPU in the
	// second, per second (the machine's health over time).
	RunQueueWaitMsPerS float64 `json:"run_queue_wait_ms_per_s"`
	// HarnessCPUPercent is this process's CPU in the second, as a share of
	// one core.
	HarnessCPUPercent float64 `json:"harness_cpu_percent"`
	// ScheduleLagP99Ms is how late the second's Enqueue calls started
	// against their plan, p99 (0 without a call).
	ScheduleLagP99Ms float64 `json:"schedule_lag_p99_ms"`
	// RedisCPUPercent is Redis's CPU (all nodes) in the second, as a share
	// of one core, in the measured window (0 outside it, or under
	// callgrind).
	RedisCPUPercent float64 `json:"redis_cpu_percent"`
	// RedisCommands is how many commands Redis (all nodes) processed in
	// the second, in the measured window (0 where RedisCPUPercent is).
	RedisCommands int64 `json:"redis_commands"`
	// RedisUsedBytes and RedisRSSBytes are Redis's used_memory and
	// used_memory_rss (all nodes) at the second's end (0 where the cost
	// meter samples none): memory over time and its fragmentation.
	RedisUsedBytes int64 `json:"redis_used_bytes"`
	RedisRSSBytes  int64 `json:"redis_rss_bytes"`
	// RedisEvicted is the keys Redis evicted at maxmemory in the second
	// (INFO evicted_keys, all nodes; 0 where RedisCPUPercent is).
	RedisEvicted int64 `json:"redis_evicted"`
	// QueueWaitP99Ms is the second's queue-wait p99 (0 without a start).
	QueueWaitP99Ms float64 `json:"queue_wait_p99_ms"`
	// E2EHist and ClaimHist are the second's latencies as counts per
	// bucket of LatencyBuckets (live histograms; not in timeseries.csv or
	// JSON), nil when none was recorded or Hooks.SampleHists is off.
	E2EHist   []uint64 `json:"-"`
	ClaimHist []uint64 `json:"-"`
	// E2ESumS and ClaimSumS are the second's latencies summed, in seconds.
	E2ESumS   float64 `json:"-"`
	ClaimSumS float64 `json:"-"`
}

// collector is the once-a-second loop that merges the recorders.
type collector struct {
	done, quit chan struct{}
}

func (e *engine) startCollector() *collector {
	c := &collector{done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(c.done)
		e.collectLoop(c.quit)
	}()
	return c
}

// stop takes the final sample and waits for the loop to end.
func (c *collector) stop() {
	close(c.quit)
	<-c.done
}

// collectLoop merges the recorders once a second: interval histograms go to
// the .hlog and the status line, and into the run's totals.
func (e *engine) collectLoop(stop <-chan struct{}) {
	for k := 1; ; k++ {
		timer := time.NewTimer(time.Until(e.t0.Add(time.Duration(k) * time.Second)))
		select {
		case <-stop:
			timer.Stop()
			e.collect(k, true)
			return
		case <-timer.C:
			e.collect(k, false)
		}
	}
}

// writeHLog appends the second's interval histograms to the .hlog.
func (e *engine) writeHLog(now time.Time) {
	if e.hooks.HLog == nil || e.hlogErr != nil {
		return
	}
	for t, h := range e.interval {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		h.SetTag(e.hooks.Label + "." + hist.Tag(t).String())
		h.SetStartTimeMs(e.lastTick.UnixMilli())
		h.SetEndTimeMs(now.UnixMilli())
		if err := e.hooks.HLog.OutputIntervalHistogram(h); err != nil {
			e.hlogErr = err
			return
		}
	}
}

// phaseAt is the run's phase at now: warmup, measure or drain.
func (e *engine) phaseAt(now time.Time) string {
	if len(e.cfg.Phases) > 0 && !now.After(time.Unix(0, e.windowEnd.Load()).Add(time.Millisecond)) && !now.Before(e.warmEnd.Add(time.Millisecond)) {
		// The profile's phase the second ends in.
		if name := e.cfg.PhaseAt(now.Sub(e.t0) - time.Millisecond); name != "" {
			return name
		}
	}
	switch {
	case now.Before(e.warmEnd.Add(time.Millisecond)):
		return "warmup"
	case now.After(time.Unix(0, e.windowEnd.Load()).Add(time.Millisecond)):
		return "drain"
	}
	return "measure"
}

func (e *engine) collect(k int, final bool) {
	began := time.Now()
	now := began
	e.recMu.Lock()
	recs := append([]*hist.Recorder(nil), e.recorders...)
	e.recMu.Unlock()
	for _, r := range recs {
		r.DrainInto(&e.interval)
	}
	e.writeHLog(now)
	iv := e.intervalFigures()
	fired := e.c.faultsFired.Load()
	phase := e.phaseAt(now)
	e.addPhase(phase)
	e.addWindow(now, phase)
	e.interval.MergeInto(&e.total)

	cur := e.c.snapshot()
	secs := now.Sub(e.lastTick).Seconds()
	backlog := e.backlog()
	delayed := min(e.led.Delayed(now), backlog)
	e.recMu.Lock()
	e.peakBacklog = max(e.peakBacklog, backlog)
	e.recMu.Unlock()
	rqMs, cpuPct := e.machineSecond(secs)
	used, rss := e.redisMemory()
	pt := SeriesPoint{RedisUsedBytes: used, RedisRSSBytes: rss, RedisEvicted: e.redisEvicted(), RunQueueWaitMsPerS: rqMs, HarnessCPUPercent: cpuPct, RedisCPUPercent: e.redisSecond(secs), RedisCommands: e.redisCommands(), ScheduleLagP99Ms: iv.lag99, QueueWaitP99Ms: iv.qw99, Second: k, Phase: phase,
		Enqueued: cur.EnqueuedJobs - e.lastCounts.EnqueuedJobs, Sent: e.sentIn(k),
		Started:   cur.Started - e.lastCounts.Started,
		Completed: cur.Completed - e.lastCounts.Completed,
		Retried:   cur.Retried - e.lastCounts.Retried,
		Dead:      cur.DeadLettered + cur.RecoveredDead - e.lastCounts.DeadLettered - e.lastCounts.RecoveredDead,
		Backlog:   backlog, BacklogDue: backlog - delayed, BacklogDelayed: delayed, InFlight: e.c.inFlight.Load(), E2ESamples: iv.samples, E2EP50Ms: iv.p50, E2EP99Ms: iv.p99,
		ClaimP50Ms: iv.c50, ClaimP99Ms: iv.c99, Faults: fired - e.lastFaults, E2EHist: iv.e2eHist, ClaimHist: iv.claimHist,
		E2ESumS: iv.e2eSum, ClaimSumS: iv.claimSum}
	e.lastFaults = fired
	if !final || secs > 0.05 {
		e.series = append(e.series, pt)
		if e.hooks.Sample != nil {
			e.hooks.Sample(pt)
		}
	}
	if e.hooks.Status != nil && !final && secs > 0 {
		sl := StatusLine{RunID: e.hooks.Label, Elapsed: now.Sub(e.t0), Phase: phase,
			EnqPerSec: float64(pt.Enqueued) / secs, DonePerSec: float64(pt.Completed) / secs,
			Backlog: pt.BacklogDue, Delayed: delayed, InFlight: pt.InFlight, RunQueueWaitMsPerS: rqMs}
		if h := e.total[hist.TagE2E]; h != nil && h.TotalCount() > 0 {
			sl.E2EP99 = time.Duration(h.ValueAtQuantile(99))
		}
		e.hooks.Status(sl)
	}
	e.lastCounts = cur
	e.lastTick = now
	cost := time.Since(began)
	e.tickCost += cost
	e.tickMax = max(e.tickMax, cost)
	e.ticks++
}

// sentIn is the jobs sent in second k of the run (1: its first).
func (e *engine) sentIn(k int) int64 {
	if k < 1 || k > len(e.sent) {
		return 0
	}
	return e.sent[k-1].Load()
}

// addPhase keeps the second's latencies under its profile phase (none
// outside a profile's phases).
func (e *engine) addPhase(phase string) {
	if len(e.cfg.Phases) == 0 || phase == "warmup" || phase == "drain" || phase == "measure" {
		return
	}
	if e.byPhase == nil {
		e.byPhase = map[string]*hist.Set{}
	}
	set := e.byPhase[phase]
	if set == nil {
		set = &hist.Set{}
		e.byPhase[phase] = set
	}
	e.interval.AddTo(set, hist.TagE2E, hist.TagQueueWait, hist.TagLateness, hist.TagScheduleLag)
}

// addWindow keeps the second's latencies under its drift window
// (drift.windows; measured seconds only).
func (e *engine) addWindow(now time.Time, phase string) {
	w := e.cfg.DriftWindow()
	if w <= 0 || phase == "warmup" || phase == "drain" || now.Before(e.warmEnd) {
		return
	}
	k := min(int(now.Sub(e.warmEnd)/w), e.cfg.Drift.Windows-1)
	for len(e.byWindow) <= k {
		e.byWindow = append(e.byWindow, &hist.Set{})
	}
	e.interval.AddTo(e.byWindow[k], hist.TagE2E, hist.TagQueueWait)
}

// redisMemory is Redis's used and resident memory at the cost meter's
// last sample (0 where it has none).
func (e *engine) redisMemory() (used, rss int64) {
	rc, ok := e.hooks.Cost.(interface{ RedisMemory() (int64, int64, bool) })
	if !ok {
		return 0, 0
	}
	used, rss, ok = rc.RedisMemory()
	if !ok {
		return 0, 0
	}
	return used, rss
}

// machineSecond is the harness's run-queue wait (ms per second) and CPU
// (percent of one core) since the last tick.
func (e *engine) machineSecond(secs float64) (rqMs, cpuPct float64) {
	if rq, ok := health.RunQueueWait(); ok {
		if e.lastRQ > 0 && secs > 0 {
			rqMs = float64(rq-e.lastRQ) / 1e6 / secs
		}
		e.lastRQ = rq
	}
	if cpu, ok := health.CPU(); ok {
		if e.lastCPU > 0 && secs > 0 {
			cpuPct = float64(cpu-e.lastCPU) / 1e9 / secs * 100
		}
		e.lastCPU = cpu
	}
	return rqMs, cpuPct
}

// redisSecond is Redis's CPU (percent of one core) since the last tick,
// from the cost meter's sampler (0 where it has none).
func (e *engine) redisSecond(secs float64) float64 {
	rc, ok := e.hooks.Cost.(interface{ RedisCPU() (time.Duration, bool) })
	if !ok {
		return 0
	}
	cpu, ok := rc.RedisCPU()
	if !ok {
		e.lastRedisCPU = 0
		return 0
	}
	var pct float64
	if e.lastRedisCPU > 0 && secs > 0 {
		pct = float64(cpu-e.lastRedisCPU) / 1e9 / secs * 100
	}
	e.lastRedisCPU = cpu
	return max(pct, 0)
}

// redisCommands is the commands Redis processed since the last tick, from
// the cost meter's sampler (0 where it has none).
func (e *engine) redisCommands() int64 {
	rc, ok := e.hooks.Cost.(interface{ RedisCommands() (int64, bool) })
	if !ok {
		return 0
	}
	n, ok := rc.RedisCommands()
	if !ok {
		e.lastRedisCmds = 0
		return 0
	}
	var d int64
	if e.lastRedisCmds > 0 {
		d = n - e.lastRedisCmds
	}
	e.lastRedisCmds = n
	return max(d, 0)
}

// redisEvicted is the keys Redis evicted since the last tick, from the
// cost meter's sampler (0 where it has none).
func (e *engine) redisEvicted() int64 {
	rc, ok := e.hooks.Cost.(interface{ RedisEvicted() (int64, bool) })
	if !ok {
		return 0
	}
	n, ok := rc.RedisEvicted()
	if !ok {
		return 0
	}
	var d int64
	if e.evictedSeen { // the first reading is the baseline
		d = n - e.lastEvicted
	}
	e.lastEvicted, e.evictedSeen = n, true
	return max(d, 0) // a restarted server counts from zero again
}

// intervalStats are the second's figures from its interval histograms.
type intervalStats struct {
	p50, p99, c50, c99, qw99, lag99 float64
	samples                         int64
	e2eHist, claimHist              []uint64
	e2eSum, claimSum                float64
}

// intervalFigures reads the second's percentiles (and, when an output
// uses them, its live buckets) before the interval is merged and reset.
func (e *engine) intervalFigures() intervalStats {
	var iv intervalStats
	if h := e.interval[hist.TagE2E]; h != nil && h.TotalCount() > 0 {
		iv.samples = h.TotalCount()
		iv.p50 = float64(h.ValueAtQuantile(50)) / 1e6
		iv.p99 = float64(h.ValueAtQuantile(99)) / 1e6
	}
	if e.hooks.SampleHists {
		// Walking a histogram's buckets each second costs the collector
		// time: only when an output (the live endpoint) uses them.
		iv.e2eHist, iv.claimHist = hist.BucketCounts(e.interval[hist.TagE2E]), hist.BucketCounts(e.interval[hist.TagClaim])
		iv.e2eSum, iv.claimSum = hist.SumSeconds(e.interval[hist.TagE2E]), hist.SumSeconds(e.interval[hist.TagClaim])
	}
	p99 := func(t hist.Tag) float64 {
		if h := e.interval[t]; h != nil && h.TotalCount() > 0 {
			return float64(h.ValueAtQuantile(99)) / 1e6
		}
		return 0
	}
	if h := e.interval[hist.TagClaim]; h != nil && h.TotalCount() > 0 {
		iv.c50 = float64(h.ValueAtQuantile(50)) / 1e6
	}
	iv.c99, iv.qw99, iv.lag99 = p99(hist.TagClaim), p99(hist.TagQueueWait), p99(hist.TagScheduleLag)
	return iv
}
