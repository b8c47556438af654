// Package rclient holds the one narrow interface through which backends reach
// Redis, and its two adapters: go-redis v9 (NewGoRedis) and rueidis
// (NewRueidis). A store is built on either, so a number can be compared across
// client libraries without touching backend code.
//
// Replies are normalised to plain Go values so backends never see a client
// library's types:
//
//	nil reply          -> nil (never an error)
//	integer            -> int64
//	simple/bulk string -> string
//	double             -> float64
//	boolean            -> bool
//	array / set        -> []any
//	map                -> map[string]any
//	error reply        -> error (wrapping *RedisError)
//
// Both adapters speak RESP3, the only protocol with maps, doubles and
// booleans, so one command gives the same Go value from either: HGETALL a
// map, ZRANGE WITHSCORES pairs of [member, score]. Verbatim strings and big
// numbers become strings; an error reply nested in an array or map (a
// script's table, an EXEC) stays in place as a *RedisError value. Network and
// context errors are wrapped, never *RedisError; once the context deadline
// has passed they also wrap context.DeadlineExceeded.
package rclient

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"
)

// Command is one Redis command split so that a cluster client can route it by
// its keys without parsing: the command is Head, then Keys, then Args, in that
// order on the wire. All keys of one command must hash to one slot.
type Command struct {
	Head []string // command name and any arguments before the first key
	Keys []string
	Args []string
}

// Cmd builds a Command with one key: Cmd("ZADD", key, "1", "a").
func Cmd(name, key string, args ...string) Command {
	return Command{Head: []string{name}, Keys: []string{key}, Args: args}
}

// Result is one reply of DoMulti.
type Result struct {
	Val any
	Err error
}

// Client is what a backend needs of Redis. Implementations are safe for
// concurrent use.
type Client interface {
	// Do runs one non-blocking command.
	Do(ctx context.Context, c Command) (any, error)
	// DoBlocking runs a command that may block in Redis (XREADGROUP BLOCK,
	// BZPOPMIN...) on a connection of its own, so it never stalls pipelined
	// traffic. The context bounds the wait.
	DoBlocking(ctx context.Context, c Command) (any, error)
	// DoMulti sends commands in one round trip where the topology allows
	// (on a cluster, commands are grouped per node) and returns one Result
	// per command, in order.
	DoMulti(ctx context.Context, cs ...Command) []Result
	// Run runs a script by EVALSHA, falling back to EVAL when the server does
	// not have it (a restarted Redis, a new cluster node). All keys must hash to one slot.
	Run(ctx context.Context, s *Script, keys []string, args []string) (any, error)
	// Load loads s on every master, so later Runs need no fallback.
	Load(ctx context.Context, s *Script) error
	// Call runs function fn of library l by FCALL, loading l on every
	// master and trying once more when the server does not have it (a
	// restarted Redis, a new cluster node). All keys must hash to one slot.
	Call(ctx context.Context, l *Library, fn string, keys []string, args []string) (any, error)
	// LoadLibrary loads l (FUNCTION LOAD REPLACE) on every master, so later
	// Calls need no fallback. Redis before 7.0 refuses it: the error then
	// wraps a *RedisError about an unknown command.
	LoadLibrary(ctx context.Context, l *Library) error
	// Name is the client library: "go-redis" or "rueidis".
	Name() string
	// Close closes the connections the adapter opened.
	Close() error
}

// Script is a Lua script with its SHA1, computed once.
type Script struct {
	Name string // for errors and reports
	Src  string
	SHA  string
}

// NewScript computes src's SHA1.
func NewScript(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{Name: name, Src: src, SHA: hex.EncodeToString(sum[:])}
}

// Library is a Redis 7 function library: Src starts with the shebang
// "#!lua name=<Name>" and registers its functions with
// redis.register_function. A library is loaded once per server and its
// functions are called by name, so a large shared prelude costs nothing per
// call, unlike a script's source, which Redis sets up on every EVALSHA.
type Library struct {
	Name string
	Src  string
}

// RedisError is an error reply from Redis (as opposed to a network error).
// Msg is the reply as Redis sent it, without the leading '-': "ERR ...",
// "WRONGTYPE ...", "NOSCRIPT ...", or a script's redis.error_reply text
// (Redis 7.0 puts "ERR " before a one-word one, so match codes with
// strings.Contains or give them a message: "LEASE_LOST job 7").
type RedisError struct{ Msg string }

func (e *RedisError) Error() string { return "redis: " + e.Msg }

// Options configure an adapter.
type Options struct {
	// Addrs are host:port of one server, or of any cluster nodes when Cluster is set.
	Addrs   []string
	Cluster bool
	// Username is an ACL user ("": the default user), Password its
	// password, DB the database (ignored on a cluster).
	Username string
	Password string
	DB       int
	// TLS, when set, connects over TLS with this configuration (rediss://).
	TLS *tls.Config
	// TLSFiles are the files and settings TLS was built from (a rediss://
	// URL's options), for the programs in other languages that connect on
	// their own (the job-system drivers): a tls.Config cannot be handed on.
	TLSFiles TLSFiles
	// DialTimeout bounds connecting; default 2s. Every call is also
	// bounded by its context deadline.
	DialTimeout time.Duration
	// PoolSize is connections per node for go-redis; 0 = the library's default.
	PoolSize int
	// AddrMap redirects dials: a node the cluster announces at a key's
	// address is dialed at its value instead. A spawned cluster whose
	// masters announce a replication proxy (redisserver's
	// ReplicationLinks) maps each proxy to its master, so clients reach
	// the master directly while its replicas go through the proxy.
	AddrMap map[string]string
}

// TLSFiles are the TLS options of a rediss:// URL as given: the CA, a
// client certificate and its key (paths), the server name, and whether
// the server's certificate goes unverified.
type TLSFiles struct {
	CA         string `json:"ca_file,omitempty"`
	Cert       string `json:"cert_file,omitempty"`
	Key        string `json:"key_file,omitempty"`
	ServerName string `json:"server_name,omitempty"`
	SkipVerify bool   `json:"skip_verify,omitempty"`
}

// Config builds the TLS configuration f describes for a server at host
// (its name to verify, unless f names another): the CA as the only roots,
// the client certificate, TLS 1.2 at least.
func (f TLSFiles) Config(host string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if f.ServerName != "" {
		cfg.ServerName = f.ServerName
	}
	cfg.InsecureSkipVerify = f.SkipVerify // #nosec G402: the user asked for it by name
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s: no PEM certificate in it", f.CA)
		}
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, errors.New("cert_file and key_file go together (a client certificate and its key)")
	}
	if f.Cert != "" {
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("cert_file/key_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// Auth is how to authenticate to a server and reach it: an ACL user (or
// the default one), a password, TLS. The cost meter and the probes use it
// beside the clients.
type Auth struct {
	Username, Password string
	TLS                *tls.Config
}

// Auth returns o's authentication.
func (o Options) Auth() Auth { return Auth{Username: o.Username, Password: o.Password, TLS: o.TLS} }

// dialAddr is addr after AddrMap.
func (o Options) dialAddr(addr string) string {
	if m, ok := o.AddrMap[addr]; ok {
		return m
	}
	return addr
}

// Configured is implemented by the Clients New returns: Options gives back
// the options the client was built from, so a library that must open its own
// connections (a peer job queue with a client of its own) reaches the same
// server with the same password.
type Configured interface {
	Options() Options
}

// OptionsOf returns the options c was built from: c's own when it
// implements Configured, else those of the client it wraps when it has an
// Unwrap() Client method (a fault-injecting wrapper), and false when neither.
func OptionsOf(c Client) (Options, bool) {
	for c != nil {
		if k, ok := c.(Configured); ok {
			return k.Options(), true
		}
		u, ok := c.(interface{ Unwrap() Client })
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	return Options{}, false
}
