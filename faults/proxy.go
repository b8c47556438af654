package faults

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is an in-process TCP proxy (toxiproxy v2.12) between the workers and
// Redis, listening on a free loopback port. Network faults are toxics added
// to it and removed when the fault ends; with no toxic it passes bytes
// through untouched.
type Proxy struct {
	p *toxiproxy.Proxy
}

// toxicName is the one toxic a fault adds; faults of the proxy do not overlap.
const toxicName = "aebench_fault"

// NewProxy starts a proxy to upstream, which must be a loopback address:
// aebench injects faults only on this machine.
func NewProxy(upstream string) (*Proxy, error) {
	host, _, err := net.SplitHostPort(upstream)
	if err != nil {
		return nil, fmt.Errorf("faults: proxy upstream %q: %w", upstream, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("faults: proxy upstream %q is not a loopback address; network faults are only injected on this machine", upstream)
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "redis", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("faults: start proxy: %w", err)
	}
	return &Proxy{p: p}, nil
}

// Addr is where clients connect instead of Redis.
func (p *Proxy) Addr() string { return p.p.Listen }

// Apply adds the toxic of a network fault, on both directions' downstream
// side (replies from Redis), which is where a client waits.
func (p *Proxy) Apply(f Fault) error {
	var body string
	switch f.Kind {
	case NetLatency:
		body = fmt.Sprintf(`{"name":%q,"type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d,"jitter":%d}}`,
			toxicName, f.Latency.Milliseconds(), f.Jitter.Milliseconds())
	case NetReset:
		body = fmt.Sprintf(`{"name":%q,"type":"reset_peer","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`, toxicName)
	case NetTimeout:
		body = fmt.Sprintf(`{"name":%q,"type":"timeout","stream":"downstream","toxicity":1,"attributes":{"timeout":%d}}`,
			toxicName, f.Duration.Milliseconds())
	default:
		return fmt.Errorf("faults: %s is not a network fault", f.Kind)
	}
	if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		return fmt.Errorf("faults: add %s toxic: %w", f.Kind, err)
	}
	return nil
}

// SetRTT delays every connection through the proxy by rtt a round trip:
// half of it (whole milliseconds, rounded down) on the way to Redis, the
// rest on the way back. It stays for the proxy's life, beside any fault.
func (p *Proxy) SetRTT(rtt time.Duration) error {
	up := rtt.Milliseconds() / 2
	for _, t := range []struct {
		name, stream string
		ms           int64
	}{{"aebench_rtt_up", "upstream", up}, {"aebench_rtt_down", "downstream", rtt.Milliseconds() - up}} {
		if t.ms == 0 {
			continue
		}
		body := fmt.Sprintf(`{"name":%q,"type":"latency","stream":%q,"toxicity":1,"attributes":{"latency":%d,"jitter":0}}`, t.name, t.stream, t.ms)
		if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("faults: add the rtt toxic: %w", err)
		}
	}
	return nil
}

// Clear removes the fault's toxic; clearing with none is not an error.
func (p *Proxy) Clear() error {
	if p.p.Toxics.GetToxic(toxicName) == nil {
		return nil
	}
	if err := p.p.Toxics.RemoveToxic(context.Background(), toxicName); err != nil {
		return fmt.Errorf("faults: remove toxic: %w", err)
	}
	return nil
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() { p.p.Stop() }
