package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/engramhq/engram/streams/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

func TestRestartKeepsStreamsAndURL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "s.1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	srv.Restart(t)
	if srv.URL() != url {
		t.Fatalf("URL changed across restart: %s → %s", url, srv.URL())
	}
	// The old connection has reconnected by the time Restart returns.
	deadline := time.Now().Add(10 * time.Second)
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		s, err := js.Stream(actx, "S")
		if err == nil {
			info, err := s.Info(actx)
			if err == nil && info.State.Msgs == 1 {
				acancel()
				return
			}
		}
		acancel()
		if time.Now().After(deadline) {
			t.Fatalf("stream not back after restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
