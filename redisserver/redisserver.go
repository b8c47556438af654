// Package redisserver yields a ready Redis for a benchmark run or a test: an
// existing server named by URL, a private redis-server spawned on a free
// loopback port (standalone, or N masters formed into a Redis Cluster), or a
// testcontainers-go container. For the servers it spawns it also owns the
// process lifecycle — pause, kill, stop, restart on the same port and data
// directory, close — so fault-injection scenarios act on real processes.
//
// Start picks and readies the server; Redis.ClientOptions hands the result to
// package rclient; Redis.Close releases everything that Start acquired.
//
// Container mode runs Options.Image, else the image named by the environment
// variable AEBENCH_REDIS_IMAGE (ImageEnv), else DefaultImage. The package's
// container test runs only when a Docker daemon answers and that image is
// present locally (it never pulls), and is skipped with the reason otherwise.
package redisserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/aebench/aebench/rclient"
)

// Mode selects where the Redis comes from.
type Mode string

// The modes Start understands.
const (
	ModeAuto      Mode = "auto"      // URL if given, else spawn, else container
	ModeURL       Mode = "url"       // an existing server named by Options.URL
	ModeSpawn     Mode = "embedded"  // private redis-server on a free loopback port
	ModeCluster   Mode = "cluster"   // N spawned masters forming a Redis Cluster
	ModeContainer Mode = "container" // testcontainers-go redis image
)

// Defaults applied by Start to zero Options fields.
const (
	DefaultMasters      = 3
	DefaultAppendFsync  = "everysec"
	DefaultStartTimeout = 10 * time.Second
	DefaultImage        = "redis:7"
	DefaultServerPath   = "redis-server"
)

// ImageEnv names the environment variable that chooses the container image
// when Options.Image is empty.
const ImageEnv = "AEBENCH_REDIS_IMAGE"

// ErrNoRedis is returned (wrapped) when no Redis can be had: no URL, no
// redis-server binary, no reachable Docker daemon.
var ErrNoRedis = errors.New("redisserver: no Redis available")

// ErrNotOwned is returned (wrapped) by process operations on a Redis that this
// package did not spawn (URL and container modes).
var ErrNotOwned = errors.New("redisserver: Redis not owned by this process")

const urlForm = "redis://[[user]:password@]host:port[/db] or rediss://[[user]:password@]host:port[/db][?ca_file=PATH&cert_file=PATH&key_file=PATH&skip_verify=true&server_name=NAME]"

// Options configure Start. The zero value is usable: ModeAuto, standalone,
// no persistence.
type Options struct {
	// Mode selects the source; default ModeAuto.
	Mode Mode
	// URL is redis://[:password@]host:port[/db], used by ModeURL and, when
	// set, by ModeAuto. Whether it is a cluster is detected from INFO cluster.
	URL string
	// ServerPath is the redis-server binary; default "redis-server" on PATH.
	ServerPath string
	// Masters is the cluster size for ModeCluster; default 3.
	Masters int
	// Replicas is how many replicas each master of a ModeCluster cluster
	// gets (asynchronous replication; the cluster promotes one when its
	// master fails); default 0.
	Replicas int
	// AppendOnly turns AOF on. Persistence is off unless asked
	// (--save "" --appendonly no).
	AppendOnly bool
	// AppendFsync is "always", "everysec" or "no" (with AppendOnly);
	// default "everysec".
	AppendFsync string
	// ExtraArgs are appended to the redis-server command line, so they
	// override the defaults. A "--requirepass X" pair sets Redis.Password.
	ExtraArgs []string
	// StartTimeout bounds readiness of each server (and cluster formation);
	// default 10s.
	StartTimeout time.Duration
	// Image is the container image for ModeContainer; default the value of
	// $AEBENCH_REDIS_IMAGE when set, else "redis:7". An image that is not
	// present locally is pulled by testcontainers.
	Image string
	// Callgrind runs each spawned redis-server under valgrind's callgrind
	// with instrumentation off until asked (rediscost.Callgrind), writing
	// its dumps to the node's folder (Node.CallgrindOut). Redis runs about
	// fifty times slower; the start timeout defaults to 60s.
	Callgrind bool
	// Logf, if set, receives progress lines.
	Logf func(format string, args ...any)

	// dockerProbe reports whether a Docker daemon answers; default
	// dockerHealthy. Tests replace it to take the "no Docker" paths on a
	// machine that does run Docker.
	dockerProbe func(context.Context) error
}

// Redis is a ready Redis obtained by Start. Close it when done.
type Redis struct {
	// Mode is the mode actually used (never ModeAuto).
	Mode Mode
	// Addrs are host:port of each master (one for standalone).
	Addrs   []string
	Cluster bool
	// Username (an ACL user; "": the default user), Password and DB to
	// connect with (DB is 0 on a cluster).
	Username string
	Password string
	DB       int
	// TLS, when set, is how to connect (a rediss:// URL); TLSFiles what
	// it was built from.
	TLS      *tls.Config
	TLSFiles rclient.TLSFiles
	// Nodes are the spawned servers, one per master; empty for URL and
	// container modes. Replicas are a cluster's replicas, Options.Replicas
	// per master in master order.
	Nodes    []*Node
	Replicas []*Node

	terminate func(ctx context.Context) error // container mode
	closeOnce sync.Once
	closeErr  error
}

// Start returns a ready Redis as o asks. Options are validated before
// anything is started; on error nothing is left running. ctx bounds the
// start only: spawned servers and containers live until Close. In ModeAuto a
// redis-server that is found but fails to start is an error, not a reason
// to try Docker.
func Start(ctx context.Context, o Options) (*Redis, error) {
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	switch o.Mode {
	case ModeURL:
		if o.URL == "" {
			return nil, fmt.Errorf("redisserver: mode %q needs Options.URL (%s)", ModeURL, urlForm)
		}
		return startURL(ctx, o)
	case ModeSpawn, ModeCluster:
		path, err := lookupServer(o.ServerPath)
		if err != nil {
			return nil, fmt.Errorf("%w: mode %q needs a redis-server binary: %v; install redis-server (apt-get install redis-server, brew install redis), or run on a Redis you have: --redis-url redis://HOST:PORT (redis.mode url), or redis.mode container with Docker",
				ErrNoRedis, o.Mode, err)
		}
		if o.Mode == ModeCluster {
			return spawnCluster(ctx, o, path)
		}
		return spawnStandalone(ctx, o, path, 0)
	case ModeContainer:
		if err := o.dockerProbe(ctx); err != nil {
			return nil, fmt.Errorf("%w: mode %q needs a running Docker daemon: %v; start Docker, or use mode %q (redis-server) or %q",
				ErrNoRedis, ModeContainer, firstLine(err.Error()), ModeSpawn, ModeURL)
		}
		return startContainer(ctx, o)
	default: // ModeAuto
		if o.URL != "" {
			return startURL(ctx, o)
		}
		path, lookErr := lookupServer(o.ServerPath)
		if lookErr == nil {
			return spawnStandalone(ctx, o, path, 0)
		}
		o.Logf("redisserver: auto: %v; trying Docker", lookErr)
		dockErr := o.dockerProbe(ctx)
		if dockErr == nil {
			return startContainer(ctx, o)
		}
		return nil, fmt.Errorf("%w: redis-server not found (%v) and Docker is not reachable (%v); fix one: "+
			"install redis-server (e.g. `apt-get install redis-server`) or set its path, "+
			"start Docker, or pass a Redis URL (the --redis-url flag, or redis.url in the scenario, as %s)",
			ErrNoRedis, lookErr, firstLine(dockErr.Error()), urlForm)
	}
}

// normalize validates o and fills defaults.
func (o Options) normalize() (Options, error) {
	switch o.Mode {
	case "":
		o.Mode = ModeAuto
	case ModeAuto, ModeURL, ModeSpawn, ModeCluster, ModeContainer:
	default:
		return o, fmt.Errorf("redisserver: Options.Mode %q unknown; allowed: %q, %q, %q, %q, %q",
			o.Mode, ModeAuto, ModeURL, ModeSpawn, ModeCluster, ModeContainer)
	}
	switch o.AppendFsync {
	case "":
		o.AppendFsync = DefaultAppendFsync
	case "always", "everysec", "no":
	default:
		return o, fmt.Errorf("redisserver: Options.AppendFsync %q invalid; allowed: \"always\", \"everysec\", \"no\"", o.AppendFsync)
	}
	if o.Masters < 0 {
		return o, fmt.Errorf("redisserver: Options.Masters %d invalid; want >= 1 (0 means %d)", o.Masters, DefaultMasters)
	}
	if o.Masters == 0 {
		o.Masters = DefaultMasters
	}
	if o.Replicas < 0 || o.Replicas > 0 && o.Mode != ModeCluster {
		return o, fmt.Errorf("redisserver: Options.Replicas %d invalid; want >= 0, and only with mode %q", o.Replicas, ModeCluster)
	}
	if o.StartTimeout < 0 {
		return o, fmt.Errorf("redisserver: Options.StartTimeout %v invalid; want > 0 (0 means %v)", o.StartTimeout, DefaultStartTimeout)
	}
	if o.Callgrind && o.Mode != ModeSpawn && o.Mode != ModeCluster && o.Mode != ModeAuto {
		return o, fmt.Errorf("redisserver: Options.Callgrind needs a spawned redis-server (mode %q or %q), not mode %q", ModeSpawn, ModeCluster, o.Mode)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
		if o.Callgrind {
			o.StartTimeout = 6 * DefaultStartTimeout
		}
	}
	if o.Image == "" {
		o.Image = os.Getenv(ImageEnv)
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.dockerProbe == nil {
		o.dockerProbe = dockerHealthy
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.URL != "" {
		if o.Mode != ModeURL && o.Mode != ModeAuto {
			return o, fmt.Errorf("redisserver: Options.URL is set but Options.Mode is %q; use %q or %q with a URL", o.Mode, ModeURL, ModeAuto)
		}
		if _, err := parseURL(o.URL); err != nil {
			return o, err
		}
	}
	return o, nil
}

func lookupServer(p string) (string, error) {
	if p == "" {
		p = DefaultServerPath
	}
	found, err := exec.LookPath(p)
	if err != nil {
		return "", fmt.Errorf("redis-server binary %q: %w", p, err)
	}
	return found, nil
}

// Auth is how to authenticate to r (rclient.Auth).
func (r *Redis) Auth() rclient.Auth {
	return rclient.Auth{Username: r.Username, Password: r.Password, TLS: r.TLS}
}

// newClient is a go-redis client for probing and setup: RESP2, no retries,
// no client identity or maintenance handshakes, context deadlines honoured.
func newClient(addr string, auth rclient.Auth, db int) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		Username:                 auth.Username,
		Password:                 auth.Password,
		TLSConfig:                auth.TLS,
		DB:                       db,
		Protocol:                 2,
		DialTimeout:              2 * time.Second,
		MaxRetries:               -1,
		DialerRetries:            1,
		PoolSize:                 1,
		ContextTimeoutEnabled:    true,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// infoField returns one "name:value" field of an INFO reply.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// ClientOptions returns what rclient needs to reach r.
func (r *Redis) ClientOptions() rclient.Options {
	o := rclient.Options{
		Addrs:    append([]string(nil), r.Addrs...),
		Cluster:  r.Cluster,
		Username: r.Username,
		Password: r.Password,
		DB:       r.DB,
		TLS:      r.TLS,
		TLSFiles: r.TLSFiles,
	}
	for _, n := range r.Nodes {
		if n.link != nil {
			if o.AddrMap == nil {
				o.AddrMap = map[string]string{}
			}
			o.AddrMap[n.link.Addr()] = n.Addr()
		}
	}
	return o
}

// URL returns redis://[:password@]host:port[/db] for the first address, or
// "" when there is none.
func (r *Redis) URL() string {
	if len(r.Addrs) == 0 {
		return ""
	}
	u := url.URL{Scheme: "redis", Host: r.Addrs[0]}
	if r.TLS != nil {
		u.Scheme = "rediss" // without its TLS options, which live in r.TLS
	}
	if r.Password != "" || r.Username != "" {
		u.User = url.UserPassword(r.Username, r.Password)
	}
	if r.DB != 0 {
		u.Path = "/" + strconv.Itoa(r.DB)
	}
	return u.String()
}

// Version returns redis_version from INFO server of the first address.
func (r *Redis) Version(ctx context.Context) (string, error) {
	if len(r.Addrs) == 0 {
		return "", errors.New("redisserver: Version: no address")
	}
	c := newClient(r.Addrs[0], r.Auth(), 0)
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redisserver: INFO server at %s: %w", r.Addrs[0], err)
	}
	v := infoField(info, "redis_version")
	if v == "" {
		return "", fmt.Errorf("redisserver: INFO server at %s has no redis_version", r.Addrs[0])
	}
	return v, nil
}

// Pause stops (SIGSTOP) every spawned node.
func (r *Redis) Pause() error {
	if len(r.Nodes) == 0 {
		return fmt.Errorf("%w: cannot pause a Redis in mode %q", ErrNotOwned, r.Mode)
	}
	var errs []error
	for _, n := range r.Nodes {
		errs = append(errs, n.Pause())
	}
	return errors.Join(errs...)
}

// Resume continues (SIGCONT) every spawned node.
func (r *Redis) Resume() error {
	if len(r.Nodes) == 0 {
		return fmt.Errorf("%w: cannot resume a Redis in mode %q", ErrNotOwned, r.Mode)
	}
	var errs []error
	for _, n := range r.Nodes {
		errs = append(errs, n.Resume())
	}
	return errors.Join(errs...)
}

// Close kills spawned servers and removes their directories, or terminates
// the container. A URL server is left alone. Later calls return nil.
func (r *Redis) Close() error {
	first := false
	r.closeOnce.Do(func() {
		first = true
		var errs []error
		for _, n := range append(append([]*Node(nil), r.Nodes...), r.Replicas...) {
			errs = append(errs, n.destroy())
		}
		if r.terminate != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			errs = append(errs, r.terminate(ctx))
			cancel()
		}
		r.closeErr = errors.Join(errs...)
	})
	if !first {
		return nil
	}
	return r.closeErr
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// tailFile returns up to max bytes of the end of path, or "" if unreadable.
func tailFile(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(buf, off)
	s := string(buf[:n])
	if off > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return strings.TrimRight(s, "\n")
}
