package retriever_test

import (
	"fmt"
	"slices"
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
	const pottery = "when does the pottery studio open"
	deleteMemory := func(m memory.Memory) {
		if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
			_, err := tx.DeleteMemory(e.ctx, m.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		query string // default pottery
		setup func(user string)
		want  []string // turn ids (after the user id) the context must show
		never []string // turn ids it must not show
		count int      // fallback lines, when not len(want)
	}{
		{name: "unextracted own words", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
		}, want: []string{"-said"}},
		{name: "at most three", query: "when does the pottery studio open its kiln class", setup: func(u string) {
			// Each shares a different word of the query and none with another.
			for i, text := range []string{"Pottery glazes crack easily.", "Studio rent doubled.", "Open mic was fun.",
				"Kiln firing takes hours.", "Class photos arrived."} {
				e.addTurn("acme", u, fmt.Sprintf("s%d", i), fmt.Sprintf("%s-%d", u, i), memory.RoleUser, text, now.Add(-time.Duration(40-i)*day))
			}
		}, count: 3},
		{name: "the assistant's words", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-claim", memory.RoleAssistant, "The pottery studio opens at nine.", now.Add(-40*day))
		}, never: []string{"-claim"}},
		{name: "a later turn on the same subject", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-old", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.addTurn("acme", u, "s2", u+"-new", memory.RoleUser, "Elm Street closed, classes are at the Oak Avenue pottery now.", now.Add(-5*day))
		}, want: []string{"-new"}, never: []string{"-old"}},
		{name: "another tenant's later turn", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-old", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.addTurn("other", u, "s2", u+"-theirs", memory.RoleUser, "Elm Street is closed for good.", now.Add(-5*day))
		}, want: []string{"-old"}, never: []string{"-theirs"}},
		{name: "a later memory on the same subject", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-old", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.addTurn("acme", u, "s2", u+"-src", memory.RoleAssistant, "Noted about Elm Street.", now.Add(-5*day))
			e.add("acme", mem{user: u, content: "The Elm Street place closed for good", validFrom: now.Add(-5 * day), turns: []string{u + "-src"}})
		}, never: []string{"-old"}},
		{name: "a memory came from it", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-src", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.add("acme", mem{user: u, content: "Takes ceramics classes", validFrom: now.Add(-40 * day), turns: []string{u + "-src"}})
		}, never: []string{"-src"}},
		{name: "its memory was deleted on request", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-src", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			deleteMemory(e.add("acme", mem{user: u, content: "Takes ceramics classes", validFrom: now.Add(-40 * day), turns: []string{u + "-src"}}))
		}, never: []string{"-src"}},
		{name: "all the user's memories were deleted on request", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-src", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.add("acme", mem{user: u, content: "Takes ceramics classes", validFrom: now.Add(-40 * day), turns: []string{u + "-src"}})
			if err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
				_, _, err := tx.DeleteUserMemories(e.ctx, u)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}, never: []string{"-src"}},
		{name: "a memory answers the query", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", now.Add(-40*day))
			e.add("acme", mem{user: u, content: "Goes to the pottery studio on Mondays", validFrom: now.Add(-10 * day)})
		}, never: []string{"-said"}},
		{name: "the current session", setup: func(u string) {
			e.addTurn("acme", u, "now", u+"-here", memory.RoleUser, "Does the pottery studio open early?", now.Add(-time.Minute))
		}},
		{name: "quotes and backslashes", query: `O'Brien's kiln at C:\kiln`, setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, `O'Brien's kiln lives at C:\kiln\n "quoted" \\ too`, now.Add(-4*day))
		}, want: []string{"-said"}},
		{name: "a lone Han bigram in common", query: "这个陶艺工作室几点开", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "哈哈这个段子太好笑了", now.Add(-3*day))
		}, never: []string{"-said"}},
		{name: "a Han word in common", query: "这个陶艺工作室几点开", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "陶艺工作室周二不开门", now.Add(-3*day))
		}, want: []string{"-said"}},
		{name: "a lone kana bigram in common", query: "陶芸教室はいつですか", setup: func(u string) {
			e.addTurn("acme", u, "s1", u+"-said", memory.RoleUser, "今日は暑いですね", now.Add(-3*day))
		}, never: []string{"-said"}},
	}
	for i, c := range cases {
		user := fmt.Sprintf("u%02d", i)
		c.setup(user)
		t.Run(c.name, func(t *testing.T) {
			q := c.query
			if q == "" {
				q = pottery
			}
			resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: user, SessionID: "now", Query: q})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range c.want {
				if !strings.Contains(resp.Text, "[turn: "+user+id+"] (user said") {
					t.Errorf("turn %s missing:\n%s", user+id, resp.Text)
				}
				if !slices.Contains(resp.TurnIDs, user+id) {
					t.Errorf("turn %s not among the cited turns %v", user+id, resp.TurnIDs)
				}
			}
			for _, id := range c.never {
				if strings.Contains(resp.Text, user+id) {
					t.Errorf("turn %s shown:\n%s", user+id, resp.Text)
				}
			}
			// A turn of the current session is the session window's, never a fallback line.
			want := max(c.count, len(c.want))
			if n := strings.Count(resp.Text, "(user said"); n != want {
				t.Errorf("%d fallback lines, want %d:\n%s", n, want, resp.Text)
			}
		})
	}
}

// TestContextTurnsOff: a negative ContextTurns turns the fallback off.
func TestContextTurnsOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, func(c *retriever.Config) { c.ContextTurns = -1 })
	e.addTurn("acme", "u", "s1", "said", memory.RoleUser, "The pottery studio on Elm Street opens at nine.", time.Now().Add(-40*24*time.Hour))
	resp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", Query: "when does the pottery studio open"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Text, "said") {
		t.Fatalf("fallback with ContextTurns -1:\n%s", resp.Text)
	}
}
