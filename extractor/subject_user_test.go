package extractor_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// turnOn is the delivery of ev on subject subj, as a raw publisher could arrange it.
func (h *harness) turnOn(subj string, ev streams.TurnEvent) *streams.Msg {
	h.t.Helper()
	data, err := json.Marshal(ev)
	if err != nil {
		h.t.Fatal(err)
	}
	return &streams.Msg{Subject: subj, Data: data, Stream: streams.TurnsStream, StreamSeq: h.seq.Add(1), NumDelivered: 1}
}

// TestTurnUserMustMatchSubject: a turn whose body names another user than its subject
// is refused as permanent, naming the mismatch, and is not stored: user erasure
// deletes by subject, so such a message would survive the body user's erasure.
func TestTurnUserMustMatchSubject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{offline: true})
	ctx := testCtx(t)
	u1Subj, err := streams.TurnSubject(tenant, "u1")
	if err != nil {
		t.Fatal(err)
	}
	tr := userTurn("forged", "s1", 0, "I prefer oolong tea to coffee.")
	tr.UserID = "u2"
	err = h.p.Handle(ctx, h.turnOn(u1Subj, streams.TurnEvent{V: streams.TurnEventVersion, Tenant: tenant, Turn: tr}))
	if !streams.IsPermanent(err) || !strings.Contains(err.Error(), `"u2"`) || !strings.Contains(err.Error(), u1Subj) {
		t.Fatalf("turn of u2 on %s: got %v, want a permanent error naming the user and the subject", u1Subj, err)
	}
	err = h.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		_, err := tx.GetTurn(ctx, "forged")
		return err
	})
	if err == nil {
		t.Fatal("the forged turn was stored")
	}
	if !errors.Is(err, memory.ErrNotFound) {
		t.Logf("reading the forged turn: %v", err)
	}

	// A user id the subject escapes passes on its own subject and not on the
	// unescaped one.
	tr2 := userTurn("escaped", "s2", 0, "I prefer green tea.")
	tr2.UserID = "u_1.x"
	ev2 := streams.TurnEvent{V: streams.TurnEventVersion, Tenant: tenant, Turn: tr2}
	raw := "engram.turns." + tenant + ".u_1"
	if err := h.p.Handle(ctx, h.turnOn(raw, ev2)); !streams.IsPermanent(err) {
		t.Fatalf("escaped user on %s: got %v, want permanent", raw, err)
	}
	own, err := ev2.Subject()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.p.Handle(ctx, h.turnOn(own, ev2)); err != nil {
		t.Fatalf("turn on its own subject %s: %v", own, err)
	}
}
