package redisserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stopTimeout bounds a graceful Stop before it falls back to SIGKILL.
const stopTimeout = 10 * time.Second

// errPortInUse marks a start that failed because the port was taken between
// choosing it and redis-server binding it.
var errPortInUse = errors.New("port already in use")

// Node is one redis-server process spawned by Start. Its port and directory
// stay the same across Kill, Stop and Restart.
type Node struct {
	port     int
	dir      string
	path     string  // redis-server binary
	o        Options // normalized
	cluster  bool
	password string
	peers    []*Node // every node of its cluster, itself included; nil when standalone
	masters  int     // how many of peers are masters (the rest are replicas)

	mu     sync.Mutex
	proc   *proc // current or last process; nil before the first start
	paused bool
	// link is the proxy a master's replicas replicate through (a cluster
	// with replicas); the master announces its port to the cluster.
	link *linkProxy
}

// announced is the address the cluster knows the node at: its link
// proxy's for a master with replicas, else its own.
func (n *Node) announced() string {
	if n.link != nil {
		return n.link.Addr()
	}
	return n.Addr()
}

// proc is one run of redis-server.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's result, written before done is closed
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// nodeDir makes a node's directory under os.TempDir()/aebench-redis,
// named for this process ("<pid>-<random>"), after removing the ones of
// processes that no longer run: a coordinator killed with SIGKILL never
// removes its own (its servers die with it, by Pdeathsig), so the next
// run reaps them.
func nodeDir() (string, error) {
	parent := filepath.Join(os.TempDir(), "aebench-redis")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	if entries, err := os.ReadDir(parent); err == nil {
		for _, e := range entries {
			pidText, _, ok := strings.Cut(e.Name(), "-")
			pid, err := strconv.Atoi(pidText)
			if ok && err == nil && pid != os.Getpid() && !processAlive(pid) {
				_ = os.RemoveAll(filepath.Join(parent, e.Name()))
			}
		}
	}
	return os.MkdirTemp(parent, strconv.Itoa(os.Getpid())+"-")
}

// newNode makes a node with a fresh temporary directory; it does not start it.
func newNode(o Options, path string, port int, cluster bool) (*Node, error) {
	dir, err := nodeDir()
	if err != nil {
		return nil, fmt.Errorf("redisserver: temp dir: %w", err)
	}
	n := &Node{port: port, dir: dir, path: path, o: o, cluster: cluster}
	for i, a := range o.ExtraArgs {
		if a == "--requirepass" && i+1 < len(o.ExtraArgs) {
			n.password = o.ExtraArgs[i+1]
		}
	}
	return n, nil
}

// Addr is 127.0.0.1:port.
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

// Port is the node's TCP port.
func (n *Node) Port() int { return n.port }

// Dir is the node's data directory (redis.log, AOF, nodes.conf).
func (n *Node) Dir() string { return n.dir }

// PID is the process id, or 0 when the node is not running.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.live(); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// Running reports whether the process is alive (a paused node is alive).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.live() != nil
}

// Paused reports whether the node was paused and not resumed since.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.live() != nil && n.paused
}

// live returns the running process or nil. n.mu must be held.
func (n *Node) live() *proc {
	if n.proc == nil || n.proc.exited() {
		return nil
	}
	return n.proc
}

func (n *Node) notRunning(op string) error {
	return fmt.Errorf("redisserver: %s node %s: not running", op, n.Addr())
}

// Pause stops the process with SIGSTOP: connections stay open, nothing is
// answered until Resume.
func (n *Node) Pause() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.live()
	if p == nil {
		return n.notRunning("pause")
	}
	if err := sigStop(p.cmd.Process); err != nil {
		return fmt.Errorf("redisserver: pause node %s: %w", n.Addr(), err)
	}
	n.paused = true
	return nil
}

// Resume continues a paused process with SIGCONT.
func (n *Node) Resume() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.live()
	if p == nil {
		return n.notRunning("resume")
	}
	if err := sigCont(p.cmd.Process); err != nil {
		return fmt.Errorf("redisserver: resume node %s: %w", n.Addr(), err)
	}
	n.paused = false
	return nil
}

// Kill sends SIGKILL and waits for the process to exit: a crash, nothing
// flushed. Killing a node that is not running is a no-op.
func (n *Node) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.killLocked()
}

func (n *Node) killLocked() error {
	p := n.live()
	if p == nil {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("redisserver: kill node %s: %w", n.Addr(), err)
	}
	<-p.done
	n.paused = false
	n.o.Logf("redisserver: killed redis-server %s", n.Addr())
	return nil
}

// Stop shuts the node down gracefully with SIGTERM, which Redis handles like
// SHUTDOWN (the AOF is flushed; with the default --save "" no RDB is
// written), and waits; after 10s it falls back to SIGKILL. A paused node is
// resumed first. Stopping a node that is not running is a no-op.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.live()
	if p == nil {
		return nil
	}
	if err := sigTerm(p.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("redisserver: stop node %s: %w", n.Addr(), err)
	}
	if n.paused {
		if err := sigCont(p.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("redisserver: stop node %s: resume: %w", n.Addr(), err)
		}
	}
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-p.done:
		n.paused = false
		n.o.Logf("redisserver: stopped redis-server %s", n.Addr())
		return nil
	case <-t.C:
		n.o.Logf("redisserver: redis-server %s ignored SIGTERM for %v; killing", n.Addr(), stopTimeout)
		return n.killLocked()
	}
}

// Restart starts the node again on the same port and directory, stopping it
// first if it is running. With AppendOnly, data written (and fsynced) before
// a Kill survives. A cluster node rejoins from the nodes.conf in its
// directory; when all its peers are running and not paused, Restart also
// waits until every node reports cluster_state:ok again.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Stop(); err != nil {
		return err
	}
	if err := n.start(ctx); err != nil {
		return err
	}
	if !n.cluster {
		return nil
	}
	for _, p := range n.peers {
		if !p.Running() || p.Paused() {
			n.o.Logf("redisserver: restarted %s; not waiting for cluster_state:ok since %s is down or paused", n.Addr(), p.Addr())
			return nil
		}
	}
	wctx, cancel := context.WithTimeout(ctx, n.o.StartTimeout)
	defer cancel()
	if err := waitClusterOK(wctx, n.peers, n.masters); err != nil {
		return fmt.Errorf("redisserver: restart node %s: rejoin: %w", n.Addr(), err)
	}
	return nil
}

// destroy kills the node and removes its directory.
func (n *Node) destroy() error {
	err := n.Kill()
	if n.link != nil {
		err = errors.Join(err, n.link.Close())
	}
	if rmErr := os.RemoveAll(n.dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("redisserver: remove %s: %w", n.dir, rmErr))
	}
	return err
}

func (n *Node) logPath() string   { return filepath.Join(n.dir, "redis.log") }
func (n *Node) stdioPath() string { return filepath.Join(n.dir, "stdio.log") }

// CallgrindOut is the --callgrind-out-file of a node run under callgrind
// (Options.Callgrind); its dumps are this path with .1, .2, ... appended.
func (n *Node) CallgrindOut() string { return filepath.Join(n.dir, "callgrind.out") }

// args is the redis-server command line.
func (n *Node) args() []string {
	a := []string{
		"--port", strconv.Itoa(n.port),
		"--bind", "127.0.0.1",
		"--dir", n.dir,
		"--daemonize", "no",
		"--logfile", n.logPath(),
		"--protected-mode", "no",
		"--save", "",
	}
	if n.o.AppendOnly {
		a = append(a, "--appendonly", "yes", "--appendfsync", n.o.AppendFsync)
	} else {
		a = append(a, "--appendonly", "no")
	}
	if n.cluster {
		a = append(a,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000")
		if n.link != nil {
			a = append(a, "--cluster-announce-port", strconv.Itoa(n.link.Port()))
		}
	}
	return append(a, n.o.ExtraArgs...)
}

// startFresh starts a new node, choosing another port when its port was
// taken meanwhile.
func (n *Node) startFresh(ctx context.Context) error {
	const attempts = 5
	for i := 1; ; i++ {
		err := n.start(ctx)
		if err == nil || !errors.Is(err, errPortInUse) || i == attempts {
			return err
		}
		ports, perr := reservePorts(1, n.cluster)
		if perr != nil {
			return errors.Join(err, perr)
		}
		n.o.Logf("redisserver: port %d taken, retrying on %d", n.port, ports[0])
		n.port = ports[0]
		_ = os.Remove(n.logPath())
		_ = os.Remove(n.stdioPath())
	}
}

// start launches redis-server and waits until it answers PING.
func (n *Node) start(ctx context.Context) error {
	n.mu.Lock()
	if p := n.live(); p != nil {
		n.mu.Unlock()
		return fmt.Errorf("redisserver: start node %s: already running (pid %d)", n.Addr(), p.cmd.Process.Pid)
	}
	stdio, err := os.OpenFile(n.stdioPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("redisserver: start node %s: %w", n.Addr(), err)
	}
	args := n.args()
	cmd := exec.Command(n.path, args...)
	if n.o.Callgrind {
		cmd = exec.Command("valgrind", append([]string{"--tool=callgrind", "--instr-atstart=no",
			"--callgrind-out-file=" + n.CallgrindOut(), n.path}, args...)...)
	}
	cmd.Dir = n.dir
	cmd.Stdout, cmd.Stderr = stdio, stdio
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	_ = stdio.Close() // the child holds its own descriptor
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("redisserver: start redis-server %q: %w", n.path, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	n.proc, n.paused = p, false
	n.mu.Unlock()
	n.o.Logf("redisserver: started %s %s (pid %d)", n.path, strings.Join(displayArgs(args), " "), cmd.Process.Pid)

	if err := n.waitReady(ctx, p); err != nil {
		if kerr := p.cmd.Process.Kill(); kerr == nil || errors.Is(kerr, os.ErrProcessDone) {
			<-p.done
		}
		return err
	}
	return nil
}

// waitReady polls PING until it is answered, the process exits or the
// start timeout passes.
func (n *Node) waitReady(ctx context.Context, p *proc) error {
	tctx, cancel := context.WithTimeout(ctx, n.o.StartTimeout)
	defer cancel()
	// An exit also ends a PING in flight: if the port was taken, that PING
	// may be talking to whoever holds it.
	pctx, cancelPing := context.WithCancel(tctx)
	defer cancelPing()
	go func() {
		select {
		case <-p.done:
			cancelPing()
		case <-pctx.Done():
		}
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := pingRaw(pctx, n.Addr(), n.password, p.cmd.Process.Pid)
		if err == nil && !p.exited() {
			return nil
		}
		select {
		case <-pctx.Done():
		case <-tick.C:
			continue
		}
		if p.exited() {
			return n.startErr(fmt.Sprintf("exited during startup (%v)", p.err))
		}
		return n.startErr(fmt.Sprintf("did not answer PING within %v (%v; last: %v)", n.o.StartTimeout, tctx.Err(), err))
	}
}

// startErr describes a failed start with the tails of the node's logs.
func (n *Node) startErr(what string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "redisserver: redis-server %s (dir %s) %s", n.Addr(), n.dir, what)
	logs := ""
	for _, f := range []string{n.logPath(), n.stdioPath()} {
		if t := tailFile(f, 2048); t != "" {
			fmt.Fprintf(&b, "\n--- tail of %s ---\n%s", f, t)
			logs += t
		}
	}
	if strings.Contains(logs, "Address already in use") {
		return fmt.Errorf("%s: %w", b.String(), errPortInUse)
	}
	return errors.New(b.String())
}

// displayArgs shows empty arguments as "" and hides passwords, for logs.
func displayArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && (args[i-1] == "--requirepass" || args[i-1] == "--masterauth"):
			a = "xxxxx"
		case a == "":
			a = `""`
		}
		out[i] = a
	}
	return out
}

// reservePorts returns n distinct free loopback ports, never 6379. With bus,
// port+10000 (the cluster bus) is free too. All listeners are held until
// every port is chosen so the kernel cannot hand one out twice.
func reservePorts(n int, bus bool) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries >= 20*n+20 {
			return nil, fmt.Errorf("redisserver: could not find %d free loopback ports (cluster bus: %v)", n, bus)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("redisserver: listen on 127.0.0.1:0: %w", err)
		}
		held = append(held, l)
		p := l.Addr().(*net.TCPAddr).Port
		if p == 6379 || p == 16379 {
			continue
		}
		if bus {
			if p+10000 > 65535 {
				continue
			}
			lb, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
			if err != nil {
				continue
			}
			held = append(held, lb)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// spawnStandalone starts one private redis-server, on port if it is not 0
// (another is chosen if port turns out to be taken).
func spawnStandalone(ctx context.Context, o Options, path string, port int) (*Redis, error) {
	if port == 0 {
		ports, err := reservePorts(1, false)
		if err != nil {
			return nil, err
		}
		port = ports[0]
	}
	n, err := newNode(o, path, port, false)
	if err != nil {
		return nil, err
	}
	if err := n.startFresh(ctx); err != nil {
		return nil, errors.Join(err, n.destroy())
	}
	return &Redis{
		Mode:     ModeSpawn,
		Addrs:    []string{n.Addr()},
		Password: n.password,
		Nodes:    []*Node{n},
	}, nil
}

// pingRaw dials addr, authenticates if asked, and expects +PONG. With pid
// > 0 it also checks INFO server's process_id, so a server of someone else
// that took the port is not mistaken for ours. It speaks RESP itself so that
// readiness polling never meets a client library's reconnect back-off.
func pingRaw(ctx context.Context, addr, password string, pid int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var req []byte
	if password != "" {
		req = appendCommand(req, "AUTH", password)
	}
	req = appendCommand(req, "PING")
	if pid > 0 {
		req = appendCommand(req, "INFO", "server")
	}
	if _, err := conn.Write(req); err != nil {
		return err
	}
	br := bufio.NewReader(conn)
	if password != "" {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "-") {
			return fmt.Errorf("AUTH: %s", strings.TrimSpace(line[1:]))
		}
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	if pid <= 0 {
		return nil
	}
	line, err = br.ReadString('\n')
	if err != nil {
		return err
	}
	size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
	if !strings.HasPrefix(line, "$") || err != nil || size < 0 {
		return fmt.Errorf("INFO server answered %q", strings.TrimSpace(line))
	}
	body := make([]byte, size+2)
	if _, err := io.ReadFull(br, body); err != nil {
		return err
	}
	if got := infoField(string(body), "process_id"); got != strconv.Itoa(pid) {
		return fmt.Errorf("%s is answered by process %s, not by ours (%d)", addr, got, pid)
	}
	return nil
}

// appendCommand appends one RESP array of bulk strings.
func appendCommand(b []byte, args ...string) []byte {
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}
