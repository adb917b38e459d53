package main

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
)

// tcpProxy forwards a loopback port to a target. stop closes the listener and every
// open connection (a server going away); startAgain listens on the same port again.
type tcpProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// proxyURL starts a proxy to the host:port of a PostgreSQL URL and returns the URL
// through it.
func proxyURL(raw string) (*tcpProxy, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", err
	}
	p := &tcpProxy{target: u.Host, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	u.Host = p.addr
	return p, u.String(), nil
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
	if p.ln == nil { // stopped meanwhile
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

func (p *tcpProxy) stop() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

func (p *tcpProxy) startAgain() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return errors.Join(errors.New("reopening the proxy port"), err)
	}
	p.serve(ln)
	return nil
}
