package natsserver_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/natsserver"
)

// TestOneServerPerStore: while a server runs on a store, a second Start on it fails
// with an error naming the holder, and Running gives the holder's address; once it
// stops, the store is free again.
func TestOneServerPerStore(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	if _, ok, err := natsserver.Running(ctx, dir); err != nil || ok {
		t.Fatalf("fresh store: running %v, err %v", ok, err)
	}
	first, err := natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1, Command: "engram serve"})
	if err != nil {
		t.Fatal(err)
	}
	o, ok, err := natsserver.Running(ctx, dir)
	if err != nil || !ok {
		t.Fatalf("while serving: running %v, err %v", ok, err)
	}
	if o.URL != first.ClientURL() || o.PID != os.Getpid() || o.Command != "engram serve" {
		t.Fatalf("owner %+v, want url %s pid %d", o, first.ClientURL(), os.Getpid())
	}

	_, err = natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1})
	var le *natsserver.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second Start on a held store: %v, want a LockedError", err)
	}
	for _, want := range []string{"process " + strconv.Itoa(os.Getpid()), "engram serve", first.ClientURL(), dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}

	first.Shutdown()
	if _, ok, err := natsserver.Running(ctx, dir); err != nil || ok {
		t.Fatalf("after shutdown: running %v, err %v", ok, err)
	}
	again, err := natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatalf("restart on a released store: %v", err)
	}
	again.Shutdown()
}

// TestStaleServerRecord: a record left by a crashed process (lock free, file still
// there) is not taken for a running server.
func TestStaleServerRecord(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"server.lock": "",
		"server.json": `{"pid":2147483000,"url":"nats://127.0.0.1:1","started":"2026-01-01T00:00:00Z"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := natsserver.Running(ctx, dir); err != nil || ok {
		t.Fatalf("stale record: running %v, err %v", ok, err)
	}
	s, err := natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	o, ok, err := natsserver.Running(ctx, dir)
	if err != nil || !ok || o.URL != s.ClientURL() {
		t.Fatalf("after a restart over a stale record: %+v %v %v", o, ok, err)
	}
}

func TestTakenPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = natsserver.Start(context.Background(), natsserver.Config{StoreDir: dir, Port: port})
	if err == nil || !strings.Contains(err.Error(), "port "+strconv.Itoa(port)+" is taken") {
		t.Fatalf("start on a taken port: %v", err)
	}
	// The store was released: another start succeeds.
	s, err := natsserver.Start(context.Background(), natsserver.Config{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
}
