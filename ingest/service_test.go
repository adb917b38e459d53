package ingest_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// env is a JetStream server with engram's topology. (The HTTP tests of the write
// path are internal/httpapi's.)
type env struct {
	js jetstream.JetStream
}

func newEnv(t *testing.T, _ ingest.Limits) *env {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	return &env{js: js}
}

// benchEdge serves the write service on js through the HTTP edge, as
// BenchConfig.Serve wants.
func benchEdge(js jetstream.JetStream) func(string) (http.Handler, string, error) {
	return func(tenant string) (http.Handler, string, error) {
		tok, err := httpapi.NewToken()
		if err != nil {
			return nil, "", err
		}
		tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenant, Name: "bench", SHA256: httpapi.HashToken(tok)}})
		if err != nil {
			return nil, "", err
		}
		svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: quietLogger()})
		if err != nil {
			return nil, "", err
		}
		return httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Logger: quietLogger()}), tok, nil
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestNewService(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  ingest.Config
		want string
	}{
		{"no publisher", ingest.Config{}, "Publisher is required"},
		{"ids longer than subjects allow", ingest.Config{Publisher: nopPublisher{}, Limits: ingest.Limits{MaxIDLen: 500}}, "MaxIDLen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ingest.NewService(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// nopPublisher only satisfies the interface; NewService must refuse before using it.
type nopPublisher struct{ streams.Publisher }
