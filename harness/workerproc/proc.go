package workerproc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/aebench/aebench/procio"
)

// Proc is one worker at the coordinator's end: a process it started
// (Cmd), or a remote worker's connection (Conn).
type Proc struct {
	ID    string
	Cmd   *exec.Cmd // nil for a remote worker
	Conn  net.Conn  // a remote worker's connection
	stdin io.WriteCloser
	// stderr holds what a started process wrote to stderr, for errors.
	stderr procio.Capture
}

// Command is the `aebench worker` process (exe, this binary) of pc.
func Command(exe string, pc ProcessConfig) (*exec.Cmd, error) {
	data, err := json.Marshal(pc)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "worker")
	cmd.Env = append(os.Environ(), WorkerEnv+"=1", WorkerConfigEnv+"="+string(data))
	return cmd, nil
}

// Start starts cmd as worker id: in a process group of its own that dies
// with the coordinator, its stdin a pipe for commands and its stderr kept.
// It returns the worker and its events, read in batches (the events carry
// their own times: procio.PacedReader).
func Start(id string, cmd *exec.Cmd) (*Proc, io.Reader, func(), error) {
	p := &Proc{ID: id}
	cmd.SysProcAttr = procAttr()
	cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	out, err := procio.Start(cmd)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start worker process %s: %w", cmd.Path, err)
	}
	p.Cmd = cmd
	ended := func() { _ = cmd.Wait(); _ = out.Close() }
	return p, &procio.PacedReader{R: out, Pace: time.Millisecond}, ended, nil
}

// Remote is the worker at the other end of conn, given its configuration
// as the first line.
func Remote(id string, conn net.Conn, pc ProcessConfig) (*Proc, error) {
	data, err := json.Marshal(pc)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write(append(data, '\n')); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("remote worker %s: %w", id, err)
	}
	return &Proc{ID: id, Conn: conn}, nil
}

// Stderr is what a started process wrote to stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

// Local says the worker is a process of this machine, which a kill reaches.
func (p *Proc) Local() bool { return p.Cmd != nil }

// Arm tells the worker to stop at a crash point and announce it.
func (p *Proc) Arm(point string) error {
	_, err := io.WriteString(p.stdin, "arm "+point+"\n")
	return err
}

// HangUp tells a worker the run is over: it finishes what it holds, sends
// its last events and exits.
func (p *Proc) HangUp() {
	if tc, ok := p.Conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
}

// Kill ends a worker: SIGKILL of its process group (a driver's worker
// forks: RQ's work horses and scheduler would outlive a kill of the driver
// alone, holding jobs and the events pipe), or for a remote one the
// connection cut.
func (p *Proc) Kill() error {
	if p.Cmd != nil {
		return killGroup(p.Cmd.Process)
	}
	return p.Conn.Close()
}

// SpawnRemote starts, from local address host, a worker that connects to
// the coordinator at addr like `aebench worker --coordinator` (for
// workers.remote_hosts).
func SpawnRemote(exe, addr, host string) (*exec.Cmd, error) {
	cmd := exec.Command(exe, "worker")
	cmd.Env = append(os.Environ(), WorkerEnv+"=1", WorkerCoordinatorEnv+"="+addr, WorkerBindEnv+"="+host)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start remote worker from %s: %w", host, err)
	}
	return cmd, nil
}

// ConfigFromEnv is a started worker process's configuration.
func ConfigFromEnv() (ProcessConfig, error) {
	var pc ProcessConfig
	if err := json.Unmarshal([]byte(os.Getenv(WorkerConfigEnv)), &pc); err != nil {
		return pc, fmt.Errorf("$%s: %w", WorkerConfigEnv, err)
	}
	return pc, nil
}

// Dial connects a remote worker to its coordinator (from local address
// bind when not nil) and reads its configuration: the connection, and a
// reader of the coordinator's commands after that first line.
func Dial(ctx context.Context, coordinator string, bind net.IP) (net.Conn, io.Reader, ProcessConfig, error) {
	var pc ProcessConfig
	d := net.Dialer{Timeout: 10 * time.Second}
	if bind != nil {
		d.LocalAddr = &net.TCPAddr{IP: bind}
	}
	conn, err := d.DialContext(ctx, "tcp", coordinator)
	if err != nil {
		return nil, nil, pc, fmt.Errorf("--coordinator %s: %w", coordinator, err)
	}
	br := bufio.NewReader(conn)
	line, err := br.ReadBytes('\n')
	if err != nil {
		_ = conn.Close()
		return nil, nil, pc, fmt.Errorf("%s: reading the configuration: %w", coordinator, err)
	}
	if err := json.Unmarshal(line, &pc); err != nil {
		_ = conn.Close()
		return nil, nil, pc, fmt.Errorf("%s: configuration: %w", coordinator, err)
	}
	return conn, br, pc, nil
}
