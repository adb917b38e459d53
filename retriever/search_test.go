package retriever_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// TestIsolation runs randomised searches and context calls over two tenants with two
// users each, all holding the same sentences, and checks that nothing ever crosses a
// tenant or a user.
func TestIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	tenants := []string{"acme", "globex"}
	users := []string{"u1", "u2"}
	sentences := []string{
		"The user prefers green tea over coffee",
		"Order ORD-2024-88123 was shipped to Berlin",
		"Weekly standup moved to Tuesday afternoon",
		"Allergic to peanuts and shellfish",
		"用户喜欢在周末去爬山",
		"部署前必须先备份数据库",
		"Works as a data engineer at Contoso",
		"Prefers aisle seats on long flights",
		"Daughter takes violin lessons on Saturday",
		"Uses Go for backend services and Python for analysis",
	}
	type owner struct{ tenant, user string }
	belongs := map[string]owner{}
	cats := []memory.Category{memory.CatPreference, memory.CatFact, memory.CatEvent, memory.CatConstraint}
	types := []memory.Type{memory.Semantic, memory.Episodic, memory.Procedural}
	for _, tn := range tenants {
		for _, u := range users {
			for i, s := range sentences {
				st := memory.StatusActive
				if i%4 == 3 {
					st = memory.StatusPending
				}
				m := e.add(tn, mem{user: u, content: s, cat: cats[i%len(cats)], typ: types[i%len(types)], status: st,
					importance: 0.3 + float64(i%5)/10})
				belongs[m.ID.String()] = owner{tn, u}
			}
			for i := 0; i < 5; i++ {
				e.addTurn(tn, u, "s1", fmt.Sprintf("%s-%s-t%d", tn, u, i), memory.RoleUser, sentences[i], time.Now().Add(-time.Duration(10-i)*time.Minute))
			}
		}
	}
	// A global memory per tenant: never returned to user-scoped searches.
	for _, tn := range tenants {
		m := e.add(tn, mem{content: "Company holiday policy: green tea is free", scope: memory.ScopeGlobal})
		belongs[m.ID.String()] = owner{tn, ""}
	}

	words := strings.Fields(strings.Join(sentences, " "))
	const calls = 1000
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	const workers = 4
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for i := 0; i < calls/workers; i++ {
				tn := tenants[rng.IntN(len(tenants))]
				u := users[rng.IntN(len(users))]
				var q []string
				for j := 0; j < 1+rng.IntN(5); j++ {
					q = append(q, words[rng.IntN(len(words))])
				}
				query := strings.Join(q, " ")
				if i%5 == 4 {
					resp, err := e.r.Context(e.ctx, tn, retriever.ContextRequest{UserID: u, SessionID: "s1", Query: query,
						BudgetTokens: 200 + rng.IntN(2000)})
					if err != nil {
						fail("context: %v", err)
						continue
					}
					for _, id := range resp.MemoryIDs {
						if o := belongs[id.String()]; o != (owner{tn, u}) {
							fail("context for %s/%s returned %s of %v", tn, u, id, o)
						}
					}
					for _, id := range resp.TurnIDs {
						if !strings.HasPrefix(id, tn+"-"+u+"-") {
							fail("context for %s/%s returned turn %s", tn, u, id)
						}
					}
					continue
				}
				req := retriever.SearchRequest{Query: query, UserID: u, TopK: 1 + rng.IntN(30)}
				if rng.IntN(2) == 0 {
					req.Statuses = []memory.Status{memory.StatusActive, memory.StatusPending}
				}
				if rng.IntN(3) == 0 {
					req.Layers = []string{retriever.LayerMemories, retriever.LayerTurns}
				}
				if rng.IntN(4) == 0 {
					req.Types = []memory.Type{types[rng.IntN(len(types))]}
				}
				resp, err := e.r.Search(e.ctx, tn, req)
				if err != nil {
					fail("search: %v", err)
					continue
				}
				for _, res := range resp.Results {
					if res.Layer == retriever.LayerTurns {
						if !strings.HasPrefix(res.ID, tn+"-"+u+"-") {
							fail("search for %s/%s returned turn %s", tn, u, res.ID)
						}
						continue
					}
					if o := belongs[res.ID]; o != (owner{tn, u}) {
						fail("search for %s/%s returned %s of %v", tn, u, res.ID, o)
					}
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	// Global scope sees only its tenant's global memory.
	for _, tn := range tenants {
		resp := e.search(tn, retriever.SearchRequest{Query: "green tea", Scope: memory.ScopeGlobal})
		if len(resp.Results) != 1 || belongs[resp.Results[0].ID] != (owner{tn, ""}) {
			t.Errorf("global search in %s: %v", tn, ids(resp.Results))
		}
	}
}

// TestExactIdentifierByKeyword: the embedding ranks the order memory last of 80, and the
// keyword side still finds it.
func TestExactIdentifierByKeyword(t *testing.T) {
	t.Parallel()
	emb := fakeEmbedder(t, func(in string) []float32 {
		switch {
		case strings.HasPrefix(in, "status of"):
			return unit(1, 0, 0, 0, 0, 0, 0, 0)
		case strings.Contains(in, "ORD-2024-88123"):
			return unit(0, 0, 0, 0, 0, 0, 0, 1) // orthogonal to the query
		case strings.Contains(in, "ORD-2024-"):
			return unit(0, 0, 0, 0, 0, 0, 1, 0)
		case strings.HasPrefix(in, "Hiking trip"):
			var n int
			fmt.Sscanf(in, "Hiking trip %d", &n)
			return unit(1, float64(n)/100, 0, 0, 0, 0, 0, 0)
		}
		return unit(1, 0, 0, 0, 0, 0, 0, 0)
	})
	e := newEnv(t, emb, nil)
	target := e.add("acme", mem{user: "u", content: "Order ORD-2024-88123 was shipped via DHL"})
	for i := 0; i < 80; i++ {
		e.add("acme", mem{user: "u", content: fmt.Sprintf("Hiking trip %d went up the mountain", i)})
	}
	other := e.add("acme", mem{user: "u", content: "Order ORD-2024-55555 was cancelled"})
	resp := e.search("acme", retriever.SearchRequest{Query: "status of ORD-2024-88123?", UserID: "u"})
	i := indexOf(resp.Results, target.ID.String())
	if i < 0 || i > 2 {
		t.Fatalf("order memory at %d in %v", i, ids(resp.Results))
	}
	got := resp.Results[i]
	if got.Components.Keyword <= 0 || got.Components.Vector > 0.01 {
		t.Errorf("components %+v: want a keyword match and no vector similarity", got.Components)
	}
	if j := indexOf(resp.Results, other.ID.String()); j >= 0 && j < i {
		t.Errorf("the other order outranks the exact one")
	}
}

// TestParaphraseByVector: no word in common, found by the vector side.
func TestParaphraseByVector(t *testing.T) {
	t.Parallel()
	emb := fakeEmbedder(t, func(in string) []float32 {
		switch {
		case strings.Contains(in, "green tea") || strings.Contains(in, "hot drink"):
			return unit(0, 1, 0, 0, 0, 0, 0, 0.1)
		case strings.HasPrefix(in, "Note"):
			var n int
			fmt.Sscanf(in, "Note %d", &n)
			return unit(0, 0, 1, float64(n)/10, 0, 0, 0, 0)
		}
		return unit(1, 0, 0, 0, 0, 0, 0, 0)
	})
	e := newEnv(t, emb, nil)
	target := e.add("acme", mem{user: "u", content: "Sips green tea at breakfast"})
	for i := 0; i < 30; i++ {
		e.add("acme", mem{user: "u", content: fmt.Sprintf("Note %d: what beverage question came up", i), importance: 0.9})
	}
	resp := e.search("acme", retriever.SearchRequest{Query: "which hot drink does she want in the morning", UserID: "u", TopK: 5})
	if len(resp.Results) == 0 || resp.Results[0].ID != target.ID.String() {
		t.Fatalf("want the paraphrase first, got %v", ids(resp.Results))
	}
	if c := resp.Results[0].Components; c.Keyword != 0 || c.Vector < 0.9 {
		t.Errorf("components %+v: want vector only", c)
	}
}

func TestStatusesAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	active := e.add("acme", mem{user: "u", content: "Likes jazz concerts in the park"})
	pending := e.add("acme", mem{user: "u", content: "Maybe likes jazz festivals abroad", status: memory.StatusPending})
	past := time.Now().Add(-time.Hour)
	expired := e.add("acme", mem{user: "u", content: "Jazz tickets for last night", expire: &past})
	archived := e.add("acme", mem{user: "u", content: "Used to like jazz radio"})
	st := memory.StatusArchived
	if _, err := e.store.Apply(e.ctx, "acme", archived.ID, memory.Update{Change: memory.ChangeArchive, Status: &st, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		statuses []memory.Status
		want     []string
	}{
		{"default active", nil, []string{active.ID.String()}},
		{"with pending", []memory.Status{memory.StatusActive, memory.StatusPending}, []string{active.ID.String(), pending.ID.String()}},
		{"pending only", []memory.Status{memory.StatusPending}, []string{pending.ID.String()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.search("acme", retriever.SearchRequest{Query: "jazz", UserID: "u", Statuses: tc.statuses})
			got := map[string]retriever.Result{}
			for _, r := range resp.Results {
				got[r.ID] = r
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", ids(resp.Results), tc.want)
			}
			for _, id := range tc.want {
				r, ok := got[id]
				if !ok {
					t.Fatalf("missing %s in %v", id, ids(resp.Results))
				}
				if r.Pending != (id == pending.ID.String()) {
					t.Errorf("%s pending = %v", id, r.Pending)
				}
			}
			for _, bad := range []string{expired.ID.String(), archived.ID.String()} {
				if _, ok := got[bad]; ok {
					t.Errorf("expired or archived memory %s returned", bad)
				}
			}
		})
	}
	// Context leaves unconfirmed claims out unless asked for them, and marks them then.
	ctxResp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", Query: "jazz"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ctxResp.Text, pending.ID.String()) || strings.Contains(ctxResp.Text, "unconfirmed") {
		t.Errorf("pending memory in a context that did not ask for it:\n%s", ctxResp.Text)
	}
	if !strings.Contains(ctxResp.Text, "[memory_ref: "+active.ID.String()+"]") {
		t.Errorf("active memory missing from context:\n%s", ctxResp.Text)
	}
	ctxResp, err = e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", Query: "jazz", IncludePending: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ctxResp.Text, "[memory_ref: "+pending.ID.String()+"]") ||
		!strings.Contains(ctxResp.Text, "(unconfirmed) Maybe likes jazz") {
		t.Errorf("pending memory asked for but not marked unconfirmed:\n%s", ctxResp.Text)
	}
	if strings.Contains(ctxResp.Text, expired.ID.String()) || strings.Contains(ctxResp.Text, archived.ID.String()) {
		t.Errorf("expired or archived memory in context:\n%s", ctxResp.Text)
	}
}

// A search answers with matches only: when the query matches nothing, the owner's
// latest memories are not returned on recency alone, while a context call still
// shows them in its layers.
func TestSearchNoRecencyOnlyResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	fresh := e.add("acme", mem{user: "u", content: "Booked a pottery class for Thursday evening", typ: memory.Episodic, cat: memory.CatEvent})
	e.add("acme", mem{user: "u", content: "Keeps a sourdough starter on the counter"})
	for _, q := range []string{"quantum chromodynamics lecture", ""} {
		resp := e.search("acme", retriever.SearchRequest{Query: q, UserID: "u"})
		if len(resp.Results) != 0 {
			t.Errorf("query %q matched nothing but returned %v", q, ids(resp.Results))
		}
	}
	resp := e.search("acme", retriever.SearchRequest{Query: "pottery", UserID: "u"})
	if len(resp.Results) != 1 || resp.Results[0].ID != fresh.ID.String() {
		t.Errorf("pottery: got %v, want only %s", ids(resp.Results), fresh.ID)
	}
	ctxResp, err := e.r.Context(e.ctx, "acme", retriever.ContextRequest{UserID: "u", Query: "quantum chromodynamics lecture"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ctxResp.Text, fresh.ID.String()) {
		t.Errorf("context lost the recent memory when the query matched nothing:\n%s", ctxResp.Text)
	}
}

func TestAsOf(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	t0 := time.Now().Add(-10 * 24 * time.Hour).UTC()
	t1 := time.Now().Add(-2 * 24 * time.Hour).UTC()
	m := e.add("acme", mem{user: "u", content: "Team standup is at 9am", validFrom: t0})
	content := "Team standup is at 10am"
	if _, err := e.store.Apply(e.ctx, "acme", m.ID, memory.Update{Change: memory.ChangeSupersede, Content: &content,
		ValidFrom: &t1, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	later := e.add("acme", mem{user: "u", content: "Standup notes live in the wiki"})
	tests := []struct {
		name    string
		asOf    *time.Time
		content string // of m; "" means m is absent
		version int
	}{
		{"before the change", ptr(t0.Add(24 * time.Hour)), "Team standup is at 9am", 1},
		{"after the change", ptr(t1.Add(time.Hour)), "Team standup is at 10am", 2},
		{"now", nil, "Team standup is at 10am", 2},
		{"before it existed", ptr(t0.Add(-time.Hour)), "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.search("acme", retriever.SearchRequest{Query: "standup", UserID: "u", AsOf: tc.asOf})
			i := indexOf(resp.Results, m.ID.String())
			if tc.content == "" {
				if i >= 0 {
					t.Fatalf("memory returned before it was valid: %+v", resp.Results[i])
				}
				return
			}
			if i < 0 {
				t.Fatalf("memory missing: %v", ids(resp.Results))
			}
			if got := resp.Results[i]; got.Content != tc.content || got.Version != tc.version {
				t.Errorf("got %q v%d, want %q v%d", got.Content, got.Version, tc.content, tc.version)
			}
			if tc.asOf != nil && indexOf(resp.Results, later.ID.String()) >= 0 {
				t.Errorf("a memory valid only from now was returned as of %v", tc.asOf)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDuplicatesDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	a := e.add("acme", mem{user: "u", content: "Prefers window seats.", importance: 0.9})
	e.add("acme", mem{user: "u", content: "prefers   WINDOW seats"})
	e.add("acme", mem{user: "u", content: "Prefers window seats!!"})
	resp := e.search("acme", retriever.SearchRequest{Query: "window seats", UserID: "u"})
	if len(resp.Results) != 1 || resp.Results[0].ID != a.ID.String() {
		t.Fatalf("want only the most important copy, got %v", ids(resp.Results))
	}
}

func TestTurnsLayer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	e.addTurn("acme", "u", "s1", "t1", memory.RoleUser, "My locker code is 4512, remember it", at)
	e.addTurn("acme", "u2", "s1", "t2", memory.RoleUser, "My locker code is 9999", at)
	e.addTurn("globex", "u", "s1", "t3", memory.RoleUser, "My locker code is 1111", at)
	m := e.add("acme", mem{user: "u", content: "Locker is on the second floor", turns: []string{"t1"}})
	resp := e.search("acme", retriever.SearchRequest{Query: "locker code", UserID: "u",
		Layers: []string{retriever.LayerMemories, retriever.LayerTurns}})
	if len(resp.Results) != 2 {
		t.Fatalf("want one turn and one memory, got %+v", resp.Results)
	}
	for _, r := range resp.Results {
		switch r.Layer {
		case retriever.LayerTurns:
			if r.TurnID != "t1" || r.SessionID != "s1" || r.Role != memory.RoleUser || r.OccurredAt == nil || !r.OccurredAt.Equal(at) {
				t.Errorf("turn result %+v", r)
			}
		case retriever.LayerMemories:
			if r.ID != m.ID.String() || len(r.SourceTurnIDs) != 1 || r.SourceTurnIDs[0] != "t1" {
				t.Errorf("memory result %+v: want lineage t1", r)
			}
		}
	}
}

func TestSearchValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	api := httpapi.Config{Retriever: e.r}
	srv := server(t, api, "acme")
	tests := []struct {
		body, field string
	}{
		{`{"query":"x"}`, "user_id"},
		{`{"query":"x","user_id":"u","top_k":101}`, "top_k"},
		{`{"query":"x","user_id":"u","statuses":["archived"]}`, "statuses"},
		{`{"query":"x","user_id":"u","types":["dream"]}`, "types"},
		{`{"query":"x","user_id":"u","layers":["vectors"]}`, "layers"},
		{`{"query":"x","user_id":"u","threshold":2}`, "threshold"},
		{`{"query":"x","user_id":"u","time_field":"created"}`, "time_field"},
		{`{"query":"x","user_id":"u","bogus":1}`, "bogus"},
		{`{"query":"x","scope":"agent"}`, "agent_id"},
	}
	for _, tc := range tests {
		var body struct {
			Error struct{ Code, Field string }
		}
		if code := do(t, srv, "POST", "/v1/search", tc.body, &body); code != 400 || body.Error.Field != tc.field {
			t.Errorf("%s: got %d field %q, want 400 field %q", tc.body, code, body.Error.Field, tc.field)
		}
	}
	var body struct{ Error struct{ Field string } }
	if code := do(t, srv, "POST", "/v1/context", `{"user_id":"u","budget_tokens":40000}`, &body); code != 400 || body.Error.Field != "budget_tokens" {
		t.Errorf("context budget: got %d %q", code, body.Error.Field)
	}
}

// TestSearchRefusesUnstorableInput: a metadata filter PostgreSQL cannot hold as jsonb,
// or a time RFC 3339 cannot write in UTC, is a field error from Search itself (the
// console calls it without the HTTP edge), not a database error.
func TestSearchRefusesUnstorableInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	west := time.FixedZone("", -(23*3600 + 59*60))
	east := time.FixedZone("", 23*3600+59*60)
	late := time.Date(9999, 12, 31, 23, 59, 59, 0, west) // year 10000 in UTC
	early := time.Date(0, 1, 1, 0, 0, 0, 0, east)        // year -1 in UTC
	for _, tc := range []struct {
		name  string
		req   retriever.SearchRequest
		field string
	}{
		{"NUL in a value", retriever.SearchRequest{Metadata: map[string]any{"k": "a\x00"}}, "metadata.k"},
		{"NUL in a key", retriever.SearchRequest{Metadata: map[string]any{"a\x00": "v"}}, "metadata.a\x00"},
		{"invalid UTF-8 in a value", retriever.SearchRequest{Metadata: map[string]any{"k": "\xff"}}, "metadata.k"},
		{"number out of range", retriever.SearchRequest{Metadata: map[string]any{"n": json.Number("1e999999")}}, "metadata.n"},
		{"infinite number", retriever.SearchRequest{Metadata: map[string]any{"n": math.Inf(1)}}, "metadata.n"},
		{"from in year 10000", retriever.SearchRequest{From: &late}, "from"},
		{"to in year -1", retriever.SearchRequest{To: &early}, "to"},
		{"as_of in year 10000", retriever.SearchRequest{AsOf: &late}, "as_of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.UserID, tc.req.Query = "u1", "deploy"
			_, err := e.r.Search(testCtx(t), "acme", tc.req)
			var fe *memory.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Search: %v, want a field error on %q", err, tc.field)
			}
		})
	}
}

func TestThresholdAndFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	old := e.add("acme", mem{user: "u", content: "Visited Rome for the marathon", typ: memory.Episodic, cat: memory.CatEvent,
		validFrom: time.Now().Add(-400 * 24 * time.Hour)})
	recent := e.add("acme", mem{user: "u", content: "Signed up for the Paris marathon", typ: memory.Episodic, cat: memory.CatEvent})
	e.add("acme", mem{user: "u", content: "Marathon training plan: run five times a week", typ: memory.Procedural, cat: memory.CatSkill})
	from := time.Now().Add(-30 * 24 * time.Hour)
	resp := e.search("acme", retriever.SearchRequest{Query: "marathon", UserID: "u", Types: []memory.Type{memory.Episodic}, From: &from})
	if len(resp.Results) != 1 || resp.Results[0].ID != recent.ID.String() {
		t.Errorf("type and time filter: got %v, want only %s (not %s)", ids(resp.Results), recent.ID, old.ID)
	}
	resp = e.search("acme", retriever.SearchRequest{Query: "marathon", UserID: "u", Categories: []memory.Category{memory.CatSkill}})
	if len(resp.Results) != 1 || resp.Results[0].Type != memory.Procedural {
		t.Errorf("category filter: got %+v", resp.Results)
	}
	resp = e.search("acme", retriever.SearchRequest{Query: "marathon", UserID: "u", Threshold: 0.99})
	if len(resp.Results) != 0 {
		t.Errorf("threshold 0.99 let %d results through", len(resp.Results))
	}
	for _, r := range e.search("acme", retriever.SearchRequest{Query: "marathon", UserID: "u"}).Results {
		if r.Score <= 0 || r.Score > 1 {
			t.Errorf("score %v outside (0,1]", r.Score)
		}
	}
}

// TestMemoryLayerWeight checks that with both layers a memory's fused score is scaled
// by MemoryLayerWeight, so a turn and a memory each ranked first on their keyword side
// are ordered turn first by default, and equal with weight 1.
func TestMemoryLayerWeight(t *testing.T) {
	t.Parallel()
	for _, w := range []float64{0, 1} { // 0: the default, 0.95
		e := newEnv(t, nil, func(c *retriever.Config) { c.MemoryLayerWeight = w })
		at := time.Now().Add(-time.Hour).UTC()
		e.addTurn("acme", "u", "s1", "t1", memory.RoleUser, "The harbour ferry leaves at noon", at)
		e.add("acme", mem{user: "u", content: "Takes the harbour ferry to work"})
		resp := e.search("acme", retriever.SearchRequest{Query: "harbour ferry", UserID: "u",
			Layers: []string{retriever.LayerMemories, retriever.LayerTurns}})
		if len(resp.Results) != 2 {
			t.Fatalf("weight %v: %v", w, ids(resp.Results))
		}
		rrf := map[string]float64{}
		for _, r := range resp.Results {
			rrf[r.Layer] = r.Components.RRF
		}
		want := 0.95
		if w == 1 {
			want = 1
		}
		if d := rrf[retriever.LayerMemories] - want; d > 1e-9 || d < -1e-9 || rrf[retriever.LayerTurns] != 1 {
			t.Errorf("weight %v: rrf %v, want memories %v and turns 1", w, rrf, want)
		}
	}
}

// TestLayersInParallel checks that a search of both layers answers the same whether
// its turns layer runs on a connection of its own, beside the memories, or after
// them in the same transaction (no helper slot free), and that another tenant's turns
// stay out either way.
func TestLayersInParallel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	if e.r.Helpers() == 0 {
		t.Fatal("the test pool leaves no helper slot")
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	e.addTurn("acme", "u", "s1", "t1", memory.RoleUser, "The greenhouse heater trips the breaker at night", at)
	e.addTurn("acme", "u", "s1", "t2", memory.RoleUser, "Seedlings need the heater above ten degrees", at.Add(time.Minute))
	e.addTurn("globex", "u", "s1", "t3", memory.RoleUser, "Our greenhouse heater is brand new", at)
	e.add("acme", mem{user: "u", content: "Grows tomato seedlings in a greenhouse", turns: []string{"t2"}})
	e.add("acme", mem{user: "u", content: "The greenhouse breaker is in the shed"})
	req := retriever.SearchRequest{Query: "greenhouse heater breaker", UserID: "u",
		Layers: []string{retriever.LayerMemories, retriever.LayerTurns}}
	describe := func(resp retriever.SearchResponse) string {
		var b strings.Builder
		for _, r := range resp.Results {
			fmt.Fprintf(&b, "%s %s%s %.6f\n", r.Layer, r.ID, r.TurnID, r.Score)
		}
		return b.String()
	}
	parallel := describe(e.search("acme", req))
	release := e.r.HoldHelpers()
	serial := describe(e.search("acme", req))
	release()
	if parallel != serial {
		t.Fatalf("parallel layers:\n%s\none transaction:\n%s", parallel, serial)
	}
	if !strings.Contains(parallel, "turns t1") || !strings.Contains(parallel, "memories") || strings.Contains(parallel, "t3") {
		t.Errorf("results:\n%s\nwant t1 and the memories, never t3", parallel)
	}
}
