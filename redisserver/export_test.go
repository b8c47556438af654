package redisserver

import (
	"context"
	"errors"
	"fmt"
)

// SpawnOnPort starts a standalone server that first tries port, so tests can
// make the chosen port be taken and see Start move to another.
func SpawnOnPort(ctx context.Context, o Options, port int) (*Redis, error) {
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	path, err := lookupServer(o.ServerPath)
	if err != nil {
		return nil, err
	}
	return spawnStandalone(ctx, o, path, port)
}

// WithDockerProbe returns o with its Docker health probe replaced, so tests
// can take the "no Docker" paths on a machine that runs Docker.
func WithDockerProbe(o Options, probe func(context.Context) error) Options {
	o.dockerProbe = probe
	return o
}

// Container-mode prerequisites, told apart so a test can skip with the reason.
var (
	ErrDockerDown   = errors.New("no Docker daemon answers")
	ErrImageMissing = errors.New("image not present locally")
)

// ContainerReady resolves o's image and checks that ModeContainer can run it
// without a pull. The error wraps ErrDockerDown or ErrImageMissing.
func ContainerReady(ctx context.Context, o Options) (image string, err error) {
	o, err = o.normalize()
	if err != nil {
		return "", err
	}
	if err := o.dockerProbe(ctx); err != nil {
		return o.Image, fmt.Errorf("%w: %v", ErrDockerDown, err)
	}
	if err := imagePresent(ctx, o.Image); err != nil {
		return o.Image, fmt.Errorf("%w: %v", ErrImageMissing, err)
	}
	return o.Image, nil
}
