package rediscost

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Overhead is traffic that the measurement itself put on Redis, in the
// server's own terms: commands by their commandstats name, and bytes as
// total_net_input_bytes (what the server read) and total_net_output_bytes
// (what it wrote) count them. INFO is never listed in Calls, because Diff
// drops INFO by name.
type Overhead struct {
	Calls         map[string]int64
	NetIn, NetOut int64
}

func (o Overhead) add(p Overhead) Overhead {
	out := Overhead{Calls: map[string]int64{}, NetIn: o.NetIn + p.NetIn, NetOut: o.NetOut + p.NetOut}
	for k, v := range o.Calls {
		out.Calls[k] += v
	}
	for k, v := range p.Calls {
		out.Calls[k] += v
	}
	return out
}

// meter counts what one measurement client sends and receives on the wire,
// so the measurement can subtract itself exactly, whatever handshake the
// client library performs (HELLO, AUTH, CLIENT SETINFO ... differ between
// go-redis versions and options). Bytes we write are bytes the server reads
// and vice versa; the command names come from parsing the RESP we write.
type meter struct {
	mu         sync.Mutex
	written    int64
	read       int64
	readAtInfo int64 // bytes read when the last INFO request was written
	calls      map[string]int64
	pending    []byte // written bytes not yet parsed into whole commands
}

func newMeter() *meter { return &meter{calls: map[string]int64{}} }

// snapshot returns the totals so far and the bytes read before the last INFO.
func (m *meter) snapshot() (o Overhead, readAtInfo int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o = Overhead{Calls: make(map[string]int64, len(m.calls)), NetIn: m.written, NetOut: m.read}
	for k, v := range m.calls {
		o.Calls[k] = v
	}
	return o, m.readAtInfo
}

func (m *meter) wrote(p []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.written += int64(len(p))
	m.pending = append(m.pending, p...)
	for {
		args, n, ok := parseCommand(m.pending)
		if !ok {
			break
		}
		m.pending = m.pending[n:]
		name := statName(args)
		if name == "info" {
			// Every reply before this request has been read: the client
			// waits for each handshake reply before sending INFO.
			m.readAtInfo = m.read
			continue
		}
		if name != "" {
			m.calls[name]++
		}
	}
	if len(m.pending) == 0 {
		m.pending = nil // drop the grown buffer between commands
	}
}

func (m *meter) gotRead(n int) {
	m.mu.Lock()
	m.read += int64(n)
	m.mu.Unlock()
}

// meteredConn is a net.Conn that reports its traffic to a meter.
type meteredConn struct {
	net.Conn
	m *meter
}

func (c *meteredConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.m.wrote(p[:n])
	}
	return n, err
}

func (c *meteredConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.m.gotRead(n)
	}
	return n, err
}

// parseCommand parses one RESP array of bulk strings (the only form go-redis
// writes) from the front of b. ok is false until a whole command is there.
// Malformed input is consumed whole and yields no arguments, so a meter can
// never stall on it.
func parseCommand(b []byte) (args []string, n int, ok bool) {
	if len(b) == 0 {
		return nil, 0, false
	}
	if b[0] != '*' {
		return nil, len(b), true
	}
	count, pos, good := readLen(b, 1)
	if !good {
		return nil, 0, false
	}
	if count < 0 {
		return nil, len(b), true
	}
	for range count {
		if pos >= len(b) {
			return nil, 0, false
		}
		if b[pos] != '$' {
			return nil, len(b), true
		}
		size, next, good := readLen(b, pos+1)
		if !good {
			return nil, 0, false
		}
		if size < 0 || next+size+2 > len(b) {
			if size < 0 {
				return nil, len(b), true
			}
			return nil, 0, false
		}
		// Only the first two arguments name a command; do not copy values.
		if len(args) < 2 {
			args = append(args, string(b[next:next+size]))
		} else {
			args = append(args, "")
		}
		pos = next + size + 2
	}
	return args, pos, true
}

// readLen reads the decimal after a RESP type byte up to CRLF. good is false
// when the CRLF has not arrived yet.
func readLen(b []byte, from int) (v, next int, good bool) {
	i := bytes.Index(b[from:], []byte("\r\n"))
	if i < 0 {
		return 0, 0, false
	}
	v, err := strconv.Atoi(string(b[from : from+i]))
	if err != nil {
		return -1, from + i + 2, true
	}
	return v, from + i + 2, true
}

// statName is the name commandstats files a command under: lower case, and
// "parent|sub" for the container commands of Redis 7.
func statName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	name := strings.ToLower(args[0])
	switch name {
	case "acl", "client", "cluster", "command", "config", "function", "latency", "memory",
		"module", "object", "pubsub", "script", "slowlog", "xinfo":
		if len(args) > 1 {
			return name + "|" + strings.ToLower(args[1])
		}
	}
	return name
}

// Timeouts for the measurement's own connections: a snapshot must not hang
// a run when a node is paused by fault injection, and a loopback Redis
// answers INFO in well under a millisecond when it is healthy.
const (
	dialTimeout = 2 * time.Second
	ioTimeout   = 5 * time.Second
)

// newClient returns a go-redis client for one node with a single connection
// whose traffic goes to m (nil: not metered). No retries: a retried INFO would be counted twice
// by the server and once by us. RESP2, so INFO comes back as a plain bulk
// string; no client identity and no maintenance notifications, to keep the
// handshake small (whatever remains is metered and subtracted anyway).
func newClient(addr string, auth rclient.Auth, m *meter) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:            addr,
		Username:        auth.Username,
		Password:        auth.Password,
		TLSConfig:       auth.TLS,
		Protocol:        2,
		DisableIdentity: true,
		PoolSize:        1,
		MaxRetries:      -1,
		DialTimeout:     dialTimeout,
		DialerRetries:   1, // a node that refuses is down: say so now, not after 5 tries

		ReadTimeout:           ioTimeout,
		WriteTimeout:          ioTimeout,
		ContextTimeoutEnabled: true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if auth.TLS != nil {
				// Redis counts the bytes TLS carries, decrypted: meter
				// above the TLS layer.
				cfg := auth.TLS.Clone()
				if cfg.ServerName == "" {
					cfg.ServerName, _, _ = net.SplitHostPort(addr)
				}
				tc := tls.Client(c, cfg)
				if err := tc.HandshakeContext(ctx); err != nil {
					c.Close()
					return nil, err
				}
				c = tc
			}
			if m == nil {
				return c, nil
			}
			return &meteredConn{Conn: c, m: m}, nil
		},
	})
}
