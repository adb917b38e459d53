package ingest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

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

// TestRememberRefusesTimesOutsideUTCYears: valid_from and expire_at are written in UTC
// (the event, the store, every answer), so one whose UTC year RFC 3339 cannot write is
// a field error, not a publish failure answered as an outage, nor a memory that
// breaks every answer holding it.
func TestRememberRefusesTimesOutsideUTCYears(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ingest.Limits{})
	svc, err := ingest.NewService(ingest.Config{Publisher: e.js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	for _, tc := range []struct {
		name                string
		validFrom, expireAt *time.Time
		field               string // "": accepted
	}{
		{"valid_from in year 10000", at("9999-12-31T23:59:59-23:59"), nil, "valid_from"},
		{"valid_from in year -1", at("0000-01-01T00:00:00+23:59"), nil, "valid_from"},
		{"expire_at in year 10000", nil, at("9999-12-31T23:59:59-23:59"), "expire_at"},
		{"expire_at at the last UTC second", nil, at("9999-12-31T23:59:59Z"), ""},
		{"valid_from in range once in UTC", at("2026-01-02T03:04:05+05:30"), at("9999-12-31T23:59:59+01:00"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Remember(testCtx(t), "acme", "api:bot", ingest.RememberRequest{UserID: "u1",
				Content: "times: " + tc.name, ValidFrom: tc.validFrom, ExpireAt: tc.expireAt})
			var fe *memory.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Remember: %v", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field || errors.Is(err, ingest.ErrUnavailable)):
				t.Fatalf("Remember: %v, want a field error on %s", err, tc.field)
			}
		})
	}
}
