package retriever_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// TestContextFallsBackToUnextractedTurns: when no memory matches the query by keyword,
// the context offers the user's own earlier words that no memory came from, unless
// something later (a memory or another turn of the user) speaks about the same subject,
// a memory from them was deleted on request, they share too little with the query, or
// they are the assistant's.
func TestContextFallsBackToUnextractedTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	now := time.Now()
	day := 24 * time.Hour
	const query = "when does the pottery studio open"
	cases := []struct {
		name  string
		setup func(user string)
		want  []string // turn ids the context must show
		never []string // turn ids it must not show
	}{
		{"unextracted own words", func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
		}, []string{"-said"}, nil},
		{"the assistant's words", func(u string) {
			e.addTurn("acme", u, "s1", u+"-claim", memory.RoleAssistant, "The pottery studio opens at nine.", now.Add(-40*day))
		}, nil, []string{"-claim"}},
		{"a later turn on the same subject", func(u string) {
			e.addTurn("acme", u, "s1", u+"-old", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.addTurn("acme", u, "s2", u+"-new", memory.RoleUser, "Elm Street closed, classes are at the Oak Avenue pottery now.", now.Add(-5*day))
		}, []string{"-new"}, []string{"-old"}},
		{"a later memory on the same subject", func(u string) {
			e.addTurn("acme", u, "s1", u+"-old", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.addTurn("acme", u, "s2", u+"-src", memory.RoleAssistant, "Noted about Elm Street.", now.Add(-5*day))
			e.add("acme", mem{user: u, content: "The Elm Street place closed for good", validFrom: now.Add(-5 * day), turns: []string{u + "-src"}})
		}, nil, []string{"-old"}},
		{"a memory came from it", func(u string) {
			e.addTurn("acme", u, "s1", u+"-src", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.add("acme", mem{user: u, content: "Takes ceramics classes", validFrom: now.Add(-40 * day), turns: []string{u + "-src"}})
		}, nil, []string{"-src"}},
		{"its memory was deleted on request", func(u string) {
			e.addTurn("acme", u, "s1", u+"-src", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			m := e.add("acme", mem{user: u, content: "Takes ceramics classes", validFrom: now.Add(-40 * day), turns: []string{u + "-src"}})
			if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				_, err := tx.DeleteMemory(e.ctx, m.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"-src"}},
		{"all the user's memories were deleted on request", func(u string) {
			e.addTurn("acme", u, "s1", u+"-src", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.add("acme", mem{user: u, content: "Takes ceramics classes", validFrom: now.Add(-40 * day), turns: []string{u + "-src"}})
			if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				_, _, err := tx.DeleteUserMemories(e.ctx, u)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"-src"}},
		{"a memory answers the query", func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.add("acme", mem{user: u, content: "Goes to the pottery studio on Mondays", validFrom: now.Add(-10 * day)})
		}, nil, []string{"-said"}},
		{"the current session", func(u string) {
			e.addTurn("acme", u, "now", u+"-here", memory.RoleUser, "Does the pottery studio open early?", now.Add(-time.Minute))
		}, nil, nil},
		{"a lone Han bigram in common", func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "哈哈这个段子太好笑了", now.Add(-3*day))
		}, nil, []string{"-said"}},
		{"a Han word in common", func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "陶艺工作室周二不开门", now.Add(-3*day))
		}, []string{"-said"}, nil},
		{"another tenant's words", func(u string) {
			e.addTurn("other", u, "s1", u+"-theirs", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
		}, nil, []string{"-theirs"}},
	}
	for i, c := range cases {
		user := "u" + string(rune('a'+i))
		c.setup(user)
		t.Run(c.name, func(t *testing.T) {
			q := query
			if strings.Contains(c.name, "Han") {
				q = "这个陶艺工作室几点开"
			}
			resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: user, SessionID: "now", Query: q})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range c.want {
				if !strings.Contains(resp.Text, "[turn: "+user+id+"] (user said") {
					t.Errorf("turn %s missing:\n%s", user+id, resp.Text)
				}
			}
			for _, id := range c.never {
				if strings.Contains(resp.Text, user+id) {
					t.Errorf("turn %s shown:\n%s", user+id, resp.Text)
				}
			}
			// A turn of the current session is the session window's, never a fallback line.
			if n := strings.Count(resp.Text, "(user said"); n > len(c.want) {
				t.Errorf("%d fallback lines, want %d:\n%s", n, len(c.want), resp.Text)
			}
		})
	}
}
