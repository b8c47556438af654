package conformance_test

import (
	"testing"

	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/conformance"
)

// A store of your own runs every case from your own go test: put this in
// its _test.go file, with your constructor in place of zset.New. The zero
// Config spawns a private redis-server for the test and stops it after.
func ExampleRunStore() {
	testConformance := func(t *testing.T) {
		conformance.RunStore(t, "zset", conformance.Adapt(zset.New), conformance.Config{})
	}
	_ = testConformance // func TestConformance(t *testing.T) { ... } in your package
}

// Add a Redis Cluster target and both client libraries.
func ExampleRunStore_cluster() {
	testConformance := func(t *testing.T) {
		conformance.RunStore(t, "zset", conformance.Adapt(zset.New), conformance.Config{
			Cluster: true,
			Clients: []string{"go-redis", "rueidis"},
		})
	}
	_ = testConformance
}
