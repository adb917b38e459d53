package extractor_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/engramhq/engram/internal/redact/redacttest"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Turns published straight onto NATS, not through HTTP ingest: nothing has checked,
// defaulted or redacted them before the TURNS consumer.

// rawTurn is a TURNS payload as a client might write it; extra holds more members of
// the turn object (with their leading comma), verbatim.
func rawTurn(id, session, content, extra string) []byte {
	c, _ := json.Marshal(content)
	return []byte(`{"v":1,"tenant":"` + tenant + `","turn":{"turn_id":"` + id + `","user_id":"` + user +
		`","session_id":"` + session + `","role":"user","content":` + string(c) + extra + `}}`)
}

// publishRaw puts a payload on TURNS as its own client would, without PublishTurn's checks.
func (h *harness) publishRaw(id string, data []byte) {
	h.t.Helper()
	subj, err := streams.TurnSubject(tenant, user)
	if err != nil {
		h.t.Fatal(err)
	}
	m := nats.NewMsg(subj)
	m.Data = data
	m.Header.Set(streams.HeaderMsgID, tenant+":"+id)
	if _, err := h.js.PublishMsg(testCtx(h.t), m); err != nil {
		h.t.Fatal(err)
	}
}

// rawMsg is the delivery of a raw payload, stored by the stream at stored.
func (h *harness) rawMsg(data []byte, stored time.Time, delivery uint64) *streams.Msg {
	subj, _ := streams.TurnSubject(tenant, user)
	return &streams.Msg{Subject: subj, Data: data, Stream: streams.TurnsStream, StreamSeq: h.seq.Add(1),
		NumDelivered: delivery, Timestamp: stored}
}

func (h *harness) storedTurn(id string) memory.Turn {
	h.t.Helper()
	var tr memory.Turn
	err := h.store.InTx(testCtx(h.t), tenant, func(tx *memory.Tx) error {
		var err error
		tr, err = tx.GetTurn(testCtx(h.t), id)
		return err
	})
	if err != nil {
		h.t.Fatalf("reading turn %s: %v", id, err)
	}
	return tr
}

// TestNATSTurnOutOfRangeTimeDeadLetteredAlone: a turn whose time no JSON can write is
// dead-lettered on its first delivery, naming the field, and the good turn of the same
// session published with it is stored and extracted.
func TestNATSTurnOutOfRangeTimeDeadLetteredAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{offline: true})
	recent := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	h.publishRaw("good", rawTurn("good", "s1", "I prefer oolong tea to coffee.", `,"occurred_at":"`+recent+`"`))
	// Year 10000 in UTC; "tomorrow" would give it an expiry past 9999 too.
	h.publishRaw("bad", rawTurn("bad", "s1", "I have a haircut booked for tomorrow.", `,"occurred_at":"9999-12-31T23:59:59-23:59"`))
	w := h.startWorker(streams.WorkerConfig{MaxDeliver: 5})
	waitFor(t, 20*time.Second, "the bad turn dead-lettered and the good one acked", func() bool {
		st := w.Stats()
		return st.DeadLettered >= 1 && st.Acked >= 1
	})
	entries, err := streams.NewDLQ(h.js).List(testCtx(t), streams.DLQFilter{Stage: "extract"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].MsgID != tenant+":bad" || entries[0].Attempts != 1 ||
		!strings.Contains(entries[0].Error, "turn.occurred_at") {
		t.Fatalf("DLQ entries %+v: want the bad turn alone, on its first delivery, naming turn.occurred_at", entries)
	}
	if got := h.storedTurn("good"); got.Content != "I prefer oolong tea to coffee." {
		t.Fatalf("good turn stored as %+v", got)
	}
	cands := h.candidates()
	if !slices.ContainsFunc(cands, func(c memory.Candidate) bool { return slices.Equal(c.SourceTurnIDs, []string{"good"}) }) {
		t.Fatalf("no candidate from the good turn: %+v", cands)
	}
	for _, c := range cands {
		if slices.Contains(c.SourceTurnIDs, "bad") {
			t.Errorf("candidate from the refused turn: %+v", c)
		}
	}
}

// TestNATSTurnWithoutOccurredAt: as ingest does, a turn that does not say when it
// happened gets when it was received: its received_at, or the message's time.
func TestNATSTurnWithoutOccurredAt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{offline: true})
	stored := time.Now().Add(-2 * time.Minute).UTC().Truncate(time.Microsecond) // PostgreSQL keeps microseconds
	received := stored.Add(-time.Second)
	tests := []struct {
		name, extra     string
		wantOccurred    time.Time
		wantReceived    time.Time
		wantSameOnRetry bool
	}{
		{"no times: the message's", ``, stored, stored, true},
		{"received_at only", `,"received_at":"` + received.Format(time.RFC3339Nano) + `"`, received, received, true},
		{"null occurred_at", `,"occurred_at":null`, stored, stored, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "t" + strconv.Itoa(i)
			data := rawTurn(id, "s"+strconv.Itoa(i), "I prefer window seats on trains.", tt.extra)
			for delivery := uint64(1); delivery <= 2; delivery++ {
				if err := h.p.Handle(testCtx(t), h.rawMsg(data, stored, delivery)); err != nil {
					t.Fatalf("delivery %d: %v", delivery, err)
				}
			}
			got := h.storedTurn(id)
			if !got.OccurredAt.Equal(tt.wantOccurred) || !got.ReceivedAt.Equal(tt.wantReceived) {
				t.Fatalf("stored occurred_at %v received_at %v, want %v and %v", got.OccurredAt, got.ReceivedAt, tt.wantOccurred, tt.wantReceived)
			}
		})
	}
}

// fakeCard is a 16-digit number that passes the Luhn check, spaced as people write it;
// generated, never a real card.
func fakeCard() string {
	body := "491612345678901"
	d := body + strconv.Itoa(redacttest.LuhnCheckDigit(body))
	return d[0:4] + " " + d[4:8] + " " + d[8:12] + " " + d[12:16]
}

// TestNATSTurnRedactedBeforeStored: a secret published straight onto NATS is stored
// redacted, in content, tool error and metadata; a turn ingest redacted already is
// stored as it came; a redelivery is the same turn, not a conflict.
func TestNATSTurnRedactedBeforeStored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{offline: true})
	token := "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"
	card := fakeCard()
	at := `,"occurred_at":"` + time.Now().Add(-time.Minute).UTC().Format(time.RFC3339) + `"`
	tests := []struct {
		name, content, extra string
		secrets              []string
		wantContent          string // "" when only the secrets' absence is checked
	}{
		{"card number in content", "I paid with card " + card + " and I prefer aisle seats.", at,
			[]string{card, strings.ReplaceAll(card, " ", "")}, ""},
		{"token in tool error and metadata", "The deploy script failed again.",
			at + `,"tool":{"name":"deploy","status":"failure","error":"auth failed for ` + token + `"},"metadata":{"env":"GITHUB_TOKEN=` + token + `"}`,
			[]string{token}, ""},
		// The labelled-password rule sees the placeholder itself as a password.
		{"redacted at the edge already", "My mailbox password is [REDACTED:password] for now.", at,
			nil, "My mailbox password is [REDACTED:password] for now."},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "r" + strconv.Itoa(i)
			data := rawTurn(id, "rs"+strconv.Itoa(i), tt.content, tt.extra)
			for delivery := uint64(1); delivery <= 2; delivery++ {
				if err := h.p.Handle(testCtx(t), h.rawMsg(data, time.Now(), delivery)); err != nil {
					t.Fatalf("delivery %d: %v", delivery, err)
				}
			}
			got := h.storedTurn(id)
			all := got.Content + fmt.Sprint(got.Tool) + fmt.Sprint(got.Metadata)
			for _, s := range tt.secrets {
				if strings.Contains(all, s) {
					t.Fatalf("secret stored: %q", all)
				}
			}
			if len(tt.secrets) > 0 && !strings.Contains(all, "[REDACTED:") {
				t.Fatalf("no placeholder in the stored turn: %q", all)
			}
			if tt.wantContent != "" && got.Content != tt.wantContent {
				t.Fatalf("stored content %q, want it unchanged: %q", got.Content, tt.wantContent)
			}
			for _, c := range h.candidates() {
				for _, s := range tt.secrets {
					if strings.Contains(c.Content, s) {
						t.Fatalf("secret in candidate %q", c.Content)
					}
				}
			}
		})
	}
	if st := h.p.Stats(); st.TurnsStored != 3 || st.TurnsRedelivered != 3 {
		t.Fatalf("stats %+v: want 3 turns stored once and redelivered once each", st)
	}
}

// TestDerivedTimesStayInRange: a turn stored near the end of 9999 (accepted before
// times were checked) still extracts: "tomorrow"'s expiry is clamped to the last
// instant RFC 3339 can write, not left in year 10000 to fail the batch's publish.
func TestDerivedTimesStayInRange(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{offline: true})
	late := memory.Turn{Tenant: tenant, TurnID: "late", UserID: user, SessionID: "s1", Role: memory.RoleUser,
		Content: "I have a haircut booked for tomorrow.", OccurredAt: time.Date(9999, 12, 31, 12, 0, 0, 0, time.UTC)}
	cands, err := h.p.ExtractTurns(testCtx(t), []memory.Turn{late})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) == 0 {
		t.Fatal("no candidates: the one with the derived expiry was dropped rather than clamped")
	}
	for _, c := range cands {
		if err := (streams.CandidateEvent{V: streams.CandidateEventVersion, Candidate: c}).Validate(); err != nil {
			t.Errorf("candidate %q: %v", c.Content, err)
		}
		if c.ExpireAt != nil && c.ExpireAt.UTC().Year() != 9999 {
			t.Errorf("candidate %q expires %v, want the last instant of 9999", c.Content, c.ExpireAt)
		}
	}
}
