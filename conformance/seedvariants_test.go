package conformance_test

import (
	"context"
	"testing"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// seedVariants are the seed variants (backend options that reproduce a
// seed's flaw on purpose), one store each. They lack the core capabilities
// their flaw breaks, and the suite must skip those cases by name rather
// than fail: a variant is held to the rest of the contract.
var seedVariants = []struct{ backend, variant string }{
	{"zset", "seed004"}, {"zset", "seed001"}, {"zset", "seed002"}, {"zset", "unfenced"}, {"stream", "seed003"}, {"dual", "seed000"},
}

func TestSeedVariantsConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite on every seed variant")
	}
	reg := registry.Builtin()
	var bs []conformance.Backend
	for _, v := range seedVariants {
		b, err := reg.Lookup(v.backend)
		if err != nil {
			t.Fatal(err)
		}
		extra := map[string]string{"variant": v.variant}
		bs = append(bs, conformance.Backend{Name: v.backend + "-" + v.variant,
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
				return b.Build(ctx, c, o, extra)
			}})
	}
	conformance.Run(t, bs, targets(t)[:1], []string{rclient.GoRedis})
}
