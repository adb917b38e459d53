package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

func TestDLQCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	// Three dead letters from a worker that rejects everything.
	w, err := streams.NewWorker(js, streams.WorkerConfig{
		Stream: streams.TurnsStream, Durable: "extractor",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, func(context.Context, *streams.Msg) error { return streams.Permanent(errors.New("cannot extract")) })
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	for i := range 3 {
		ev := streams.TurnEvent{Tenant: "acme", Turn: memory.Turn{
			TurnID: fmt.Sprintf("t%d", i), UserID: "u1", SessionID: "s1", Role: memory.RoleUser, Content: "hi"}}
		if _, err := streams.PublishTurn(ctx, js, ev); err != nil {
			t.Fatal(err)
		}
	}
	for w.Stats().DeadLettered < 3 {
		if ctx.Err() != nil {
			t.Fatal("dead letters never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		args    string
		wantErr string // substring; empty for success
		wantOut string // substring of stdout
	}{
		{"", "missing command", ""},
		{"frobnicate", "unknown command", ""},
		{"list", "", "cannot extract"},
		{"list --stage resolver", "", "no dead letters"},
		{"list --stage a*b", "--stage", ""},
		{"list --since yesterday", "-since", ""},
		{"list --since 1h --limit 2", "", "ATTEMPTS"},
		{"list --limit -1", "--limit", ""},
		{"list --help", "", ""},
		{"show", "exactly one ID", ""},
		{"show x", `ID "x"`, ""},
		{"show 99", "no dead letter with ID 99", ""},
		{"show 1", "", "acme:t0"},
		{"show --json 2", "", `"msg_id": "acme:t1"`},
		{"replay", "refusing", ""},
		{"replay --id zero", "-id", ""},
		{"replay --all --id 1", "--all cannot be combined", ""},
		{"replay --id 1 --json", "", `"replayed": 1`},
		{"purge", "refusing", ""},
		{"purge --before nonsense", "-before", ""},
		{"purge --before 1h", "", "purged 0"},
		{"purge --stage extractor --json", "", `"purged": 2`},
		{"list", "", "no dead letters"},
	}
	for _, s := range steps {
		var out, errOut bytes.Buffer
		err := dlqCommand(ctx, js, strings.Fields(s.args), &out, &errOut)
		switch {
		case s.wantErr == "" && err != nil:
			t.Errorf("dlq %s: %v (stderr %s)", s.args, err, errOut.String())
		case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
			t.Errorf("dlq %s: err %v, want one containing %q", s.args, err, s.wantErr)
		case !strings.Contains(out.String(), s.wantOut):
			t.Errorf("dlq %s: stdout %q lacks %q", s.args, out.String(), s.wantOut)
		}
		if strings.Contains(s.args, "--json") && err == nil && !json.Valid(out.Bytes()) {
			t.Errorf("dlq %s: invalid JSON %q", s.args, out.String())
		}
	}
}
