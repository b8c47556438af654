package driver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/driver/drivertest"
)

// TestHelloMatchesDeclared: what each driver says in its hello is what
// DeclaredBy lists for runs planned before any driver starts.
func TestHelloMatchesDeclared(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, spec driver.Spec) {
		h, err := driver.ProbeHello(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		d := driver.DeclaredBy[spec.Name]
		if h.Driver != spec.Name || h.System == "" || h.SystemVersion == "" || h.Guarantees == "" {
			t.Errorf("hello %+v lacks its name, system, version or guarantees", h)
		}
		if !slices.Equal(h.Loses, d.Loses) && len(h.Loses)+len(d.Loses) > 0 {
			t.Errorf("hello loses %v, DeclaredBy %v", h.Loses, d.Loses)
		}
		if !slices.Equal(h.Caps.Queues, d.Queues) {
			t.Errorf("hello caps.queues %v, DeclaredBy Queues %v", h.Caps.Queues, d.Queues)
		}
		if recovers := h.Caps.Recovery != "none"; recovers != d.Recovers {
			t.Errorf("hello recovery %q, DeclaredBy Recovers %v", h.Caps.Recovery, d.Recovers)
		}
	})
}

// TestMissingDriver: a driver whose folder or runtime is missing is
// ErrNotInstalled with how to install it, never a silent skip.
func TestMissingDriver(t *testing.T) {
	tests := []struct {
		name string
		spec driver.Spec
		want string
	}{
		{"no folder", driver.Spec{Name: "nosuch", Command: []string{"sh"}, Install: "apt-get install nosuch"}, "drivers/nosuch"},
		{"no runtime", driver.Spec{Name: "bullmq", Command: []string{"/nonexistent/node"}, Install: "apt-get install nodejs"}, "apt-get install nodejs"},
		{"no package", driver.Spec{Name: "bullmq", Command: []string{"sh"}, Needs: "node_modules/nosuch", Install: "npm ci"}, "npm ci"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := driver.ProbeHello(context.Background(), tt.spec)
			if !errors.Is(err, driver.ErrNotInstalled) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ProbeHello = %v; want ErrNotInstalled naming %q", err, tt.want)
			}
		})
	}
}
