// Package tcpproxy is a loopback TCP proxy that can be cut and restored, to play a
// dependency outage against real servers.
package tcpproxy

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
)

// Proxy forwards a loopback port to a target address. Cut closes the listener and
// every open connection, as a restarting server does (new connections are refused, open
// ones break); Restore listens on the same port again. The chaos benchmark and the
// outage tests cut PostgreSQL with it without stopping the shared server.
type Proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// New starts a proxy on a free loopback port to target (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the proxy to %s: %w", target, err)
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

func (p *Proxy) serve(ln net.Listener) {
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

func (p *Proxy) pipe(c net.Conn) {
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

// Cut stops forwarding: the listener and every open connection are closed.
func (p *Proxy) Cut() {
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

// Restore listens on the proxy's port again.
func (p *Proxy) Restore() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("reopening the proxy port %s: %w", p.addr, err)
	}
	p.serve(ln)
	return nil
}

// Close cuts the proxy for good and waits for its goroutines.
func (p *Proxy) Close() {
	p.Cut()
	p.wg.Wait()
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// URL starts a proxy to the host:port of a URL (a PostgreSQL URL, say) and returns the
// same URL through the proxy.
func URL(raw string) (*Proxy, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("parsing the URL to proxy: %w", err)
	}
	p, err := New(u.Host)
	if err != nil {
		return nil, "", err
	}
	u.Host = p.addr
	return p, u.String(), nil
}
