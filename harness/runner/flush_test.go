package runner

import (
	"context"
	"testing"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// A flushed server holds no keys, no function library and no cached
// script: a run after others must not pay for their Lua state.
func TestFlushNodeDropsLuaState(t *testing.T) {
	ctx := context.Background()
	r := redistest.Start(t, redisserver.Options{})
	c, err := rclient.New(rclient.GoRedis, rclient.Options{Addrs: r.Addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lib := &rclient.Library{Name: "flushme", Src: "#!lua name=flushme\nredis.register_function('flushme_f', function() return 1 end)"}
	if err := c.LoadLibrary(ctx, lib); err != nil {
		t.Fatal(err)
	}
	sha, err := c.Do(ctx, rclient.Cmd("SCRIPT", "LOAD", "return 1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, rclient.Cmd("SET", "k", "v")); err != nil {
		t.Fatal(err)
	}
	if err := flushNode(ctx, r.Addrs[0], r.Password); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, rclient.Command{Head: []string{"DBSIZE"}}); err != nil || n != int64(0) {
		t.Errorf("DBSIZE after the flush = %v, %v; want 0", n, err)
	}
	if v, err := c.Do(ctx, rclient.Cmd("FUNCTION", "LIST")); err != nil || len(asList(v)) != 0 {
		t.Errorf("FUNCTION LIST after the flush = %v, %v; want none", v, err)
	}
	sum, _ := sha.(string)
	if v, err := c.Do(ctx, rclient.Cmd("SCRIPT", "EXISTS", sum)); err != nil || len(asList(v)) != 1 || asList(v)[0] != int64(0) {
		t.Errorf("SCRIPT EXISTS after the flush = %v, %v; want 0", v, err)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }
