package runner

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/redisserver"
)

// TestMetricsEndpoint scrapes --metrics-addr's endpoint while a run runs:
// OpenMetrics text whose completed counter is non-zero and rises, then
// checks the scraped values against the run's final summary.
func TestMetricsEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s, err := scenario.ParseScenario("metrics.yaml", []byte(`
name: metrics-test
duration: 3s
warmup: 500ms
drain: 10s
calibration: off
backends: [zset]
producers: {rate: 500}
workers: {count: 2, concurrency: 4, handler: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out *Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), GitDir: "..", NoPlots: true, Outputs: []string{"openmetrics=" + addr}})
		done <- result{out, err}
	}()
	var scraped []float64
	var enqueued, hist float64
	deadline := time.Now().Add(60 * time.Second)
	for len(scraped) < 2 || scraped[len(scraped)-1] <= scraped[0] {
		select {
		case r := <-done:
			if errors.Is(r.err, redisserver.ErrNoRedis) {
				t.Skipf("no Redis: %v", r.err)
			}
			t.Fatalf("the run ended (%v) before two rising scrapes: %v", r.err, scraped)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rising completed counter within 60s: %v", scraped)
		}
		body, ctype, err := scrape(addr)
		if err != nil {
			continue // not listening yet
		}
		if !strings.HasPrefix(ctype, "application/openmetrics-text") || !strings.HasSuffix(strings.TrimSpace(body), "# EOF") {
			t.Fatalf("not OpenMetrics text (%s): %.300s", ctype, body)
		}
		if v, ok := series(body, "aebench_jobs_completed_total", `backend="zset"`); ok && v > 0 {
			scraped = append(scraped, v)
			enqueued, _ = series(body, "aebench_jobs_enqueued_total", `backend="zset"`)
			hist, _ = series(body, "aebench_e2e_seconds_count", `backend="zset"`)
		}
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	l := r.out.Summary.Runs[0].Ledger
	if last := scraped[len(scraped)-1]; last > float64(l.Completed) || enqueued > float64(l.Acknowledged) || hist > last {
		t.Errorf("scraped completed %v, enqueued %v, e2e histogram count %v; the summary says completed %d, acknowledged %d", last, enqueued, hist, l.Completed, l.Acknowledged)
	}
	if _, _, err := scrape(addr); err == nil {
		t.Error("the endpoint still answers after the run")
	}
}

func scrape(addr string) (body, ctype string, err error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String(), resp.Header.Get("Content-Type"), sc.Err()
}

// series finds the value of metric's series whose labels contain label.
func series(body, metric, label string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, metric+"{") && strings.Contains(line, label) {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			return v, err == nil
		}
	}
	return 0, false
}
