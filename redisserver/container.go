package redisserver

// This file holds every use of testcontainers-go, so the rest of the package
// does not depend on a Docker client.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// dockerHealthTimeout bounds the Docker health probe, so an unreachable
// remote DOCKER_HOST cannot stall ModeAuto.
const dockerHealthTimeout = 3 * time.Second

// dockerHealthy reports whether a Docker daemon answers. With no daemon it
// fails at once.
func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		// Older testcontainers releases panicked when no Docker host could
		// be found; turn any such panic into an error.
		if r := recover(); r != nil {
			err = fmt.Errorf("docker provider: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, dockerHealthTimeout)
	defer cancel()
	p, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return fmt.Errorf("docker provider: %w", err)
	}
	if err := p.Health(ctx); err != nil { // Health also closes the provider
		return fmt.Errorf("docker health: %w", err)
	}
	return nil
}

// imagePresent reports whether image is present in the local Docker image
// store, without pulling it.
func imagePresent(ctx context.Context, image string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker provider: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, dockerHealthTimeout)
	defer cancel()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return fmt.Errorf("docker provider: %w", err)
	}
	defer p.Close()
	if _, err := p.Client().ImageInspect(ctx, image); err != nil {
		return fmt.Errorf("image %q is not present locally: %w", image, err)
	}
	return nil
}

// startContainer runs o.Image as a standalone Redis and waits until it
// answers PING on its mapped port.
func startContainer(ctx context.Context, o Options) (*Redis, error) {
	cmd := []string{"redis-server", "--save", "", "--protected-mode", "no"}
	if o.AppendOnly {
		cmd = append(cmd, "--appendonly", "yes", "--appendfsync", o.AppendFsync)
	} else {
		cmd = append(cmd, "--appendonly", "no")
	}
	cmd = append(cmd, o.ExtraArgs...)
	password := ""
	for i, a := range o.ExtraArgs {
		if a == "--requirepass" && i+1 < len(o.ExtraArgs) {
			password = o.ExtraArgs[i+1]
		}
	}
	o.Logf("redisserver: starting container %s", o.Image)
	// The port is published on 127.0.0.1 only, and reached there only:
	// the host testcontainers reports can be the Docker bridge's gateway,
	// an address outside the loopback range, so neither its Host nor a
	// wait strategy that dials it is used.
	c, err := testcontainers.Run(ctx, o.Image,
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{network.MustParsePort("6379/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "0"}}}
		}),
		testcontainers.WithCmd(cmd...),
		testcontainers.WithWaitStrategyAndDeadline(o.StartTimeout, wait.ForLog("Ready to accept connections")),
	)
	terminate := func(context.Context) error { return testcontainers.TerminateContainer(c) }
	if err != nil {
		_ = terminate(ctx)
		return nil, fmt.Errorf("redisserver: run container %s: %w", o.Image, err)
	}
	port, err := c.MappedPort(ctx, "6379/tcp")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port.Num())))
	if err != nil {
		_ = terminate(ctx)
		return nil, fmt.Errorf("redisserver: container %s: mapped port: %w", o.Image, err)
	}
	pctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	if err := pingRaw(pctx, addr, password, 0); err != nil {
		_ = terminate(ctx)
		return nil, fmt.Errorf("redisserver: container %s at %s does not answer PING: %w", o.Image, addr, err)
	}
	o.Logf("redisserver: container %s ready at %s", o.Image, addr)
	return &Redis{
		Mode:      ModeContainer,
		Addrs:     []string{addr},
		Password:  password,
		terminate: terminate,
	}, nil
}
