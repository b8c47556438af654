// Package drivertest runs a test once per driver of this repository
// (BullMQ, Sidekiq, RQ), each as a parallel subtest that skips, saying how
// to install it, a driver whose runtime or packages are missing, except
// under CI (.ci/run installs every driver), where that fails the test.
package drivertest

import (
	"context"
	"testing"

	"github.com/aebench/aebench/backends/driver"
)

// Each runs f for every driver in driver.Specs() as a parallel subtest
// named for the driver.
func Each(t *testing.T, f func(t *testing.T, spec driver.Spec)) {
	t.Helper()
	for _, spec := range driver.Specs() {
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			if why, err := driver.Missing(context.Background(), spec); err != nil {
				t.Fatal(err)
			} else if why != "" {
				t.Skip(why)
			}
			f(t, spec)
		})
	}
}
