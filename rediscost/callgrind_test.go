package rediscost_test

import (
	"os"
	"strings"
	"testing"

	"github.com/aebench/aebench/rediscost"
)

// A dump of 2,000 LPUSHes sent by redis-cli to redis-server 7.0.15
// (Debian's build, symbols without line numbers), one window.
func TestParseCallgrind(t *testing.T) {
	f, err := os.Open("testdata/callgrind-lpush.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := rediscost.ParseCallgrind(f)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 18312324 {
		t.Errorf("total %d, want the dump's summary 18312324", p.Total)
	}
	if got := p.Commands["lpush"]; got != 3316597 {
		t.Errorf("lpush %d, want 3316597 (call -> lpushCommand)", got)
	}
	c := p.Split("info")
	if c.Work <= 0 || c.Work > p.Total || c.CommandWork <= c.Commands["lpush"] || c.CommandWork > c.Work {
		t.Errorf("split %+v", c)
	}
}

func TestParseCallgrindErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no totals", "events: Ir\nfn=(1) main\n0 5\n", "no summary or totals"},
		{"two events", "events: Ir Dr\n", "only Ir"},
		{"bad cost", "events: Ir\nfn=(1) call\ncfn=(2) getCommand\ncalls=1 0\n0 x\n", "cost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rediscost.ParseCallgrind(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}
