package redisserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/aebench/aebench/rclient"
)

// redisURL is a parsed Options.URL.
type redisURL struct {
	addr     string
	username string
	password string
	db       int
	tls      *tls.Config
	tlsFiles rclient.TLSFiles
}

func (u redisURL) auth() rclient.Auth {
	return rclient.Auth{Username: u.username, Password: u.password, TLS: u.tls}
}

// parseURL accepts redis:// and rediss:// (TLS) URLs with an optional ACL
// user and password and a database number; a rediss:// URL takes the TLS
// options ca_file, cert_file and key_file (a client certificate),
// skip_verify and server_name as query parameters.
func parseURL(raw string) (redisURL, error) {
	bad := func(why string) error {
		return fmt.Errorf("redisserver: bad Redis URL %q: %s; want %s", redactURL(raw), why, urlForm)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return redisURL{}, bad(err.Error())
	}
	switch {
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return redisURL{}, bad("scheme must be redis or rediss (TLS)")
	case u.Opaque != "":
		return redisURL{}, bad("missing // after " + u.Scheme + ":")
	case u.Fragment != "":
		return redisURL{}, bad("fragments are not supported")
	case u.RawQuery != "" && u.Scheme == "redis":
		return redisURL{}, bad("query parameters are the TLS options of a rediss:// URL")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return redisURL{}, bad("missing host")
	}
	if port == "" {
		return redisURL{}, bad("missing port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return redisURL{}, bad(fmt.Sprintf("port %q is not a number in 1..65535", port))
	}
	var r redisURL
	r.addr = net.JoinHostPort(host, port)
	if u.User != nil {
		name := u.User.Username()
		pw, hasPw := u.User.Password()
		if !hasPw && name != "" {
			return redisURL{}, bad("user without password; write user:password@ (or :password@ for the default user)")
		}
		if name != "default" {
			r.username = name
		}
		r.password = pw
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return redisURL{}, bad(fmt.Sprintf("database %q is not a number >= 0", db))
		}
		r.db = n
	}
	if u.Scheme == "rediss" {
		if r.tls, r.tlsFiles, err = tlsConfig(u.Query(), host); err != nil {
			return redisURL{}, bad(err.Error())
		}
	}
	return r, nil
}

// tlsConfig builds the TLS configuration of a rediss:// URL from its
// query, and returns the options as given (for the drivers).
func tlsConfig(q url.Values, host string) (*tls.Config, rclient.TLSFiles, error) {
	var f rclient.TLSFiles
	for k := range q {
		switch k {
		case "ca_file", "cert_file", "key_file", "skip_verify", "server_name":
		default:
			return nil, f, fmt.Errorf("unknown TLS option %q; allowed: ca_file, cert_file, key_file, skip_verify, server_name", k)
		}
	}
	switch v := q.Get("skip_verify"); v {
	case "", "false":
	case "true":
		f.SkipVerify = true
	default:
		return nil, f, fmt.Errorf("skip_verify %q: allowed: true, false", v)
	}
	f.CA, f.Cert, f.Key, f.ServerName = q.Get("ca_file"), q.Get("cert_file"), q.Get("key_file"), q.Get("server_name")
	cfg, err := f.Config(host)
	if err != nil {
		return nil, f, err
	}
	f.ServerName = cfg.ServerName
	return cfg, f, nil
}

// redactURL hides a password in raw, even when raw does not parse.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPw := strings.Cut(rest[:at], ":")
	if !hasPw {
		return raw
	}
	return raw[:i+3] + user + ":xxxxx" + rest[at:]
}

// startURL probes an existing server once: a URL that does not answer fails
// at once rather than after StartTimeout.
func startURL(ctx context.Context, o Options) (*Redis, error) {
	u, err := parseURL(o.URL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	c := newClient(u.addr, u.auth(), 0)
	defer c.Close()
	shown := redactURL(o.URL)
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redisserver: Redis at %s (URL %s) does not answer PING: %w", u.addr, shown, err)
	}
	info, err := c.Info(ctx, "cluster").Result()
	if err != nil {
		return nil, fmt.Errorf("redisserver: INFO cluster at %s: %w", u.addr, err)
	}
	r := &Redis{Mode: ModeURL, Addrs: []string{u.addr}, Username: u.username, Password: u.password, DB: u.db, TLS: u.tls, TLSFiles: u.tlsFiles}
	r.Cluster = infoField(info, "cluster_enabled") == "1"
	if r.Cluster {
		if u.db != 0 {
			return nil, fmt.Errorf("redisserver: URL %s selects database %d but %s is a Redis Cluster, which has only database 0", shown, u.db, u.addr)
		}
		masters, err := clusterMasters(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("redisserver: CLUSTER SLOTS at %s: %w", u.addr, err)
		}
		for _, m := range masters {
			if m != u.addr {
				r.Addrs = append(r.Addrs, m)
			}
		}
	} else if u.db != 0 {
		if err := c.Do(ctx, "SELECT", u.db).Err(); err != nil {
			return nil, fmt.Errorf("redisserver: URL %s: SELECT %d: %w", shown, u.db, err)
		}
	}
	o.Logf("redisserver: using Redis at %s (cluster=%v)", u.addr, r.Cluster)
	return r, nil
}
