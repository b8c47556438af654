package runner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// jobStoreACL is what an ACL user needs for aebench's job stores and its
// cost meter: reads and writes of the queue's keys (ae:*), blocking
// claims, Functions (FUNCTION LOAD, FCALL), and INFO; nothing dangerous
// else (no FLUSHALL, CONFIG, KEYS, DEBUG).
var jobStoreACL = []string{"on", ">s3cr3t", "~ae:*", "resetchannels", "-@all", "+@read", "+@write", "+@blocking",
	"+@scripting", "+@connection", "+@keyspace", "+@transaction", "-@dangerous", "+info"}

// TestTLSAndACL runs a scenario against a spawned redis-server that speaks
// TLS (a CA, server and client certificates made here) as an ACL user with
// only jobStoreACL's rights, on both clients: every run passes its checks
// and the cost meter measures through the same TLS connection and user.
func TestTLSAndACL(t *testing.T) {
	dir := t.TempDir()
	u := startTLSRedis(t, dir, jobStoreACL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := scenario.ParseScenario("tls.yaml", []byte(fmt.Sprintf(`
name: tls-acl
duration: 1s
warmup: 300ms
drain: 10s
calibration: off
client: [go-redis, rueidis]
redis: {mode: url, url: %q}
backends: [zset, dual]
producers: {rate: 300, delayed: 0.2, delay: "uniform(50ms, 200ms)"}
workers: {count: 2, concurrency: 4, handler: 0, claim_wait: 200ms}
`, u)))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	outcome, err := Run(ctx, s, Options{OutDir: dir, Stdout: &out, GitDir: "..", NoPlots: true})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if len(outcome.Failed)+len(outcome.Errored) > 0 {
		t.Fatalf("failed %v, errored %v\n%s", outcome.Failed, outcome.Errored, out.String())
	}
	if strings.Contains(out.String(), "s3cr3t") {
		t.Error("the password shows in the output")
	}
	ur, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeURL, URL: u})
	if err != nil {
		t.Fatal(err)
	}
	defer ur.Close()
	rep := redisserver.Doctor(ctx, ur)
	checks := map[string]bool{}
	for _, c := range rep.Checks {
		checks[c.Name] = c.OK
	}
	if !rep.Runnable() || !rep.TLS || rep.User != "bench" || !checks["FUNCTION LOAD"] || checks["CONFIG GET"] {
		t.Errorf("doctor: %+v", rep)
	}
	clients := map[string]bool{}
	for _, rs := range outcome.Summary.Runs {
		if rs.Status != summary.StatusOK || rs.Ledger.Completed == 0 || rs.Cost == nil || rs.Cost.Commands == 0 {
			t.Errorf("%s: status %s, completed %d, cost %+v", rs.ID, rs.Status, rs.Ledger.Completed, rs.Cost)
		}
		clients[rs.Client] = true
	}
	if !clients[rclient.GoRedis] || !clients[rclient.Rueidis] {
		t.Errorf("clients run: %v", clients)
	}
}

// startTLSRedis spawns a redis-server that speaks TLS on a port of its own
// (a CA, server and client certificates made in dir), adds the ACL user
// bench (password s3cr3t) with the rules acl, and returns the rediss://
// URL that reaches it as that user with a client certificate. A
// redis-server without TLS fails the test; none at all skips it.
func startTLSRedis(t *testing.T, dir string, acl []string) string {
	t.Helper()
	files, err := writeTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	tlsPort := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn, ExtraArgs: []string{
		"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", files["server.crt"], "--tls-key-file", files["server.key"],
		"--tls-ca-cert-file", files["ca.crt"], "--tls-auth-clients", "optional"}})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no redis-server: %v", err)
	}
	if err != nil {
		t.Fatalf("redis-server with TLS: %v (a redis-server built without TLS cannot run this test)", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	admin, err := rclient.New(rclient.GoRedis, r.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Do(ctx, rclient.Command{Head: append([]string{"ACL", "SETUSER", "bench"}, acl...)}); err != nil {
		t.Fatal(err)
	}
	q := url.Values{"ca_file": {files["ca.crt"]}, "cert_file": {files["client.crt"]}, "key_file": {files["client.key"]}}
	return fmt.Sprintf("rediss://bench:s3cr3t@127.0.0.1:%d?%s", tlsPort, q.Encode())
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// writeTestPKI writes a CA and a server and a client certificate signed by
// it (ECDSA P-256, valid for an hour, the server's for 127.0.0.1) as PEM
// files in dir, and returns their paths by name.
func writeTestPKI(dir string) (map[string]string, error) {
	files := map[string]string{}
	write := func(name, typ string, der []byte) error {
		p := filepath.Join(dir, name)
		files[name] = p
		return os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
	}
	key := func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }
	caKey, err := key()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aebench test CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := write("ca.crt", "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	for i, name := range []string{"server", "client"} {
		k, err := key()
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: "aebench test " + name},
			NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		if err := write(name+".crt", "CERTIFICATE", der); err != nil {
			return nil, err
		}
		if err := write(name+".key", "EC PRIVATE KEY", kder); err != nil {
			return nil, err
		}
	}
	return files, nil
}
