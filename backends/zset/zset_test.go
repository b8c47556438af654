package zset_test

import (
	"context"
	"testing"

	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// The suite's table builds zset with claims that block on the wake-up
// marker; this runs the whole suite again with the seeds' polling claim,
// where the scripts touch no marker.
func TestConformancePoll(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance variant is long")
	}
	newStore := func(ctx context.Context, c rclient.Client, o jobstore.Options) (*zset.Store, error) {
		return zset.NewWith(ctx, c, o, zset.Config{Poll: true})
	}
	conformance.Run(t, []conformance.Backend{{Name: "zset-poll", New: conformance.Adapt(newStore)}},
		basetest.Targets(t), rclient.Names())
}
