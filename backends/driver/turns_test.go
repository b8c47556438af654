package driver

import (
	"testing"
	"time"
)

func TestPairRounds(t *testing.T) {
	ms := int64(time.Millisecond)
	// side builds a side of n turns of 100 ms, each after a 100 ms turn of
	// the other (offset 0 or 100 ms), with perTurn completions evenly
	// spread in each.
	side := func(offset int64, n, perTurn int) sideRun {
		var s sideRun
		for i := range n {
			start := int64(i)*200*ms + offset
			s.turns = append(s.turns, turn{start, start + 100*ms})
			for k := range perTurn {
				s.times = append(s.times, start+int64(k)*100*ms/int64(perTurn)+ms)
			}
		}
		return s
	}
	for _, tc := range []struct {
		name       string
		loop, drv  sideRun
		skip       int
		rounds     int
		ratio      float64
		loopPerSec float64
	}{
		// The first pair starts before the first completion (the warm-up of
		// skip 1), so 15 pairs count: three rounds of four.
		{"equal", side(0, 16, 100), side(100*ms, 16, 100), 1, 3, 1, 1000},
		{"driver at 0.9x", side(0, 16, 100), side(100*ms, 16, 90), 1, 3, 0.9, 1000},
		// The warm-up: 450 completions are the first 4.5 turns of the
		// loop, so its turns 0-4 do not count (pairs 5-15: two rounds).
		{"warm-up", side(0, 16, 100), side(100*ms, 16, 100), 450, 2, 1, 1000},
		// The driver ran out after 8 turns; its later turns (empty) do not
		// count: pairs 1-7, one round.
		{"a side ends", side(0, 16, 100), func() sideRun {
			s := side(100*ms, 16, 100)
			s.times = s.times[:800]
			return s
		}(), 1, 1, 1, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loops, drivers, ratios := pairRounds(tc.loop, tc.drv, tc.skip)
			if len(ratios) != tc.rounds || len(loops) != tc.rounds || len(drivers) != tc.rounds {
				t.Fatalf("rounds: %d ratios, %d loops, %d drivers; want %d", len(ratios), len(loops), len(drivers), tc.rounds)
			}
			for i, r := range ratios {
				if r < tc.ratio-0.001 || r > tc.ratio+0.001 {
					t.Errorf("round %d ratio %.4f, want %.2f", i, r, tc.ratio)
				}
				if l := loops[i]; l < tc.loopPerSec*0.99 || l > tc.loopPerSec*1.01 {
					t.Errorf("round %d loop %.0f jobs/s, want %.0f", i, l, tc.loopPerSec)
				}
			}
		})
	}
}
