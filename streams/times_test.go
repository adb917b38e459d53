package streams_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// turnPayload is a turn event as a client might publish it straight onto NATS; times
// holds its time members (with their leading comma), verbatim.
func turnPayload(times string) []byte {
	return []byte(`{"v":1,"tenant":"acme","turn":{"turn_id":"t1","user_id":"u","session_id":"s","role":"user",` +
		`"content":"The parcel should arrive on Friday."` + times + `}}`)
}

func TestDecodeTurnEventTimes(t *testing.T) {
	t.Parallel()
	futureAt := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	future := futureAt.Format(time.RFC3339)
	recent := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	tests := []struct {
		name      string
		times     string
		wantField string    // the field the error names; "" when accepted
		wantMsg   string    // and what it says
		wantAt    time.Time // occurred_at once decoded, when accepted (zero: absent)
	}{
		{"year 10000 in UTC", `,"occurred_at":"9999-12-31T23:59:59-23:59"`, "turn.occurred_at", "year 10000", time.Time{}},
		{"received_at in year 10000", `,"occurred_at":"2025-01-02T03:04:05Z","received_at":"9999-12-31T23:59:59-23:59"`,
			"turn.received_at", "year 10000", time.Time{}},
		{"before 1970", `,"occurred_at":"1969-07-20T20:17:40Z"`, "turn.occurred_at", "before 1970", time.Time{}},
		// How far ahead a turn may be is the edge's setting (ingest.Limits), not the
		// consumer's: a turn the edge accepted is not dead-lettered by another clock.
		{"an hour ahead: the edge's to judge", `,"occurred_at":"` + future + `"`, "", "", futureAt},
		{"ordinary", `,"occurred_at":"2025-01-02T03:04:05Z"`, "", "", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"absent: received_at", `,"received_at":"` + recent.Format(time.RFC3339) + `"`, "", "", recent},
		{"absent, no received_at: left to the consumer", ``, "", "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := streams.DecodeTurnEvent(turnPayload(tt.times))
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !ev.Turn.OccurredAt.Equal(tt.wantAt) {
					t.Fatalf("occurred_at %v, want %v", ev.Turn.OccurredAt, tt.wantAt)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantField+": ") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err %v, want one naming %s and saying %q", err, tt.wantField, tt.wantMsg)
			}
			if err := streams.ValidateTurnPayload(turnPayload(tt.times)); err == nil {
				t.Fatal("ValidateTurnPayload accepted it: it would not be dead-lettered as poison")
			}
		})
	}
}

func TestDefaultTurnTimes(t *testing.T) {
	t.Parallel()
	stored := time.Date(2026, 2, 3, 4, 5, 6, 0, time.FixedZone("", 3600))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name               string
		in                 memory.Turn
		wantOcc, wantRecvd time.Time
	}{
		{"none: the message's time", memory.Turn{}, stored.UTC(), stored.UTC()},
		{"received_at only", memory.Turn{ReceivedAt: at}, at, at},
		{"both kept", memory.Turn{OccurredAt: at, ReceivedAt: at.Add(time.Second)}, at, at.Add(time.Second)},
		{"occurred_at only", memory.Turn{OccurredAt: at}, at, stored.UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.in
			streams.DefaultTurnTimes(&tr, stored)
			if !tr.OccurredAt.Equal(tt.wantOcc) || !tr.ReceivedAt.Equal(tt.wantRecvd) {
				t.Fatalf("occurred_at %v received_at %v, want %v and %v", tr.OccurredAt, tr.ReceivedAt, tt.wantOcc, tt.wantRecvd)
			}
		})
	}
	var tr memory.Turn
	before := time.Now()
	streams.DefaultTurnTimes(&tr, time.Time{})
	if tr.OccurredAt.Before(before) || tr.ReceivedAt.IsZero() {
		t.Fatalf("no message time: occurred_at %v received_at %v, want now", tr.OccurredAt, tr.ReceivedAt)
	}
}

func TestCandidateEventTimes(t *testing.T) {
	t.Parallel()
	late := time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -(23*3600+59*60))) // year 10000 in UTC
	tests := []struct {
		name, wantField string
		edit            func(*memory.Candidate)
	}{
		{"in range", "", func(*memory.Candidate) {}},
		{"last instant", "", func(c *memory.Candidate) {
			e := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
			c.ExpireAt = &e
		}},
		{"expire_at", "candidate.expire_at", func(c *memory.Candidate) { c.ExpireAt = &late }},
		{"valid_from", "candidate.valid_from", func(c *memory.Candidate) { c.ValidFrom = late }},
		{"created_at", "candidate.created_at", func(c *memory.Candidate) { c.CreatedAt = late }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := memory.Candidate{ID: "c1", Tenant: "acme", UserID: "u1", Scope: memory.ScopeUser, Type: memory.Semantic,
				Category: memory.CatPreference, Content: "Prefers window seats.", ValidFrom: time.Now().UTC(), CreatedAt: time.Now().UTC()}
			tt.edit(&c)
			err := streams.CandidateEvent{V: 1, Candidate: c}.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantField+": ") {
				t.Fatalf("err %v, want one naming %s", err, tt.wantField)
			}
		})
	}
}
