package liststore_test

import (
	"testing"

	"example.com/customstore/liststore"

	"github.com/aebench/aebench/conformance"
)

// TestConformance runs aebench's whole conformance suite on the store, on a
// redis-server it spawns for the test; the cases needing a capability the
// store does not declare are skipped, naming it (go test -v shows them).
func TestConformance(t *testing.T) {
	conformance.RunStore(t, "liststore", conformance.Adapt(liststore.New), conformance.Config{})
}
