package output

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/summary"
)

// openMetrics serves the run plan's live numbers at http://ADDR/metrics in
// the OpenMetrics text format (aebench run --metrics-addr ADDR), for
// Prometheus and the Grafana dashboard in docs/grafana: counters of jobs
// enqueued, started, completed, retried and dead-lettered, gauges of the
// backlog and the jobs in flight, histograms of e2e and claim latency (and
// gauges of the last second's p50 and p99),
// the faults fired, and at each run's end its lost jobs. Every series is
// labelled by scenario, cell, backend (the label) and client. The server
// listens on a loopback address only, from Start to Close.
type openMetrics struct {
	base
	addr string
	srv  *http.Server
	ln   net.Listener
	reg  *prometheus.Registry

	scenario                                        string
	enqueued, started, completed, retried, dead     *prometheus.CounterVec
	faults, lost                                    *prometheus.CounterVec
	backlog, delayed, inFlight, e2e, claim, running *prometheus.GaugeVec
	hists                                           *latencyHists
}

// latencyHists exposes the runs' e2e and claim latencies as Prometheus
// histograms: each second's HdrHistogram, counted into
// hist.LatencyBuckets, is added to the run's cumulative buckets, and a
// scrape sees them as constant histograms.
type latencyHists struct {
	mu     sync.Mutex
	bounds []float64
	e2e    *prometheus.Desc
	claim  *prometheus.Desc
	series map[string]*latSeries // by desc name and label values
}

type latSeries struct {
	desc   *prometheus.Desc
	labels []string
	counts []uint64 // per bucket, not cumulative; the last: above every bound
	sum    float64
}

func (h *latencyHists) add(desc *prometheus.Desc, labels []string, counts []uint64, sum float64) {
	if counts == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := desc.String() + "\x00" + strings.Join(labels, "\x00")
	s := h.series[k]
	if s == nil {
		s = &latSeries{desc: desc, labels: labels, counts: make([]uint64, len(counts))}
		h.series[k] = s
	}
	for i, c := range counts {
		s.counts[i] += c
	}
	s.sum += sum
}

func (h *latencyHists) Describe(ch chan<- *prometheus.Desc) { ch <- h.e2e; ch <- h.claim }

func (h *latencyHists) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.series {
		buckets := make(map[float64]uint64, len(h.bounds))
		var cum uint64
		for i, b := range h.bounds {
			cum += s.counts[i]
			buckets[b] = cum
		}
		cum += s.counts[len(s.counts)-1]
		ch <- prometheus.MustNewConstHistogram(s.desc, cum, s.sum, buckets, s.labels...)
	}
}

var runLabels = []string{"scenario", "cell", "backend", "client"}

func newOpenMetrics(addr string) (Output, error) {
	if addr == "" {
		return nil, fmt.Errorf("needs an address: --metrics-addr 127.0.0.1:9464 (or --output openmetrics=127.0.0.1:9464)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q: want HOST:PORT on a loopback address (127.0.0.1:9464): %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%q: aebench serves metrics on a loopback address only (127.0.0.0/8, ::1 or localhost)", addr)
	}
	o := &openMetrics{addr: addr, reg: prometheus.NewRegistry()}
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "aebench", Name: name, Help: help}, runLabels)
		o.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, extra ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "aebench", Name: name, Help: help}, append(runLabels[:4:4], extra...))
		o.reg.MustRegister(g)
		return g
	}
	o.enqueued = counter("jobs_enqueued_total", "Jobs the producers enqueued (acknowledged by the store).")
	o.started = counter("jobs_started_total", "Handler starts, retries and re-runs included.")
	o.completed = counter("jobs_completed_total", "Jobs completed.")
	o.retried = counter("jobs_retried_total", "Failed attempts scheduled for a retry.")
	o.dead = counter("jobs_dead_total", "Jobs dead-lettered.")
	o.faults = counter("faults_injected_total", "Fault events fired.")
	o.lost = counter("jobs_lost_total", "Acknowledged jobs never completed nor dead-lettered, counted by the ledger at each run's end.")
	o.backlog = gauge("backlog_jobs", "Acknowledged jobs due and waiting for a worker.")
	o.delayed = gauge("delayed_jobs", "Acknowledged jobs waiting for a RunAt in the future.")
	o.inFlight = gauge("in_flight_jobs", "Jobs claimed and not yet finished.")
	o.e2e = gauge("e2e_latency_seconds", "End-to-end latency (intended enqueue to completion) of the last second's jobs.", "quantile")
	o.claim = gauge("claim_latency_seconds", "Claim call latency over the last second.", "quantile")
	o.running = gauge("run_active", "1 while the run with these labels is measuring, 0 after.")
	o.hists = &latencyHists{bounds: hist.LatencyBuckets(), series: map[string]*latSeries{},
		e2e:   prometheus.NewDesc("aebench_e2e_seconds", "End-to-end latency (intended enqueue to completion), every job of the run so far.", runLabels, nil),
		claim: prometheus.NewDesc("aebench_claim_seconds", "Claim call latency, every call of the run so far.", runLabels, nil)}
	o.reg.MustRegister(o.hists)
	return o, nil
}

func (o *openMetrics) Start(p Plan) error {
	o.dir = p.Dir
	if p.Scenario != nil {
		o.scenario = p.Scenario.Name
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr %s: %w", o.addr, err)
	}
	o.ln = ln
	mux := http.NewServeMux()
	h := promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
	mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// OpenMetrics unless the scraper asks for another format: curl
		// and a browser send */*.
		if a := r.Header.Get("Accept"); a == "" || a == "*/*" {
			r.Header.Set("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		}
		h.ServeHTTP(w, r)
	}))
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = o.srv.Serve(ln) }()
	return nil
}

// UsesHistograms: the endpoint serves e2e and claim histograms.
func (o *openMetrics) UsesHistograms() bool { return true }

// Addr is where the endpoint listens (the port chosen for ":0").
func (o *openMetrics) Addr() string {
	if o.ln == nil {
		return o.addr
	}
	return o.ln.Addr().String()
}

func (o *openMetrics) labels(r Run) prometheus.Labels {
	b := r.Label
	if r.Calibration {
		b += " (calibration)"
	}
	return prometheus.Labels{"scenario": o.scenario, "cell": strconv.Itoa(r.Cell), "backend": b, "client": r.Client}
}

func (o *openMetrics) Sample(r Run, p engine.SeriesPoint) {
	l := o.labels(r)
	o.enqueued.With(l).Add(float64(max(p.Enqueued, 0)))
	o.started.With(l).Add(float64(max(p.Started, 0)))
	o.completed.With(l).Add(float64(max(p.Completed, 0)))
	o.retried.With(l).Add(float64(max(p.Retried, 0)))
	o.dead.With(l).Add(float64(max(p.Dead, 0)))
	o.faults.With(l).Add(float64(max(p.Faults, 0)))
	o.backlog.With(l).Set(float64(p.BacklogDue))
	o.delayed.With(l).Set(float64(p.BacklogDelayed))
	o.inFlight.With(l).Set(float64(p.InFlight))
	o.running.With(l).Set(1)
	quantile := func(g *prometheus.GaugeVec, q string, ms float64) {
		ql := prometheus.Labels{"quantile": q}
		for k, v := range l {
			ql[k] = v
		}
		g.With(ql).Set(ms / 1e3)
	}
	if p.E2ESamples > 0 {
		quantile(o.e2e, "0.5", p.E2EP50Ms)
		quantile(o.e2e, "0.99", p.E2EP99Ms)
	}
	if p.ClaimP99Ms > 0 {
		quantile(o.claim, "0.5", p.ClaimP50Ms)
		quantile(o.claim, "0.99", p.ClaimP99Ms)
	}
	values := []string{l["scenario"], l["cell"], l["backend"], l["client"]}
	o.hists.add(o.hists.e2e, values, p.E2EHist, p.E2ESumS)
	o.hists.add(o.hists.claim, values, p.ClaimHist, p.ClaimSumS)
}

func (o *openMetrics) RunDone(rs *summary.RunSummary, _ *engine.Result) error {
	l := o.labels(RunOf(rs))
	o.lost.With(l).Add(float64(rs.Ledger.Lost))
	o.running.With(l).Set(0)
	return nil
}

func (o *openMetrics) Close() error {
	if o.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := o.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics endpoint: %w", err)
	}
	return nil
}
