package asynq

import (
	"github.com/aebench/aebench/backends/spec"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "asynq", Kind: spec.KindPeer, Doc: Doc, Limits: Limits, Options: Options(),
		Caps: Caps(), NativeQueues: []string{"strict", "weighted"},
		New: spec.Configured(ParseConfig, NewWith)}
}
