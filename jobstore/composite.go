package jobstore

import (
	"context"
	"errors"
	"fmt"
)

// What a store made of several complete stores (backends/shard,
// backends/queues) shares: the parts' capabilities less what spans them,
// their summed counts, and closing them all.

// SplitCapabilities are the capabilities of a store split over several
// stores with parts' capabilities: no queue-wide order (CapStrictFIFO,
// CapQueueOrder hold within a part) nor atomic bulk enqueue (a batch
// splits by part), with batch completion (one call per part).
func SplitCapabilities(parts Capabilities) Capabilities {
	cs := Capabilities{}
	for c, on := range parts {
		cs[c] = on
	}
	delete(cs, CapStrictFIFO)
	delete(cs, CapQueueOrder)
	delete(cs, CapAtomicBulk)
	cs[CapBatchComplete] = true
	return cs
}

// SumStats adds up the parts' counts; name says which part failed.
func SumStats(ctx context.Context, parts []Store, name func(i int) string) (Stats, error) {
	var out Stats
	for i, p := range parts {
		st, err := p.Stats(ctx)
		if err != nil {
			return out, fmt.Errorf("%s: %w", name(i), err)
		}
		out.Add(st)
	}
	return out, nil
}

// CloseAll closes every part.
func CloseAll(parts []Store) error {
	var errs []error
	for _, p := range parts {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
