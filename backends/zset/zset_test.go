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

// The record read and written by the client as one JSON string
// (ClientJSON, AsyncEndpoints' JSON store): the whole suite, as every job
// store.
func TestConformanceClientJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance variant is long")
	}
	newStore := func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		return zset.Build(ctx, c, o, map[string]string{zset.OptionRecordIO: zset.RecordIOClient})
	}
	conformance.Run(t, []conformance.Backend{{Name: "zset-json-client", New: newStore,
		Options: func(o *jobstore.Options) { o.Encoding = jobstore.EncodingJSON }}},
		basetest.Targets(t), rclient.Names())
}
