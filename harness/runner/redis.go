package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
	"github.com/aebench/aebench/redisserver"
)

type pooledRedis struct {
	r    *redisserver.Redis
	info summary.RedisInfo
	// broken: a fault left it unlike what its key says (a master killed
	// for good), or it is a metered Redis that served its run (fresh); the
	// next run that asks for it gets a fresh one.
	broken atomic.Bool
	// served: a run has used it. A metered Redis serves one run only
	// (fresh), so that no run's instruction count carries what an earlier
	// backend left in the server: its clients, function libraries,
	// allocator state. In the same server a backend's count moved 3%
	// with what had run before it; alone, 0.2%.
	served bool
}

// redisPool starts each distinct Redis a plan asks for once and keeps it
// for every run that names it.
type redisPool struct {
	logf    func(string, ...any)
	servers map[string]*pooledRedis
}

func newRedisPool(logf func(string, ...any)) *redisPool {
	return &redisPool{logf: logf, servers: map[string]*pooledRedis{}}
}

func (p *redisPool) get(ctx context.Context, rc conditions.RedisConfig) (*pooledRedis, error) {
	key := rc.Mode + "|" + rc.URL + "|" + strconv.Itoa(rc.Masters) + "x" + strconv.Itoa(rc.Replicas) + "|" + rc.Persistence + "|" + strconv.Itoa(rc.HZ) + "|" + rc.Meter +
		"|" + strconv.FormatInt(rc.MaxMemory, 10) + rc.MaxMemoryPolicy + "|" + rc.Save + "|" + rc.CPUs
	if pr, ok := p.servers[key]; ok && !pr.broken.Load() {
		return pr, nil
	} else if ok {
		delete(p.servers, key)
		if err := pr.r.Close(); err != nil {
			p.logf("closing a Redis a fault left broken: %v", err)
		}
	}
	o := redisserver.Options{Logf: p.logf}
	switch rc.Mode {
	case "embedded":
		o.Mode = redisserver.ModeSpawn
		switch rc.Persistence {
		case "aof-everysec", "rdb+aof-everysec":
			o.AppendOnly, o.AppendFsync = true, "everysec"
		case "aof-always":
			o.AppendOnly, o.AppendFsync = true, "always"
		}
		if strings.HasPrefix(rc.Persistence, "rdb") {
			// A stock redis.conf's save points: what most people run.
			o.ExtraArgs = append(o.ExtraArgs, "--save", rc.SavePoints())
		}
	case "cluster":
		o.Mode, o.Masters, o.Replicas = redisserver.ModeCluster, rc.Masters, rc.Replicas
	case "container":
		o.Mode = redisserver.ModeContainer
	case "url":
		o.Mode, o.URL = redisserver.ModeURL, rc.URL
	default:
		return nil, fmt.Errorf("redis.mode %q unknown", rc.Mode)
	}
	if o.Mode == redisserver.ModeSpawn || o.Mode == redisserver.ModeCluster {
		o.ExtraArgs = append(o.ExtraArgs, "--hz", strconv.Itoa(rc.HZ))
		if rc.MaxMemory > 0 {
			o.ExtraArgs = append(o.ExtraArgs, "--maxmemory", strconv.FormatInt(rc.MaxMemory, 10))
		}
		if rc.MaxMemoryPolicy != "" {
			o.ExtraArgs = append(o.ExtraArgs, "--maxmemory-policy", rc.MaxMemoryPolicy)
		}
		if rc.CPUs != "" {
			o.ExtraArgs = append(o.ExtraArgs, "--server_cpulist", rc.CPUs)
		}
	}
	if rc.Metered() {
		if err := rediscost.CheckValgrind(); err != nil {
			return nil, fmt.Errorf("redis.meter instructions: %w", err)
		}
		o.Callgrind = true
	}
	r, err := redisserver.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	v, err := r.Version(ctx)
	if err != nil {
		r.Close()
		return nil, err
	}
	pr := &pooledRedis{r: r, info: summary.RedisInfo{Mode: rc.Mode, Version: v, Cluster: r.Cluster, Masters: len(r.Addrs),
		Owned: rc.Mode != "url"}}
	if rc.Metered() {
		pr.info.Meter = rc.Meter
	}
	p.servers[key] = pr
	return pr, nil
}

// fresh returns the server for a new run: the pooled one, or for a
// metered Redis that has already served a run, a new one.
func (p *redisPool) fresh(ctx context.Context, rc conditions.RedisConfig) (*pooledRedis, error) {
	srv, err := p.get(ctx, rc)
	if err != nil {
		return nil, err
	}
	if rc.Metered() && srv.served {
		srv.broken.Store(true)
		if srv, err = p.get(ctx, rc); err != nil {
			return nil, err
		}
	}
	srv.served = true
	return srv, nil
}

// flush empties a Redis that aebench spawned, so each run starts from the
// same empty server (memory, keyspace, and the Lua state: FLUSHALL keeps
// function libraries and cached scripts, and a run after others would pay
// for theirs, since Redis's Lua garbage collector walks every library
// loaded; each run's stores load their own again). It refuses a server
// given by URL.
func (pr *pooledRedis) flush(ctx context.Context) error {
	if !pr.info.Owned {
		return errors.New("refusing to flush a Redis given by URL")
	}
	for _, addr := range pr.r.Addrs {
		if err := flushNode(ctx, addr, pr.r.Password); err != nil {
			return err
		}
	}
	return nil
}

// flushNode runs FLUSHALL, FUNCTION FLUSH and SCRIPT FLUSH on one server;
// a server too old for FUNCTION (before Redis 7) has no libraries to drop.
func flushNode(ctx context.Context, addr, password string) error {
	c, err := rclient.New(rclient.GoRedis, rclient.Options{Addrs: []string{addr}, Password: password})
	if err != nil {
		return fmt.Errorf("flush %s: %w", addr, err)
	}
	defer c.Close()
	for _, cmd := range [][]string{{"FLUSHALL"}, {"FUNCTION", "FLUSH"}, {"SCRIPT", "FLUSH"}} {
		_, err := c.Do(ctx, rclient.Command{Head: cmd})
		var re *rclient.RedisError
		if errors.As(err, &re) && cmd[0] == "FUNCTION" && strings.Contains(strings.ToLower(re.Msg), "unknown command") {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", strings.Join(cmd, " "), addr, err)
		}
	}
	return nil
}

func (p *redisPool) close() error {
	var errs []error
	for _, pr := range p.servers {
		errs = append(errs, pr.r.Close())
	}
	return errors.Join(errs...)
}
