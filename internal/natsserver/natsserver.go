// Package natsserver runs NATS with JetStream in process: the embedded default of
// `engram dev` and `engram serve`, and of the evaluation. Only cmd, tests and eval
// import it, so the stage packages do not link the whole server.
package natsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Config configures an in-process NATS server with JetStream.
type Config struct {
	// StoreDir holds JetStream's file store. Required: streams must survive a restart.
	StoreDir string
	// Port for clients: 0 means 4222, -1 picks a free port.
	Port int
	// Host to listen on. Default 127.0.0.1: the dev server is not meant to be exposed.
	Host string
	// ServerName appears in server logs and advisories. Default "engram-embedded".
	ServerName string
	// Logger receives the server's log at notice level and above; nil silences it.
	Logger *slog.Logger
	// Command names the process in the store's server record (as "engram serve"),
	// for the error another process gets when it finds the store in use.
	Command string
}

// Server is a running in-process NATS server.
type Server struct {
	srv  *server.Server
	lock *storeLock
}

// Start starts a NATS server with JetStream enabled and waits until it accepts
// connections (or ctx ends). It holds the store's lock until Shutdown and records
// its address and pid beside the store (see Running); a store another process
// holds is a *LockedError naming that process.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("starting embedded NATS: StoreDir is required")
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o750); err != nil {
		return nil, fmt.Errorf("starting embedded NATS: creating store dir: %w", err)
	}
	lock, err := lockStore(cfg.StoreDir)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, cfg)
	if err != nil {
		lock.release()
		return nil, err
	}
	s.lock = lock
	if err := lock.record(Owner{PID: os.Getpid(), URL: s.ClientURL(), Command: cfg.Command, Started: time.Now().UTC()}); err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("starting embedded NATS: %w", err)
	}
	return s, nil
}

func start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = server.DEFAULT_PORT
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "engram-embedded"
	}
	if cfg.Port > 0 {
		// The server reports a taken port only by never becoming ready: say it at once.
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
		if err != nil {
			return nil, fmt.Errorf("starting embedded NATS: port %d is taken: %w", cfg.Port, err)
		}
		ln.Close()
	}
	opts := &server.Options{
		ServerName: cfg.ServerName,
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		NoSigs:     true, // the host process owns signal handling
		NoLog:      cfg.Logger == nil,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("starting embedded NATS: %w", err)
	}
	if cfg.Logger != nil {
		srv.SetLoggerV2(slogAdapter{cfg.Logger.With("component", "nats-server")}, false, false, false)
	}
	srv.Start()
	deadline := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		deadline = time.Until(d)
	}
	ready := make(chan bool, 1)
	go func() { ready <- srv.ReadyForConnections(deadline) }()
	select {
	case ok := <-ready:
		if !ok {
			srv.Shutdown()
			srv.WaitForShutdown()
			return nil, fmt.Errorf("starting embedded NATS on %s:%d: not ready after %s", cfg.Host, cfg.Port, deadline)
		}
	case <-ctx.Done():
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("starting embedded NATS: %w", ctx.Err())
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, errors.New("starting embedded NATS: JetStream did not start")
	}
	return &Server{srv: srv}, nil
}

// ClientURL is the nats:// URL clients connect to.
func (e *Server) ClientURL() string { return e.srv.ClientURL() }

// Port is the port the server listens on (useful after asking for a random one).
func (e *Server) Port() int {
	if a, ok := e.srv.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// Shutdown stops the server, waits until it has stopped and flushed its store, and
// releases the store.
func (e *Server) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
	if e.lock != nil {
		e.lock.release()
		e.lock = nil
	}
}

// slogAdapter routes the server's printf-style log into slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Noticef(format string, v ...any) { a.l.Info(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Warnf(format string, v ...any)   { a.l.Warn(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Fatalf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Errorf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Debugf(format string, v ...any)  { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Tracef(format string, v ...any)  { a.l.Debug(fmt.Sprintf(format, v...)) }
