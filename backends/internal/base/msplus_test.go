package base

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver/redistest"
)

// TestMsPlus holds lib.lua's ms_plus (a time plus a lease or retention,
// as text, with the thousands formatted once a second) to Go's sum, over
// carries, the cache's reuse and the short times it leaves to tonumber.
func TestMsPlus(t *testing.T) {
	c, _ := redistest.Client(t)
	var src string
	for _, part := range []string{"lua/rec_hash.lua", "lua/lib.lua", "lua/lib_stream.lua"} {
		b, err := libFS.ReadFile(part)
		if err != nil {
			t.Fatal(err)
		}
		src += string(b) + "\n"
	}
	src += "local out = {}\nfor i = 1, #ARGV, 2 do out[#out + 1] = ms_plus(ARGV[i], ARGV[i + 1]) end\nreturn out\n"
	r := rand.New(rand.NewPCG(50, 1))
	var args []string
	var want []string
	add := func(t0, d int64) {
		args = append(args, strconv.FormatInt(t0, 10), strconv.FormatInt(d, 10))
		want = append(want, strconv.FormatInt(t0+d, 10))
	}
	for _, d := range []int64{0, 1, 999, 1000, 1001, 2000, 1999, 600000, 123456789} {
		for _, t0 := range []int64{0, 5, 999, 1000, 1764400000000, 1764400000999, 1764400999999, 9999999999999} {
			add(t0, d)
		}
		for range 50 {
			add(1_700_000_000_000+r.Int64N(100_000_000_000), d)
		}
		for range 50 { // the same second again and again: the cached thousands
			add(1_764_400_000_000+r.Int64N(1000), d)
		}
	}
	v, err := c.Run(context.Background(), rclient.NewScript("ms_plus", src), nil, args)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.([]any)
	if len(got) != len(want) {
		t.Fatalf("%d results for %d sums", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ms_plus(%s, %s) = %v, want %s", args[2*i], args[2*i+1], got[i], want[i])
		}
	}
}
