package faults

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/aebench/aebench/rclient"
)

// ErrCrashed is what a maintenance call returns when an armed crash lands in
// it: the process "died" between two of the call's commands.
var ErrCrashed = errors.New("faults: crashed between steps (injected)")

// CrashClient wraps the client of a store used by one maintenance loop (the
// recoverer or the mover). Recover and Promote are two steps: a plain read,
// then a script that rechecks and moves. Armed, the client lets the call's
// first command through and refuses the next one without sending it, as if
// the loop's process died between the steps. Unarmed it only adds an atomic
// load per command.
type CrashClient struct {
	rclient.Client
	armed atomic.Bool
	seen  atomic.Int32
	// after is how many commands of the call go through before the crash.
	after atomic.Int32
}

// NewCrashClient wraps c.
func NewCrashClient(c rclient.Client) *CrashClient { return &CrashClient{Client: c} }

// Unwrap returns the wrapped client (rclient.OptionsOf reads through it).
func (c *CrashClient) Unwrap() rclient.Client { return c.Client }

// Arm makes a later call crash after its first steps commands (at least 1).
func (c *CrashClient) Arm(steps int) {
	c.after.Store(int32(max(steps, 1)))
	c.armed.Store(true)
}

// Armed reports whether a crash is still pending.
func (c *CrashClient) Armed() bool { return c.armed.Load() }

// Begin marks the start of one maintenance call: steps are counted from it.
func (c *CrashClient) Begin() { c.seen.Store(0) }

func (c *CrashClient) step() error {
	if !c.armed.Load() {
		return nil
	}
	if c.seen.Add(1) > c.after.Load() && c.armed.CompareAndSwap(true, false) {
		return ErrCrashed
	}
	return nil
}

// Do implements rclient.Client.
func (c *CrashClient) Do(ctx context.Context, cmd rclient.Command) (any, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	return c.Client.Do(ctx, cmd)
}

// DoMulti implements rclient.Client.
func (c *CrashClient) DoMulti(ctx context.Context, cs ...rclient.Command) []rclient.Result {
	if err := c.step(); err != nil {
		out := make([]rclient.Result, len(cs))
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	return c.Client.DoMulti(ctx, cs...)
}

// Run implements rclient.Client.
func (c *CrashClient) Run(ctx context.Context, s *rclient.Script, keys, args []string) (any, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	return c.Client.Run(ctx, s, keys, args)
}

// Call implements rclient.Client.
func (c *CrashClient) Call(ctx context.Context, l *rclient.Library, fn string, keys, args []string) (any, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	return c.Client.Call(ctx, l, fn, keys, args)
}
