package consolidator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/consolidator/resolvertest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
)

const tenant = "acme"

func testCtx(t *testing.T) context.Context { return resolvertest.Ctx(t) }

func hashEmbedder(t *testing.T) *llm.HashEmbedder { return resolvertest.HashEmbedder(t) }

// testDB is a store on a fresh database and its pool, for test SQL (pgtest.Count).
type testDB struct {
	*memory.Store
	pool *pgxpool.Pool
}

func newTestDB(t *testing.T) testDB {
	t.Helper()
	pool := pgtest.Pool(t)
	return testDB{Store: memory.NewStore(pool), pool: pool}
}

func newResolver(t *testing.T, judge consolidator.Judge) (testDB, *consolidator.Resolver) {
	t.Helper()
	s := newTestDB(t)
	return s, consolidator.NewResolver(s.Store, hashEmbedder(t), judge, consolidator.ResolverConfig{}, nil)
}

// cand builds a trusted user candidate of tenant; opts adjust it.
func cand(user, content string, opts ...resolvertest.Option) memory.Candidate {
	return resolvertest.Candidate(tenant, user, content, opts...)
}

func withKey(k string) resolvertest.Option      { return resolvertest.WithKey(k) }
func validFrom(t time.Time) resolvertest.Option { return resolvertest.ValidFrom(t) }

func resolve(t *testing.T, r *consolidator.Resolver, c memory.Candidate, want consolidator.DecisionKind) consolidator.Decision {
	t.Helper()
	return resolvertest.Resolve(t, r, c, want)
}

func detail(t *testing.T, s testDB, id uuid.UUID) memory.Detail {
	t.Helper()
	d, err := s.Detail(testCtx(t), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func countMemories(t *testing.T, s testDB, user string) int {
	t.Helper()
	return pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memories WHERE user_id = $1`, user)
}

func TestSupersedeSameKey(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	first := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	second := first.AddDate(0, 0, 7)
	d1 := resolve(t, r, cand("u1", "以后排会尽量别放在周五下午", withKey("meeting.avoid_time"), validFrom(first)), consolidator.KindAdd)
	d2 := resolve(t, r, cand("u1", "周五下午开会也可以了", withKey("meeting.avoid_time"), validFrom(second)), consolidator.KindSupersede)
	if d2.MemoryID != d1.MemoryID {
		t.Fatalf("supersede wrote memory %s, want a new version of %s", d2.MemoryID, d1.MemoryID)
	}
	d := detail(t, s, d1.MemoryID)
	if len(d.Versions) != 2 {
		t.Fatalf("got %d versions, want 2", len(d.Versions))
	}
	v1, v2 := d.Versions[0], d.Versions[1]
	if v1.Status != memory.StatusSuperseded || v2.Status != memory.StatusActive || v2.Change != memory.ChangeSupersede {
		t.Fatalf("statuses: v1 %s, v2 %s (%s)", v1.Status, v2.Status, v2.Change)
	}
	if v1.ValidTo == nil || !v1.ValidTo.Equal(second) || !v2.ValidFrom.Equal(second) {
		t.Fatalf("v1.valid_to %v, v2.valid_from %v, want both %v", v1.ValidTo, v2.ValidFrom, second)
	}
	if v1.Content != "以后排会尽量别放在周五下午" || d.Memory.Content != "周五下午开会也可以了" || d.Memory.Status != memory.StatusActive {
		t.Fatalf("memory is %q (%s), v1 %q", d.Memory.Content, d.Memory.Status, v1.Content)
	}
	// As of the first week the old rule held; afterwards the new one.
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{first.AddDate(0, 0, 3), v1.Content},
		{second.AddDate(0, 0, 1), v2.Content},
	} {
		v, err := s.AsOf(testCtx(t), tenant, d1.MemoryID, tc.at)
		if err != nil || v.Content != tc.want {
			t.Fatalf("as of %s: %q, %v; want %q", tc.at, v.Content, err, tc.want)
		}
	}
}

func TestSupersedeWithoutKey(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	d1 := resolve(t, r, cand("u1", "I love Chinese food"), consolidator.KindAdd)
	d2 := resolve(t, r, cand("u1", "I hate Chinese food", validFrom(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))), consolidator.KindSupersede)
	if d2.MemoryID != d1.MemoryID {
		t.Fatalf("supersede went to %s, want %s", d2.MemoryID, d1.MemoryID)
	}
	d := detail(t, s, d1.MemoryID)
	if d.Memory.Content != "I hate Chinese food" || d.Memory.Status != memory.StatusActive {
		t.Fatalf("memory: %q %s", d.Memory.Content, d.Memory.Status)
	}
	if len(d.Versions) != 2 || d.Versions[0].Content != "I love Chinese food" || d.Versions[0].Status != memory.StatusSuperseded {
		t.Fatalf("versions: %+v", d.Versions)
	}
	if n := countMemories(t, s, "u1"); n != 1 {
		t.Fatalf("%d memories, want 1 (nothing deleted, nothing duplicated)", n)
	}
}

func TestConfirmRaisesConfidence(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	d1 := resolve(t, r, cand("u1", "The user prefers window seats on flights."), consolidator.KindAdd)
	resolve(t, r, cand("u1", "The user prefers window seats on flights."), consolidator.KindConfirm)
	resolve(t, r, cand("u1", "The user prefers window seats on flights."), consolidator.KindConfirm)
	d := detail(t, s, d1.MemoryID)
	if n := countMemories(t, s, "u1"); n != 1 {
		t.Fatalf("%d memories, want 1", n)
	}
	// 0.8 → 1-(0.2)(0.6) = 0.88 → 1-(0.12)(0.6) = 0.928
	if d.Memory.Confidence < 0.92 || d.Memory.Confidence > 0.93 || d.Memory.ConfirmCount != 3 {
		t.Fatalf("confidence %.3f, confirm count %d; want ≈0.928 and 3", d.Memory.Confidence, d.Memory.ConfirmCount)
	}
	if len(d.Lineage) != 3 || len(d.Versions) != 1 {
		t.Fatalf("lineage %d, versions %d; want 3 source turns and 1 version", len(d.Lineage), len(d.Versions))
	}
}

func TestRefinementUpdates(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	d1 := resolve(t, r, cand("u1", "The user likes coffee.", withKey("drink.coffee")), consolidator.KindAdd)
	d2 := resolve(t, r, cand("u1", "The user likes coffee, especially oat milk lattes.", withKey("drink.coffee")), consolidator.KindUpdate)
	if d2.MemoryID != d1.MemoryID {
		t.Fatal("update wrote another memory")
	}
	d := detail(t, s, d1.MemoryID)
	if d.Memory.Content != "The user likes coffee, especially oat milk lattes." || d.Memory.Version != 2 {
		t.Fatalf("memory %q v%d", d.Memory.Content, d.Memory.Version)
	}
	if d.Versions[0].Status != memory.StatusActive || d.Versions[0].ValidTo == nil || d.Versions[1].OldContent != "The user likes coffee." {
		t.Fatalf("versions: %+v", d.Versions)
	}
}

// Twenty distinct facts, each said ten times, resolved by eight goroutines for one
// owner: the owner lock must leave exactly twenty memories and lose no confirmation.
func TestConcurrentOwnerNoDuplicatesNoLostUpdates(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	facts := []string{
		"The user is allergic to peanuts.", "The user's manager is Alice Chen.", "The user prefers dark mode.",
		"The user lives in Berlin.", "The user drives a blue Volvo.", "The user plays chess on weekends.",
		"The user's daughter studies medicine.", "The user speaks fluent Spanish.",
		"The user visits the dentist every six months.", "The user collects vintage vinyl records.",
		"用户对青霉素过敏", "用户的生日是5月20日", "用户喜欢喝乌龙茶", "用户养了一条金毛犬", "用户每周三晚上打羽毛球",
		"用户在杭州买了房子", "用户的车是白色的特斯拉", "用户正在学习吉他", "用户的妹妹在伦敦读书", "用户讨厌下雨天",
	}
	const repeats = 10
	var cands []memory.Candidate
	for i := range repeats {
		for _, f := range facts {
			c := cand("u1", f)
			c.SourceTurnIDs = []string{fmt.Sprintf("turn-%d-%s", i, uuid.NewString()[:8])}
			cands = append(cands, c)
		}
	}
	work := make(chan memory.Candidate)
	var wg sync.WaitGroup
	var failures atomic.Int64
	var firstErr atomic.Value
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				if _, err := r.Resolve(context.Background(), c); err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	for _, c := range cands {
		work <- c
	}
	close(work)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d resolutions failed, first: %v", n, firstErr.Load())
	}
	memories := countMemories(t, s, "u1")
	confirms := pgtest.Count(t, s.pool, tenant, `SELECT coalesce(sum(confirm_count), 0) FROM memories WHERE user_id = 'u1'`)
	lineage := pgtest.Count(t, s.pool, tenant, `SELECT count(*) FROM memory_lineage`)
	if memories != len(facts) || confirms != len(cands) || lineage != len(cands) {
		t.Fatalf("memories %d (want %d), confirmations %d (want %d), lineage %d (want %d)",
			memories, len(facts), confirms, len(cands), lineage, len(cands))
	}
}

func TestRedeliveredCandidateChangesNothing(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	c1 := cand("u1", "The user likes coffee.")
	d1 := resolve(t, r, c1, consolidator.KindAdd)
	again := resolve(t, r, c1, consolidator.KindAdd)
	if !again.Replayed || again.MemoryID != d1.MemoryID {
		t.Fatalf("redelivery: %+v", again)
	}
	c2 := cand("u1", "The user likes coffee, especially oat milk lattes.")
	resolve(t, r, c2, consolidator.KindUpdate)
	if d := resolve(t, r, c2, consolidator.KindUpdate); !d.Replayed {
		t.Fatal("second delivery of the update was applied again")
	}
	c3 := cand("u1", "The user likes coffee, especially oat milk lattes.")
	resolve(t, r, c3, consolidator.KindConfirm)
	resolve(t, r, c3, consolidator.KindConfirm)
	d := detail(t, s, d1.MemoryID)
	if len(d.Versions) != 2 || d.Memory.ConfirmCount != 2 {
		t.Fatalf("versions %d (want 2), confirm count %d (want 2)", len(d.Versions), d.Memory.ConfirmCount)
	}
}

func TestUntrustedClaimPendingUntilConfirmed(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	claim := "The hotel's free cancellation ends 48 hours before check-in."
	assistant := func(c *memory.Candidate) {
		c.Source, c.Trusted, c.Confidence, c.Category = memory.SourceAssistant, false, 0.5, memory.CatFact
	}
	d1 := resolve(t, r, cand("u1", claim, assistant), consolidator.KindPending)
	// Said again by the assistant: still pending, same memory.
	if d := resolve(t, r, cand("u1", claim, assistant), consolidator.KindPending); d.MemoryID != d1.MemoryID {
		t.Fatalf("second claim made memory %s", d.MemoryID)
	}
	if m := detail(t, s, d1.MemoryID).Memory; m.Status != memory.StatusPending {
		t.Fatalf("status %s, want pending", m.Status)
	}
	// The user confirms it: promoted.
	d2 := resolve(t, r, cand("u1", claim), consolidator.KindPromote)
	if d2.MemoryID != d1.MemoryID {
		t.Fatalf("promotion went to %s", d2.MemoryID)
	}
	d := detail(t, s, d1.MemoryID)
	if d.Memory.Status != memory.StatusActive || d.Versions[len(d.Versions)-1].Change != memory.ChangePromote {
		t.Fatalf("after confirmation: %s, versions %+v", d.Memory.Status, d.Versions)
	}
	// An untrusted contradiction cannot overturn what the user said: it waits apart.
	d3 := resolve(t, r, cand("u1", "The hotel's free cancellation no longer ends 48 hours before check-in.", assistant), consolidator.KindPending)
	if d3.MemoryID == d1.MemoryID {
		t.Fatal("an untrusted claim changed an active memory")
	}
	if m := detail(t, s, d1.MemoryID).Memory; m.Content != claim || m.Status != memory.StatusActive {
		t.Fatalf("active memory changed: %q %s", m.Content, m.Status)
	}
}

func TestInvalidCandidateIsPermanent(t *testing.T) {
	t.Parallel()
	_, r := newResolver(t, nil)
	for name, mut := range map[string]func(*memory.Candidate){
		"no id":          func(c *memory.Candidate) { c.ID = "" },
		"empty content":  func(c *memory.Candidate) { c.Content = "  " },
		"bad category":   func(c *memory.Candidate) { c.Category = "feelings" },
		"bad confidence": func(c *memory.Candidate) { c.Confidence = 1.5 },
		"no user":        func(c *memory.Candidate) { c.UserID = "" },
		"bad tenant":     func(c *memory.Candidate) { c.Tenant = "a b" },
		"no source":      func(c *memory.Candidate) { c.Source = "" },
	} {
		_, err := r.Resolve(testCtx(t), cand("u1", "The user likes tea.", mut))
		if !streams.IsPermanent(err) || !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: got %v, want a permanent ErrInvalid", name, err)
		}
	}
}

func TestOwnersAreSeparate(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	resolve(t, r, cand("u1", "The user likes tea."), consolidator.KindAdd)
	resolve(t, r, cand("u2", "The user likes tea."), consolidator.KindAdd)
	other := cand("u1", "The user likes tea.")
	other.Tenant = "globex"
	resolve(t, r, other, consolidator.KindAdd)
	if countMemories(t, s, "u1") != 1 || countMemories(t, s, "u2") != 1 {
		t.Fatal("owners or tenants were merged")
	}
}

func TestOlderContradictionDoesNotOverrideNewer(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	jan, feb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	d1 := resolve(t, r, cand("u1", "The user lives in Munich.", withKey("user.location"), validFrom(feb)), consolidator.KindAdd)
	// Delivered late: said in January, before the move.
	resolve(t, r, cand("u1", "The user lives in Berlin.", withKey("user.location"), validFrom(jan)), consolidator.KindNoop)
	if m := detail(t, s, d1.MemoryID).Memory; m.Content != "The user lives in Munich." || m.Version != 1 {
		t.Fatalf("memory %q v%d", m.Content, m.Version)
	}
}

// Sentences written for this test, not taken from any evaluation set.
func TestSupersedeRetiresRetellingsOfTheOldValue(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	told := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	later := told.AddDate(0, 2, 0)
	loc := resolve(t, r, cand("u1", "The user lives in Valparaiso", withKey("user.location"), validFrom(told)), consolidator.KindAdd)
	retold := resolve(t, r, cand("u1", "The user lives in Valparaiso, so book calls on Chilean afternoons",
		withKey("meeting.preferred_time"), validFrom(told)), consolidator.KindAdd)
	other := resolve(t, r, cand("u1", "The user's sister also lives in Valparaiso", validFrom(told.AddDate(0, 0, 1))), consolidator.KindAdd)
	resolve(t, r, cand("u1", "The user lives in Rotterdam", withKey("user.location"), validFrom(later)), consolidator.KindSupersede)
	if m := detail(t, s, loc.MemoryID).Memory; m.Content != "The user lives in Rotterdam" {
		t.Fatalf("slot holds %q", m.Content)
	}
	if m := detail(t, s, retold.MemoryID).Memory; m.Status != memory.StatusDeprecated {
		t.Errorf("the retelling of the old value is %s, want deprecated", m.Status)
	}
	// Told at another time, the same name is another fact.
	if m := detail(t, s, other.MemoryID).Memory; m.Status != memory.StatusActive {
		t.Errorf("a memory told apart is %s, want active", m.Status)
	}
}

// Sentences written for this test, not taken from any evaluation set.
func TestPartingWithAThingRetiresWhatWasSaidOfIt(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	told := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	said := resolve(t, r, cand("u1", "The clutch on the user's van slips on every hill", validFrom(told)), consolidator.KindAdd)
	kept := resolve(t, r, cand("u1", "The user's bike needs a new chain", validFrom(told)), consolidator.KindAdd)
	sold := cand("u1", "The user sold the old van", validFrom(told.AddDate(0, 1, 0)))
	sold.Metadata = map[string]any{"parted_with": "van"}
	resolve(t, r, sold, consolidator.KindAdd)
	if m := detail(t, s, said.MemoryID).Memory; m.Status != memory.StatusDeprecated {
		t.Errorf("what was said of the sold van is %s, want deprecated", m.Status)
	}
	if m := detail(t, s, kept.MemoryID).Memory; m.Status != memory.StatusActive {
		t.Errorf("the bike's memory is %s, want active", m.Status)
	}
}

// Sentences written for this test, not taken from any evaluation set.
func TestMistypedNumberIsRewrittenWhereverCopied(t *testing.T) {
	t.Parallel()
	s, r := newResolver(t, nil)
	told := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	addr := resolve(t, r, cand("u1", "The user's delivery address is Linden Court, flat 2714", validFrom(told)), consolidator.KindAdd)
	fix := cand("u1", "The user said the flat number is 2741, the digits were swapped", validFrom(told.AddDate(0, 0, 1)))
	fix.Metadata = map[string]any{"corrects_like": "2741"}
	resolve(t, r, fix, consolidator.KindSupersede)
	got := detail(t, s, addr.MemoryID)
	if got.Memory.Content != "The user's delivery address is Linden Court, flat 2741" || got.Memory.Status != memory.StatusActive {
		t.Fatalf("the address is %q (%s), want the right number and still active", got.Memory.Content, got.Memory.Status)
	}
	if len(got.Versions) != 2 || got.Versions[0].Content != "The user's delivery address is Linden Court, flat 2714" {
		t.Fatalf("the mistyped number is not in history: %+v", got.Versions)
	}
}

// Sentences written for this test, not taken from any evaluation set. The resolver
// sees only its two nearest memories here: what was said of the person who left is read
// by name, however far its vector is.
func TestSomeoneWhoLeftRetiresWhatWasSaidOfThem(t *testing.T) {
	t.Parallel()
	s := newTestDB(t)
	r := consolidator.NewResolver(s.Store, hashEmbedder(t), nil, consolidator.ResolverConfig{K: 2}, nil)
	told := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	add := func(content string, typ memory.Type) consolidator.Decision {
		c := cand("u1", content, validFrom(told))
		c.Type = typ
		return resolve(t, r, c, consolidator.KindAdd)
	}
	physio := add("Priya at the Elm Street clinic treats the user's shoulder", memory.Semantic)
	visit := add("The user brought Priya homemade lemon cake", memory.Episodic)
	gone := add("The user's old coach Brandt retired from the rowing club", memory.Episodic)
	kept := add("The user stretches every morning before work", memory.Semantic)
	near1 := add("The new physio at the clinic works on Tuesdays and Fridays", memory.Semantic)
	near2 := add("The clinic booked the user's physio sessions for the spring", memory.Semantic)
	cleaner := add("用户每周请小何来打扫卫生", memory.Semantic)

	news := cand("u1", "Priya retired, so the clinic booked the user's sessions with a new physio", validFrom(told.AddDate(0, 1, 0)))
	news.Metadata = map[string]any{"departed": "Priya|Brandt|小何"}
	if _, err := r.Resolve(testCtx(t), news); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		d    consolidator.Decision
		want memory.Status
	}{
		{"what Priya did", physio, memory.StatusDeprecated},
		{"an event with Priya", visit, memory.StatusDeprecated},
		{"a memory that told Brandt's own retirement", gone, memory.StatusActive},
		{"a memory naming no one", kept, memory.StatusActive},
		{"the clinic's timetable", near1, memory.StatusActive},
		{"a name in Chinese", cleaner, memory.StatusDeprecated},
	} {
		if m := detail(t, s, c.d.MemoryID).Memory; m.Status != c.want {
			t.Errorf("%s: %s, want %s", c.name, m.Status, c.want)
		}
	}
	if m := detail(t, s, near2.MemoryID).Memory; m.Status == memory.StatusDeprecated {
		t.Errorf("the clinic's booking was retired: it names no one who left")
	}
}
