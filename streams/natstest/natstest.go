// Package natstest runs a real, in-process NATS server with JetStream for tests: a
// file store in t.TempDir, a random port, shut down when the test ends.
package natstest

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server is a JetStream server owned by one test.
type Server struct {
	mu       sync.Mutex
	srv      *server.Server
	storeDir string
	port     int
	conns    []*nats.Conn // made by Connect, waited for by Restart
}

// Start starts a JetStream server with a fresh file store on a random port. It is shut
// down when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{storeDir: t.TempDir(), port: server.RANDOM_PORT}
	s.start(t)
	t.Cleanup(s.shutdown)
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	opts := &server.Options{
		ServerName: "natstest",
		Host:       "127.0.0.1",
		Port:       s.port,
		JetStream:  true,
		StoreDir:   s.storeDir,
		NoLog:      true,
		NoSigs:     true,
		// Several test servers share the machine; keep their reservations modest.
		JetStreamMaxMemory: 256 << 20,
		JetStreamMaxStore:  1 << 30,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("natstest: creating server: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		t.Fatalf("natstest: server on port %d not ready", s.port)
	}
	// Pin the port so Restart comes back where clients reconnect.
	if a, ok := srv.Addr().(*net.TCPAddr); ok {
		s.port = a.Port
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
}

func (s *Server) shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// URL is the client URL; it stays the same across Restart.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return s.srv.ClientURL()
	}
	return "nats://127.0.0.1:" + strconv.Itoa(s.port)
}

// StoreDir is the JetStream store directory.
func (s *Server) StoreDir() string { return s.storeDir }

// Restart shuts the server down and starts it again on the same store and port, to
// test durability. It returns once every connection made with Connect has reconnected,
// so a request right after Restart is not written to the dead socket.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	conns := append([]*nats.Conn(nil), s.conns...)
	s.mu.Unlock()
	before := make([]uint64, len(conns))
	for i, nc := range conns {
		before[i] = nc.Stats().Reconnects
	}
	s.shutdown()
	s.start(t)
	deadline := time.Now().Add(10 * time.Second)
	for i, nc := range conns {
		for !nc.IsClosed() && (nc.Stats().Reconnects == before[i] || !nc.IsConnected()) {
			if time.Now().After(deadline) {
				t.Fatalf("natstest: connection did not reconnect after restart (status %v)", nc.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Connect opens a client connection (closed when t ends) that keeps reconnecting across
// Restart, and returns it with a JetStream context.
func (s *Server) Connect(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.URL(),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond),
		nats.RetryOnFailedConnect(true),
	)
	if err != nil {
		t.Fatalf("natstest: connecting: %v", err)
	}
	t.Cleanup(nc.Close)
	s.mu.Lock()
	s.conns = append(s.conns, nc)
	s.mu.Unlock()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: jetstream: %v", err)
	}
	return nc, js
}
