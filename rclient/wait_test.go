package rclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// TestCallWait: both adapters send WAIT on the connection of the FCALL
// they just ran, so it counts the replica that has the write; asking for
// more replicas than there are returns after the timeout with the count.
func TestCallWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := redistest.Start(t, redisserver.Options{Mode: redisserver.ModeCluster, Masters: 3, Replicas: 1})
	lib := &rclient.Library{Name: "waittest", Src: "#!lua name=waittest\n" +
		"redis.register_function('wt_set', function(keys, args) return redis.call('SET', keys[1], args[1]) end)"}
	for _, name := range []string{rclient.GoRedis, rclient.Rueidis} {
		t.Run(name, func(t *testing.T) {
			c, err := rclient.New(name, r.ClientOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			w, ok := c.(rclient.Waiter)
			if !ok {
				t.Fatalf("%s does not implement rclient.Waiter", name)
			}
			// WAIT returns as soon as enough replicas ack: the first case's
			// long timeout costs nothing unless the machine is slow; the
			// second asks for more replicas than there are and waits it out.
			for i, tc := range []struct {
				replicas, want int
				timeout        time.Duration
			}{{1, 1, 5 * time.Second}, {2, 1, 300 * time.Millisecond}} {
				key := "{wait-" + name + "}"
				_, acked, err := w.CallWait(ctx, lib, "wt_set", []string{key}, []string{"v"}, tc.replicas, tc.timeout)
				if err != nil || acked != tc.want {
					t.Errorf("case %d: CallWait(replicas %d) = acked %d, %v; want %d", i, tc.replicas, acked, err, tc.want)
				}
			}
		})
	}
}
