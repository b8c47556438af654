package base_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/rclient"
)

// BenchmarkStreamTombstones measures what a stream claim's reads cost
// Redis against the deleted entries the stream still walks: N entries read
// by the group, 99 of every 100 then deleted (XDEL leaves them in their
// listpack node until the node empties), then one XADD, one XREADGROUP >
// and one XREVRANGE of the tail per op, as a claim and stream_tail read.
// It reports Redis's own µs per call (INFO commandstats), not the round
// trip. docs/results.md has the curve. The corrected strategies never
// XDEL an entry (they trim whole nodes the group has read, XTRIM MINID ~),
// so they hold at most one node of read entries (the key census's
// awaiting-trim count); the seed variants that XDEL are what builds
// tombstones.
func BenchmarkStreamTombstones(b *testing.B) {
	c := basetest.Client(b)
	ctx := context.Background()
	for _, n := range []int{0, 10_000, 100_000, 400_000} {
		b.Run(fmt.Sprintf("deleted=%d", n-n/100), func(b *testing.B) {
			s := fmt.Sprintf("tomb-%d", n)
			must := func(cmd rclient.Command) any {
				v, err := c.Do(ctx, cmd)
				if err != nil {
					b.Fatalf("%v: %v", cmd.Head, err)
				}
				return v
			}
			must(rclient.Command{Head: []string{"XGROUP", "CREATE"}, Keys: []string{s}, Args: []string{"g", "0", "MKSTREAM"}})
			var ids []string
			for i := 0; i < n; i += 1000 {
				var cmds []rclient.Command
				for j := i; j < min(i+1000, n); j++ {
					cmds = append(cmds, rclient.Cmd("XADD", s, "*", "id", fmt.Sprint("x", j)))
				}
				for _, r := range c.DoMulti(ctx, cmds...) {
					ids = append(ids, fmt.Sprint(r.Val))
				}
			}
			if n > 0 {
				must(rclient.Command{Head: []string{"XREADGROUP", "GROUP", "g", "c", "COUNT", fmt.Sprint(n), "NOACK", "STREAMS"}, Keys: []string{s}, Args: []string{">"}})
				var dels []string
				for k, id := range ids {
					if k%100 != 0 {
						dels = append(dels, id)
					}
				}
				for i := 0; i < len(dels); i += 1000 {
					must(rclient.Cmd("XDEL", s, dels[i:min(i+1000, len(dels))]...))
				}
			}
			must(rclient.Command{Head: []string{"CONFIG", "RESETSTAT"}})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				must(rclient.Cmd("XADD", s, "*", "id", fmt.Sprint("j", i)))
				must(rclient.Command{Head: []string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "NOACK", "STREAMS"}, Keys: []string{s}, Args: []string{">"}})
				must(rclient.Cmd("XREVRANGE", s, "+", "-", "COUNT", "1"))
			}
			b.StopTimer()
			info := fmt.Sprint(must(rclient.Command{Head: []string{"INFO", "commandstats"}}))
			for _, cmd := range []string{"xreadgroup", "xrevrange"} {
				b.ReportMetric(usecPerCall(info, cmd), cmd+"-µs/call")
			}
			must(rclient.Command{Head: []string{"DEL"}, Keys: []string{s}})
		})
	}
}

// usecPerCall reads a command's usec_per_call from INFO commandstats.
func usecPerCall(info, cmd string) float64 {
	_, line, ok := strings.Cut(info, "cmdstat_"+cmd+":")
	if !ok {
		return 0
	}
	_, v, _ := strings.Cut(line, "usec_per_call=")
	v, _, _ = strings.Cut(v, ",")
	var f float64
	fmt.Sscan(v, &f)
	return f
}
