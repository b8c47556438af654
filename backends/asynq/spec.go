package asynq

import (
	"context"

	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "asynq", Kind: spec.KindPeer, Doc: Doc, Limits: Limits, Options: Options(),
		Caps: Caps(),
		New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
			cfg, err := ParseConfig(extra)
			if err != nil {
				return nil, err
			}
			return NewWith(ctx, c, o, cfg)
		}}
}
