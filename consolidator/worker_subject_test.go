package consolidator_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// TestResolverRefusesCandidateOffItsSubject: a candidate is resolved only on the
// subject its body would be published on. One of another user (or of no user) is
// refused as permanent, naming the mismatch: user erasure deletes by subject, so it
// would survive the erasure of the user it writes to.
func TestResolverRefusesCandidateOffItsSubject(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	handle := consolidator.ObservedResolverHandler(r, nil)
	ctx := testCtx(t)
	u1Subj, err := streams.CandidateSubject(tenant, "u1")
	if err != nil {
		t.Fatal(err)
	}
	global := cand("", "The team uses Go 1.26.")
	global.Scope = memory.ScopeGlobal
	noUser := "engram.candidates." + tenant + "._"
	msg := func(subj string, c memory.Candidate) *streams.Msg {
		data, err := json.Marshal(streams.CandidateEvent{V: streams.CandidateEventVersion, Candidate: c})
		if err != nil {
			t.Fatal(err)
		}
		return &streams.Msg{Subject: subj, Data: data, Stream: streams.CandidatesStream, StreamSeq: 1, NumDelivered: 1}
	}
	for _, tc := range []struct {
		name, subj string
		c          memory.Candidate
	}{
		{"other user", u1Subj, cand("u2", "The user prefers dark mode.")},
		{"no user on a user's subject", u1Subj, global},
		{"user on the no-user subject", noUser, cand("u1", "The user prefers tea.")},
	} {
		err := handle(ctx, msg(tc.subj, tc.c))
		if !streams.IsPermanent(err) || !strings.Contains(err.Error(), tc.subj) {
			t.Errorf("%s: got %v, want a permanent error naming subject %s", tc.name, err, tc.subj)
		}
	}
	if n := countMemories(t, s, "u2"); n != 0 {
		t.Fatalf("u2 has %d memories from a candidate on u1's subject", n)
	}
	// Candidates on their own subjects, as engram publishes them, are resolved.
	if err := handle(ctx, msg(u1Subj, cand("u1", "The user prefers light mode."))); err != nil {
		t.Fatalf("u1 candidate on its subject: %v", err)
	}
	if err := handle(ctx, msg(noUser, global)); err != nil && strings.Contains(err.Error(), "subject") {
		t.Fatalf("global candidate on %s: %v", noUser, err)
	}
}
