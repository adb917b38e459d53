package bench

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// tcpProxy forwards a loopback port to a target address. cut closes the listener and
// every open connection, as a restarting server does (new connections are refused, open
// ones break); restore listens on the same port again.
type tcpProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newTCPProxy(target string) (*tcpProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the proxy to %s: %w", target, err)
	}
	p := &tcpProxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.pipe(c) })
		}
	})
}

func (p *tcpProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(up, c); up.Close() })
	wg.Go(func() { _, _ = io.Copy(c, up); c.Close() })
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// cut stops forwarding: the listener and every open connection are closed.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// restore listens on the proxy's port again.
func (p *tcpProxy) restore() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("reopening the proxy port %s: %w", p.addr, err)
	}
	p.serve(ln)
	return nil
}

// close cuts the proxy for good and waits for its goroutines.
func (p *tcpProxy) close() {
	p.cut()
	p.wg.Wait()
}
