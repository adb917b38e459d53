package ingest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// TestRememberKeepsMetadata: an explicit memory's metadata reaches its candidate (what
// listings and searches filter on) beside the actor, which the caller cannot forge;
// oversized metadata is refused naming the field.
func TestRememberKeepsMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	svc, err := ingest.NewService(ingest.Config{Publisher: e.js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := svc.Remember(ctx, "acme", "api:bot", ingest.RememberRequest{UserID: "u1", Content: "The team deploys on Kubernetes",
		Metadata: map[string]any{"project": "apollo", "actor": "someone else"}}); err != nil {
		t.Fatal(err)
	}
	subj, err := streams.CandidateSubject("acme", "u1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.js.Stream(ctx, streams.CandidatesStream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatal(err)
	}
	var ev streams.CandidateEvent
	if err := json.Unmarshal(msg.Data, &ev); err != nil {
		t.Fatal(err)
	}
	if md := ev.Candidate.Metadata; md["project"] != "apollo" || md["actor"] != "api:bot" {
		t.Fatalf("candidate metadata %v: want the caller's project and the authenticated actor", md)
	}

	_, err = svc.Remember(ctx, "acme", "api:bot", ingest.RememberRequest{UserID: "u1", Content: "x",
		Metadata: map[string]any{"blob": strings.Repeat("a", 9000)}})
	var fe *memory.FieldError
	if !errors.As(err, &fe) || fe.Field != "metadata" || fe.Code != memory.CodeTooLarge {
		t.Fatalf("oversized metadata: %v, want a too_large error on metadata", err)
	}
}
