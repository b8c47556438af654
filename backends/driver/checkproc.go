package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// checkProc is one driver process under `aebench drivers check`: its
// stdout read line by line into a channel, so a rule can wait for the
// line it expects with a deadline, and a driver that says nothing fails
// the rule rather than hanging the check.
type checkProc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	exited chan struct{} // closed once the process has exited
	mu     sync.Mutex
	stderr strings.Builder
}

// lockedWriter guards the stderr builder the exec package writes from its
// own goroutine.
type lockedWriter struct{ p *checkProc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.stderr.Len() < 64<<10 {
		w.p.stderr.Write(b)
	}
	return len(b), nil
}

// startCheckProc starts role with cfg; it does not read the hello.
func startCheckProc(ctx context.Context, spec Spec, cfg Config, role string) (*checkProc, error) {
	cfg.Role = role
	cmd, err := spec.Cmd(ctx, cfg)
	if err != nil {
		return nil, err
	}
	ownGroup(cmd)
	p := &checkProc{name: role, cmd: cmd, lines: make(chan []byte, 1024), exited: make(chan struct{})}
	cmd.Stderr = lockedWriter{p}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("driver %s: start %s: %w", spec.Name, role, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// next is the process's next stdout line, or false when none came within
// d or the process ended.
func (p *checkProc) next(d time.Duration) ([]byte, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-t.C:
		return nil, false
	}
}

// send writes one request line.
func (p *checkProc) send(req any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	_, err = p.stdin.Write(append(b, '\n'))
	return err
}

// stderrTail is the last line the process wrote to stderr, for errors.
func (p *checkProc) stderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stderr.Len() == 0 {
		return ""
	}
	return " (stderr: " + lastLine(p.stderr.String()) + ")"
}

// closeWithin closes stdin and waits up to d for the process to exit; a
// process still running is killed with its children.
func (p *checkProc) closeWithin(d time.Duration) bool {
	_ = p.stdin.Close()
	go func() { // keep its stdout flowing while it shuts down
		for range p.lines {
		}
	}()
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		killGroup(p.cmd)
		<-p.exited
		return false
	}
}

// kill ends the process and its children at once (SIGKILL).
func (p *checkProc) kill() {
	killGroup(p.cmd)
	go func() {
		for range p.lines {
		}
	}()
	<-p.exited
}

// checkReply is a client's reply line.
type checkReply struct {
	E      string       `json:"e"`
	Seq    *int64       `json:"seq"`
	Msg    string       `json:"msg"`
	States []checkState `json:"states"`
}

// checkStats is a stats reply; a field the driver left out stays nil.
type checkStats struct {
	Due       *int64 `json:"due"`
	Delayed   *int64 `json:"delayed"`
	Active    *int64 `json:"active"`
	Completed *int64 `json:"completed"`
	Dead      *int64 `json:"dead"`
}

// checkEvent is a worker's event line.
type checkEvent struct {
	E    string `json:"e"`
	ID   string `json:"id"`
	A    int    `json:"a"`
	T    int64  `json:"t"`
	H    int64  `json:"h"`
	S    int64  `json:"s"`
	Dead bool   `json:"dead"`
	RA   int64  `json:"ra"`
	Msg  string `json:"msg"`
}

type checkState struct {
	S string `json:"s"`
	R bool   `json:"r"`
	L string `json:"l"`
}
