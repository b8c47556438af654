package trace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Synth describes a synthetic trace: Poisson arrivals whose rate follows a
// diurnal curve (a sine of Period, Rate at its mean, Rate x (1 ± Swing) at
// its ends) with Bursts of BurstX times the rate lasting BurstLen at
// seeded times, a Delayed share of delayed jobs (uniform up to MaxDelay),
// payloads spread around Payload, and three kinds.
type Synth struct {
	Duration time.Duration
	Rate     float64 // mean jobs/s
	Period   time.Duration
	Swing    float64
	Bursts   int
	BurstX   float64
	BurstLen time.Duration
	Delayed  float64
	MaxDelay time.Duration
	Payload  int
	Seed     uint64
}

// DefaultSynth is a minute of about 300 jobs/s swinging ±50% over the
// minute, with two 5x bursts of 3 s, 10% delayed up to 2 s.
func DefaultSynth() Synth {
	return Synth{Duration: time.Minute, Rate: 300, Period: time.Minute, Swing: 0.5, Bursts: 2, BurstX: 5,
		BurstLen: 3 * time.Second, Delayed: 0.1, MaxDelay: 2 * time.Second, Payload: 256, Seed: 1}
}

// Check says what is wrong with s, naming the flag.
func (s Synth) Check() error {
	switch {
	case s.Duration <= 0 || s.Duration > 24*time.Hour:
		return fmt.Errorf("--duration %s: allowed: > 0, at most 24h", s.Duration)
	case s.Rate <= 0 || s.Rate > 1e6:
		return fmt.Errorf("--rate %g: allowed: jobs/s > 0, at most 1e6", s.Rate)
	case s.Swing < 0 || s.Swing >= 1:
		return fmt.Errorf("--swing %g: allowed: 0 <= swing < 1", s.Swing)
	case s.Period <= 0:
		return fmt.Errorf("--period %s: allowed: > 0", s.Period)
	case s.Bursts < 0 || s.Bursts > 1000:
		return fmt.Errorf("--bursts %d: allowed: 0..1000", s.Bursts)
	case s.Bursts > 0 && (s.BurstX < 1 || s.BurstLen <= 0):
		return fmt.Errorf("--burst-x %g and --burst-len %s: allowed: burst-x >= 1, burst-len > 0", s.BurstX, s.BurstLen)
	case s.Delayed < 0 || s.Delayed > 1:
		return fmt.Errorf("--delayed %g: allowed: a share 0..1", s.Delayed)
	case s.Payload < 0 || s.Payload > MaxPayload:
		return fmt.Errorf("--payload %d: allowed: 0..%d", s.Payload, MaxPayload)
	}
	return nil
}

// rate is the synthetic rate at t.
func (s Synth) rate(t time.Duration, bursts []time.Duration) float64 {
	r := s.Rate * (1 + s.Swing*math.Sin(2*math.Pi*t.Seconds()/s.Period.Seconds()))
	for _, b := range bursts {
		if t >= b && t < b+s.BurstLen {
			return r * s.BurstX
		}
	}
	return r
}

// Write writes s's trace as CSV to w and returns how many arrivals it
// wrote. The same Synth writes the same bytes.
func (s Synth) Write(w io.Writer) (int, error) {
	if err := s.Check(); err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x7ace))
	var bursts []time.Duration
	for range s.Bursts {
		bursts = append(bursts, time.Duration(rng.Float64()*float64(max(s.Duration-s.BurstLen, 0))))
	}
	top := s.Rate * (1 + s.Swing) * max(s.BurstX, 1)
	kinds := []string{"email", "webhook", "report"}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "offset_s,delay_s,payload_bytes,kind,id")
	n := 0
	for t := 0.0; ; {
		// Lewis-Shedler thinning from the highest rate.
		t += rng.ExpFloat64() / top
		at := time.Duration(t * float64(time.Second))
		if at >= s.Duration {
			break
		}
		if rng.Float64()*top > s.rate(at, bursts) {
			continue
		}
		delay := ""
		if rng.Float64() < s.Delayed {
			delay = strconv.FormatFloat(rng.Float64()*s.MaxDelay.Seconds(), 'f', 3, 64)
		}
		// Payloads from a half to twice the mean, skewed small.
		payload := int(float64(s.Payload) * (0.5 + 1.5*rng.Float64()*rng.Float64()))
		kind := kinds[min(int(rng.ExpFloat64()), len(kinds)-1)]
		n++
		fmt.Fprintf(bw, "%.4f,%s,%d,%s,j%d\n", t, delay, payload, kind, n)
	}
	return n, bw.Flush()
}
