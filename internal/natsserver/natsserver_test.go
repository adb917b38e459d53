package natsserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/natsserver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestStartEmbedded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	start := func() *natsserver.Server {
		e, err := natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := start()
	if e.Port() <= 0 {
		t.Fatalf("port %d", e.Port())
	}
	nc, err := nats.Connect(e.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.acme", []byte("turn")); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	e.Shutdown()

	e = start() // same store, new port
	defer e.Shutdown()
	nc, err = nats.Connect(e.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ = jetstream.New(nc)
	s, err := js.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("after restart: %+v, %v", info, err)
	}
	if _, err := natsserver.Start(ctx, natsserver.Config{}); err == nil {
		t.Fatal("Start without StoreDir succeeded")
	}
}
