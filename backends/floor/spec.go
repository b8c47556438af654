package floor

import (
	"context"

	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "floor", Kind: spec.KindReference, Doc: Doc, Limits: Limits, Caps: Caps(),
		New: func(ctx context.Context, c rclient.Client, o jobstore.Options, _ map[string]string) (jobstore.Store, error) {
			return New(ctx, c, o)
		}}
}
