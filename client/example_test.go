package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"

	"github.com/engramhq/engram/internal/natsserver"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
)

func ExampleClient_AddTurns() {
	ctx := context.Background()
	url, token, stop := startEngram(ctx) // an in-process engram ingest server
	defer stop()

	c := client.New(url, token)
	res, err := c.AddTurns(ctx,
		client.Turn{UserID: "alice", SessionID: "s1", Role: client.RoleUser, Content: "I prefer meetings after 10am."},
		client.Turn{UserID: "alice", SessionID: "s1", Role: client.RoleAssistant, Content: "Noted: meetings after 10am."},
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accepted %d, duplicates %d\n", res.Accepted, res.Duplicates)

	// Sending the same turns again (same ids) stores nothing twice.
	again := []client.Turn{
		{TurnID: res.Results[0].TurnID, UserID: "alice", SessionID: "s1", Role: client.RoleUser, Content: "I prefer meetings after 10am."},
	}
	res, err = c.AddTurns(ctx, again...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accepted %d, duplicates %d\n", res.Accepted, res.Duplicates)
	// Output:
	// accepted 2, duplicates 0
	// accepted 0, duplicates 1
}

// startEngram runs what `engram dev` runs for ingest: an embedded JetStream
// server with a file store, the TURNS topology and POST /v1/turns behind a token.
func startEngram(ctx context.Context) (url, token string, stop func()) {
	dir, err := os.MkdirTemp("", "engram-example-")
	if err != nil {
		log.Fatal(err)
	}
	ns, err := natsserver.Start(ctx, natsserver.Config{StoreDir: dir, Port: -1})
	if err != nil {
		log.Fatal(err)
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		log.Fatal(err)
	}
	token, err = httpapi.NewToken()
	if err != nil {
		log.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "example", SHA256: httpapi.HashToken(token)}})
	if err != nil {
		log.Fatal(err)
	}
	svc, err := ingest.NewService(ingest.Config{Publisher: js})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc}))
	return srv.URL, token, func() {
		srv.Close()
		nc.Close()
		ns.Shutdown()
		os.RemoveAll(dir)
	}
}
