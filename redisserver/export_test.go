package redisserver

import "context"

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
