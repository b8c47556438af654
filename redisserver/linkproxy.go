package redisserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// linkProxy is a TCP forwarder on a free loopback port in front of one
// master, through which that master's replicas replicate (the master
// announces the proxy's port to the cluster, see Options.ReplicationLinks).
// Cut drops every connection through it and refuses new ones until Heal,
// so a partition between a master and its replicas can be made on one
// machine while clients, which dial the master directly, still reach it.
type linkProxy struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newLinkProxy(upstream string) (*linkProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("redisserver: link proxy: %w", err)
	}
	p := &linkProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's 127.0.0.1:port.
func (p *linkProxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *linkProxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *linkProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.mu.Unlock()
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !p.track(c, up) {
			continue
		}
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// track registers both ends, or closes them when the link was cut meanwhile.
func (p *linkProxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		_, _ = a.Close(), b.Close()
		return false
	}
	p.conns[a], p.conns[b] = struct{}{}, struct{}{}
	return true
}

func (p *linkProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_, _ = dst.Close(), src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut drops every connection through the proxy and refuses new ones.
func (p *linkProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// Heal lets connections through again (replicas reconnect on their own).
func (p *linkProxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Close stops the proxy and waits for its goroutines.
func (p *linkProxy) Close() error {
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
