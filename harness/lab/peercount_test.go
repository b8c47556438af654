package lab

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/rediscost"
	"github.com/aebench/aebench/redisserver"
)

// TestMeterDrain meters a side that loads a list and pops from it, on a
// Redis under callgrind: the count waits for the drain, divides by the
// jobs that left the list in its window, and reports a side that ended
// before its drain was metered. Without valgrind it skips with the
// reason, except under CI, which installs it (.ci/run).
func TestMeterDrain(t *testing.T) {
	if err := rediscost.CheckValgrind(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("under CI valgrind must be installed (.ci/run): %v", err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	r, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn, Callgrind: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cg := rediscost.Callgrind{PID: r.Nodes[0].PID(), OutFile: r.Nodes[0].CallgrindOut()}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addrs[0], Password: r.Password})
	defer rdb.Close()

	// A side: load 20,000 ids, then pop them one at a time until stopped.
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 20000; i += 1000 {
			ids := make([]any, 1000)
			for k := range ids {
				ids[k] = "j" + strconv.Itoa(i+k)
			}
			if err := rdb.LPush(ctx, "t:{q}:ready", ids...).Err(); err != nil {
				done <- err
				return
			}
		}
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := rdb.RPop(ctx, "t:{q}:ready").Err(); err != nil {
				done <- err
				return
			}
			// At most 2,000 a second: the list outlasts the meter's 2 s.
			time.Sleep(500 * time.Microsecond)
		}
	}()
	per, err := meterDrain(ctx, rdb, cg, "*:ready", done)
	close(stop)
	if err != nil {
		t.Fatalf("meterDrain: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%.0f instructions a job", per)
	// An RPOP a job, with its dispatch and reply: thousands of
	// instructions, not tens and not millions.
	if per < 500 || per > 200000 {
		t.Errorf("%.0f instructions a job, want an RPOP's few thousand", per)
	}

	// A side that ends before its list ever shrinks.
	ended := make(chan error, 1)
	ended <- nil
	if _, err := meterDrain(ctx, rdb, cg, "nothing:*:ready", ended); err == nil {
		t.Error("a side that ended before its drain: no error")
	}
	failed := make(chan error, 1)
	failed <- errors.New("boom")
	if _, err := meterDrain(ctx, rdb, cg, "nothing:*:ready", failed); err == nil || err.Error() != "boom" {
		t.Errorf("a side's own error: %v, want boom", err)
	}
}
