package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// NullBackend is the name of the in-process calibration store.
const NullBackend = "null"

// Backend is a store the harness can build: every entry of the registry,
// plus the null calibration store, which is not a job store and never
// reaches Redis.
type Backend struct {
	Name    string
	Doc     string
	Options []registry.Option
	// Calibration marks the null store: its numbers measure the harness, not
	// a strategy, and are kept out of comparisons.
	Calibration bool
	New         func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error)
}

// Backends lists what scenarios may name: whatever the registry lists today,
// then null.
func Backends() []Backend {
	var out []Backend
	for _, b := range registry.All() {
		out = append(out, Backend{Name: b.Name, Doc: b.Doc, Options: b.Options, New: b.Build})
	}
	return append(out, Backend{
		Name:        NullBackend,
		Doc:         "calibration, not a job store: an in-process queue with blocking claim, used to measure the harness's own overhead",
		Calibration: true,
		New: func(_ context.Context, _ rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
			if err := registry.CheckKeys(NullBackend, extra, nil); err != nil {
				return nil, err
			}
			return NewNullStore(o)
		},
	})
}

// BackendNames lists the names Backends has.
func BackendNames() []string {
	var out []string
	for _, b := range Backends() {
		out = append(out, b.Name)
	}
	return out
}

// LookupBackend finds a backend by name; the error lists the names there are.
func LookupBackend(name string) (Backend, error) {
	for _, b := range Backends() {
		if b.Name == name {
			return b, nil
		}
	}
	return Backend{}, fmt.Errorf("unknown backend %q: allowed are %s", name, strings.Join(BackendNames(), ", "))
}
