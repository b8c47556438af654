package probe

import (
	"context"
	"sync"

	"github.com/aebench/aebench/rclient"
)

// Counting wraps a client and counts the scripts and functions the store
// runs through it, by name: the probe's windows then name the scripts a
// path ran (Redis's commandstats has one fcall line for them all).
type Counting struct {
	rclient.Client
	mu    sync.Mutex
	calls map[string]int64
}

// NewCounting wraps c.
func NewCounting(c rclient.Client) *Counting {
	return &Counting{Client: c, calls: map[string]int64{}}
}

// Unwrap returns the wrapped client (rclient.OptionsOf reads through it).
func (c *Counting) Unwrap() rclient.Client { return c.Client }

func (c *Counting) note(name string) {
	c.mu.Lock()
	c.calls[name]++
	c.mu.Unlock()
}

// Run counts s's name, then runs it.
func (c *Counting) Run(ctx context.Context, s *rclient.Script, keys []string, args []string) (any, error) {
	c.note(s.Name)
	return c.Client.Run(ctx, s, keys, args)
}

// Call counts fn, then calls it.
func (c *Counting) Call(ctx context.Context, l *rclient.Library, fn string, keys []string, args []string) (any, error) {
	c.note(fn)
	return c.Client.Call(ctx, l, fn, keys, args)
}

// take returns the counts since the last take and starts again.
func (c *Counting) take() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int64{}
	return out
}
