//go:build !linux

package runner

import "errors"

// pinHarness: CPU affinity is set on Linux only.
func pinHarness(string) (string, func(), error) {
	return "", nil, errors.New("redis.cpus: pinning needs Linux")
}
