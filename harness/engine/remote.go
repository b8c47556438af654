package engine

// This file is the coordinator's side of remote workers (workers.remote):
// it listens on workers.listen, hands each worker that connects its
// ProcessConfig as the first line, and reads its events and histograms
// like a worker process's (procPool.read). A connection that ends before
// the run's stop is a worker_lost fault: what the worker held is settled
// from Redis like a killed process's, and lease recovery takes the rest
// back, so the ledger survives it.

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/workerproc"
)

// RemoteWait bounds how long a run waits for its remote workers.
const RemoteWait = 60 * time.Second

// remoteSide is the listener and the workers aebench started itself
// (workers.remote_hosts).
type remoteSide struct {
	ln       net.Listener
	spawned  []*exec.Cmd
	stopping atomic.Bool
}

// startRemote listens, starts the workers of workers.remote_hosts, and
// accepts workers.remote connections within RemoteWait.
func (p *procPool) startRemote() error {
	wc := p.setup.Config.Workers
	if wc.Remote == 0 {
		return nil
	}
	listen := wc.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("workers.listen %s: %w", listen, err)
	}
	p.remote.ln = ln
	addr := ln.Addr().String()
	if p.setup.Logf != nil {
		p.setup.Logf("waiting up to %v for %d remote workers: aebench worker --coordinator %s", RemoteWait, wc.Remote, addr)
	}
	if wc.RemoteHosts != "" {
		for _, h := range strings.Split(wc.RemoteHosts, ",") {
			cmd, err := workerproc.SpawnRemote(p.exe, addr, strings.TrimSpace(h))
			if err != nil {
				return err
			}
			p.remote.spawned = append(p.remote.spawned, cmd)
		}
	}
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(RemoteWait))
	for i := range wc.Remote {
		conn, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("remote workers: %d of %d connected to %s within %v: %w", i, wc.Remote, addr, RemoteWait, err)
		}
		if err := p.acceptRemote(conn, i); err != nil {
			return err
		}
	}
	return nil
}

// acceptRemote gives the i-th remote worker its configuration and waits
// until it has built its store.
func (p *procPool) acceptRemote(conn net.Conn, i int) error {
	cfg := p.setup.Config
	idx := cfg.Workers.InProcess() + i
	host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	proc, err := workerproc.Remote("w"+strconv.Itoa(idx)+"@"+host, conn, p.processConfig(idx, 0))
	if err != nil {
		return err
	}
	wp := newWorkerProc(proc, cfg.Workers.Processes+i, 0)
	ready := p.serve(wp, conn, func() { _ = conn.Close() })
	select {
	case <-ready:
	case <-wp.eof:
		return fmt.Errorf("remote worker %s hung up at start (its stderr has why)", wp.ID)
	case <-time.After(15 * time.Second):
		_ = conn.Close()
		return fmt.Errorf("remote worker %s did not start within 15s", wp.ID)
	}
	p.mu.Lock()
	p.procs[wp.slot] = wp
	p.mu.Unlock()
	return nil
}

// lost accounts for a remote worker whose connection ended before the
// run's stop: a worker_lost fault on its jobs in flight.
func (p *procPool) lost(wp *workerProc) {
	p.mu.Lock()
	if p.procs[wp.slot] == wp {
		delete(p.procs, wp.slot)
	}
	p.mu.Unlock()
	if p.e.ft == nil {
		return
	}
	ev := faults.Event{Fault: faults.Fault{Kind: faults.WorkerLost}, Point: faults.Random, Worker: -1}
	p.settleKilled(wp, ev, time.Now())
}

// stopRemote closes the listener and waits for the workers aebench
// started (killing one still there after 5s).
func (p *procPool) stopRemote() {
	if p.remote.ln != nil {
		_ = p.remote.ln.Close()
	}
	var errs []error
	for _, cmd := range p.remote.spawned {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			errs = append(errs, err)
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			errs = append(errs, <-done)
		}
	}
	p.remote.spawned = nil
	if err := errors.Join(errs...); err != nil && p.setup.Logf != nil {
		p.setup.Logf("remote workers aebench started: %v", err)
	}
}
