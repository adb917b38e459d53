package memory_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
)

func newMemory(user, content string, vecs ...memory.Embedding) memory.NewMemory {
	return memory.NewMemory{
		UserID: user, Scope: memory.ScopeUser, Type: memory.Semantic, Category: memory.CatPreference,
		Content: content, Importance: 0.7, Confidence: 0.8, Source: memory.SourceUser,
		SourceTurnIDs: []string{"t1"}, Embeddings: vecs, Actor: "test", CandidateID: "cand-" + uuid.NewString(),
	}
}

func unit(dims int, hot ...int) []float32 {
	v := make([]float32, dims)
	for _, h := range hot {
		v[h] = 1
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func TestTenantRequired(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	if _, err := s.CreateMemory(ctx, "", newMemory("u1", "x")); !errors.Is(err, memory.ErrNoTenant) {
		t.Fatalf("want ErrNoTenant, got %v", err)
	}
	if _, err := s.Detail(ctx, "", uuid.New()); !errors.Is(err, memory.ErrNoTenant) {
		t.Fatalf("want ErrNoTenant, got %v", err)
	}
	if _, err := s.CreateMemory(ctx, "bad tenant*", newMemory("u1", "x")); !errors.Is(err, memory.ErrBadTenant) {
		t.Fatalf("want ErrBadTenant, got %v", err)
	}
}

func TestRoleCannotBypassRLS(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	if err := memory.CheckRole(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
}

func TestRowLevelSecurityThroughStore(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	a, err := s.CreateMemory(ctx, "tenant-a", newMemory("u1", "A likes tea", memory.Embedding{Model: "m", Vector: unit(4, 0)}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Detail(ctx, "tenant-b", a.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("tenant-b read tenant-a's memory: %v", err)
	}
	content := "B overwrote it"
	if _, err := s.Apply(ctx, "tenant-b", a.ID, memory.Update{Change: memory.ChangeCorrect, Content: &content, Actor: "test"}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("tenant-b updated tenant-a's memory: %v", err)
	}
	ns, err := s.Nearest(ctx, "tenant-b", memory.NearestQuery{UserID: "u1", Model: "m", Vector: unit(4, 0), K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 0 {
		t.Fatalf("tenant-b's nearest search returned %d of tenant-a's memories", len(ns))
	}
	d, err := s.Detail(ctx, "tenant-a", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Memory.Content != "A likes tea" || d.Memory.Version != 1 {
		t.Fatalf("tenant-a's memory changed: %+v", d.Memory)
	}
}

// TestRowLevelSecurityRawSQL runs raw SQL as the application role: without a tenant
// it sees nothing, and as tenant B it cannot read, change or delete tenant A's rows.
func TestRowLevelSecurityRawSQL(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	a, err := s.CreateMemory(ctx, "tenant-a", newMemory("u1", "A likes tea", memory.Embedding{Model: "m", Vector: unit(4, 1)}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.InsertTurn(ctx, "tenant-a", memory.Turn{TurnID: "t1", UserID: "u1", SessionID: "s1", Role: memory.RoleUser, Content: "hi", OccurredAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, "tenant-a", func(tx *memory.Tx) error {
		return tx.PutTurnEmbedding(ctx, "t1", "u1", memory.Embedding{Model: "m", Vector: unit(4, 1)})
	}); err != nil {
		t.Fatal(err)
	}
	tables := []string{"turns", "memories", "memory_versions", "memory_lineage", "memory_embeddings", "turn_embeddings",
		"audit_log", "applied_candidates", "owners"}
	pool := s.Pool()

	// No tenant set: every table looks empty.
	for _, table := range tables {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n != 0 {
			t.Errorf("without a tenant, %s shows %d rows", table, n)
		}
	}
	tag, err := pool.Exec(ctx, "DELETE FROM memories")
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() != 0 {
		t.Fatalf("a tenant-less DELETE removed %d rows", tag.RowsAffected())
	}

	// As tenant B.
	err = s.InTx(ctx, "tenant-b", func(tx *memory.Tx) error {
		raw := tx.Raw()
		for _, table := range tables {
			var n int
			if err := raw.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("tenant-b sees %d rows of %s", n, table)
			}
		}
		for _, q := range []string{
			"UPDATE memories SET content = 'pwned' WHERE id = $1",
			"DELETE FROM memories WHERE id = $1",
			"DELETE FROM memory_versions WHERE memory_id = $1",
			"UPDATE memory_embeddings SET model = 'x' WHERE memory_id = $1",
		} {
			tag, err := raw.Exec(ctx, q, a.ID)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 0 {
				t.Errorf("%q touched %d of tenant-a's rows", q, tag.RowsAffected())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Writing a row for another tenant is refused by the policy's WITH CHECK.
	err = s.InTx(ctx, "tenant-b", func(tx *memory.Tx) error {
		_, err := tx.Raw().Exec(ctx, `INSERT INTO turns (tenant, turn_id, user_id, session_id, role, content, content_hash, occurred_at)
			VALUES ('tenant-a', 'evil', 'u1', 's1', 'user', 'x', '\x00', now())`)
		return err
	})
	if err == nil {
		t.Fatal("tenant-b inserted a row for tenant-a")
	}
	// Moving a row to another tenant is refused too.
	err = s.InTx(ctx, "tenant-a", func(tx *memory.Tx) error {
		_, err := tx.Raw().Exec(ctx, `UPDATE memories SET tenant = 'tenant-b' WHERE id = $1`, a.ID)
		return err
	})
	if err == nil {
		t.Fatal("tenant-a moved a memory into tenant-b")
	}
	d, err := s.Detail(ctx, "tenant-a", a.ID)
	if err != nil || d.Memory.Content != "A likes tea" {
		t.Fatalf("tenant-a's memory was changed: %+v %v", d.Memory, err)
	}
}

func TestVersionHistoryRoundTrip(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	t1 := t0.Add(7 * 24 * time.Hour)
	n := newMemory("u1", "用户希望以后安排会议尽量避开每周五下午")
	n.Key = "meeting.avoid_time"
	n.ValidFrom = t0
	n.SourceTurnIDs = []string{"turn-a"}
	m, err := s.CreateMemory(ctx, "t", n)
	if err != nil {
		t.Fatal(err)
	}
	newContent := "用户表示周五下午开会也可以了"
	m2, err := s.Apply(ctx, "t", m.ID, memory.Update{
		Change: memory.ChangeSupersede, Content: &newContent, ValidFrom: &t1,
		SourceTurnIDs: []string{"turn-b"}, CandidateID: "cand-2", Actor: "resolver", Reason: "same key, new value",
	})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Version != 2 || m2.Content != newContent || !m2.ValidFrom.Equal(t1) {
		t.Fatalf("unexpected memory after supersede: %+v", m2)
	}
	d, err := s.Detail(ctx, "t", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Versions) != 2 {
		t.Fatalf("got %d versions, want 2", len(d.Versions))
	}
	v1, v2 := d.Versions[0], d.Versions[1]
	if v1.Status != memory.StatusSuperseded || v1.ValidTo == nil || !v1.ValidTo.Equal(t1) || !v1.ValidFrom.Equal(t0) {
		t.Fatalf("old version not closed as superseded at %v: %+v", t1, v1)
	}
	if v2.Change != memory.ChangeSupersede || v2.OldContent != n.Content || v2.CandidateID != "cand-2" || v2.ValidTo != nil {
		t.Fatalf("new version wrong: %+v", v2)
	}
	if len(d.Lineage) != 2 {
		t.Fatalf("lineage has %d entries, want 2 (turn-a, turn-b): %+v", len(d.Lineage), d.Lineage)
	}
	// As of a time between the two, the old content was true.
	at, err := s.AsOf(ctx, "t", m.ID, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if at.Version != 1 {
		t.Fatalf("as-of read returned version %d, want 1", at.Version)
	}
	if _, err := s.AsOf(ctx, "t", m.ID, t0.Add(-time.Hour)); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("as-of before creation: want ErrNotFound, got %v", err)
	}
	now, err := s.AsOf(ctx, "t", m.ID, time.Now().Add(time.Minute))
	if err != nil || now.Version != 2 {
		t.Fatalf("as-of now: %+v %v", now, err)
	}
	// The audit log has both writes, with hashes and no content.
	var n2 int
	err = s.InTx(ctx, "t", func(tx *memory.Tx) error {
		return tx.Raw().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE memory_id = $1 AND content_hash IS NOT NULL
			AND NOT details::text LIKE '%周五%'`, m.ID).Scan(&n2)
	})
	if err != nil || n2 != 2 {
		t.Fatalf("audit entries: %d %v", n2, err)
	}
	// Optimistic concurrency on version.
	c := "x"
	if _, err := s.Apply(ctx, "t", m.ID, memory.Update{Change: memory.ChangeCorrect, Content: &c, Actor: "t", ExpectVersion: 1}); !errors.Is(err, memory.ErrVersionMismatch) {
		t.Fatalf("want ErrVersionMismatch, got %v", err)
	}
}

func TestIdempotentInserts(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	turn := memory.Turn{TurnID: "turn-1", UserID: "u1", SessionID: "s1", Role: memory.RoleUser,
		Content: "remember I like tea", OccurredAt: time.Now(), Tool: &memory.ToolCall{Name: "x", Status: "success"}}
	first, err := s.InsertTurn(ctx, "t", turn)
	if err != nil || !first {
		t.Fatalf("first insert: %v %v", first, err)
	}
	if again, err := s.InsertTurn(ctx, "t", turn); err != nil || again {
		t.Fatalf("same turn again: inserted=%v err=%v", again, err)
	}
	// A reused id with other content is refused, not silently dropped (ingest answers
	// it 409; a worker dead-letters it), and the stored turn stays.
	turn.Content = "a different body with the same id"
	second, err := s.InsertTurn(ctx, "t", turn)
	if !errors.Is(err, memory.ErrTurnConflict) || second {
		t.Fatalf("second insert: inserted=%v err=%v", second, err)
	}
	var got memory.Turn
	err = s.InTx(ctx, "t", func(tx *memory.Tx) error {
		var err error
		got, err = tx.GetTurn(ctx, "turn-1")
		return err
	})
	if err != nil || got.Content != "remember I like tea" || got.Tool == nil || got.Tool.Status != "success" {
		t.Fatalf("stored turn: %+v %v", got, err)
	}
	// The same turn id in another tenant is a different turn.
	if ok, err := s.InsertTurn(ctx, "other", turn); err != nil || !ok {
		t.Fatalf("other tenant: %v %v", ok, err)
	}

	// Candidate ledger and the unique candidate id on versions.
	m, err := s.CreateMemory(ctx, "t", newMemory("u1", "likes tea"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, "t", func(tx *memory.Tx) error {
		first, err := tx.RecordCandidate(ctx, "cand-x", m.ID, "confirm", "")
		if err != nil || !first {
			t.Fatalf("first record: %v %v", first, err)
		}
		again, err := tx.RecordCandidate(ctx, "cand-x", m.ID, "confirm", "")
		if err != nil || again {
			t.Fatalf("second record: %v %v", again, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := "likes green tea"
	if _, err := s.Apply(ctx, "t", m.ID, memory.Update{Change: memory.ChangeUpdate, Content: &c, CandidateID: "cand-u", Actor: "t"}); err != nil {
		t.Fatal(err)
	}
	c2 := "likes black tea"
	_, err = s.Apply(ctx, "t", m.ID, memory.Update{Change: memory.ChangeUpdate, Content: &c2, CandidateID: "cand-u", Actor: "t"})
	if !memory.IsUniqueViolation(err) {
		t.Fatalf("re-applying candidate cand-u: want a unique violation, got %v", err)
	}
	d, err := s.Detail(ctx, "t", m.ID)
	if err != nil || d.Memory.Content != c || d.Memory.Version != 2 {
		t.Fatalf("failed re-application left state behind: %+v %v", d.Memory, err)
	}
}

func TestTwoEmbeddingModels(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	var ids []uuid.UUID
	for i := range 3 {
		m, err := s.CreateMemory(ctx, "t", newMemory("u1", "memory",
			memory.Embedding{Model: "small-8", Vector: unit(8, i)},
			memory.Embedding{Model: "big-384", Vector: unit(384, 383-i)}))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	tests := []struct {
		model string
		query []float32
		want  uuid.UUID
	}{
		{"small-8", unit(8, 2), ids[2]},
		{"small-8", unit(8, 0), ids[0]},
		{"big-384", unit(384, 382), ids[1]},
		{"big-384", unit(384, 383), ids[0]},
	}
	for _, tt := range tests {
		ns, err := s.Nearest(ctx, "t", memory.NearestQuery{UserID: "u1", Model: tt.model, Vector: tt.query, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 3 || ns[0].Memory.ID != tt.want || math.Abs(ns[0].Similarity-1) > 1e-5 {
			t.Fatalf("%s: nearest = %+v, want %v first with similarity 1", tt.model, ns, tt.want)
		}
	}
	// Re-embedding with a new model leaves the old vectors in place.
	err := s.InTx(ctx, "t", func(tx *memory.Tx) error {
		var n int
		err := tx.Raw().QueryRow(ctx, `SELECT count(DISTINCT (model, dims)) FROM memory_embeddings`).Scan(&n)
		if n != 2 {
			t.Fatalf("want 2 (model, dims) pairs, got %d", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// A query of the wrong size is an error, not a wrong answer.
	if _, err := s.Nearest(ctx, "t", memory.NearestQuery{UserID: "u1", Model: "small-8", Vector: unit(4, 0)}); err == nil {
		t.Fatal("a 4-dimension query against 8-dimension vectors succeeded")
	}
}

func TestNearestFiltersStatusTypeOwner(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	mk := func(user string, typ memory.Type, status memory.Status, hot int) uuid.UUID {
		n := newMemory(user, "m")
		n.Type, n.Status = typ, status
		n.Embeddings = []memory.Embedding{{Model: "m", Vector: unit(4, hot)}}
		m, err := s.CreateMemory(ctx, "t", n)
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	active := mk("u1", memory.Semantic, memory.StatusActive, 0)
	mk("u2", memory.Semantic, memory.StatusActive, 0)
	pending := mk("u1", memory.Episodic, memory.StatusPending, 0)
	archived := mk("u1", memory.Semantic, memory.StatusArchived, 0)
	ns, err := s.Nearest(ctx, "t", memory.NearestQuery{UserID: "u1", Model: "m", Vector: unit(4, 0)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[uuid.UUID]bool{}
	for _, n := range ns {
		got[n.Memory.ID] = true
	}
	if len(ns) != 2 || !got[active] || !got[pending] || got[archived] {
		t.Fatalf("default statuses: got %v", got)
	}
	ns, err = s.Nearest(ctx, "t", memory.NearestQuery{UserID: "u1", Model: "m", Vector: unit(4, 0), Types: []memory.Type{memory.Semantic}, Statuses: []memory.Status{memory.StatusArchived}})
	if err != nil || len(ns) != 1 || ns[0].Memory.ID != archived {
		t.Fatalf("archived semantic: %+v %v", ns, err)
	}
}

func TestOwnerLockSerialises(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	locked := make(chan struct{})
	release := make(chan struct{})
	unblock := pgtest.Held(t, func() { close(release) })
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(ctx, "t", func(tx *memory.Tx) error {
			if err := tx.LockOwner(ctx, "u1"); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	select {
	case <-locked:
	case err := <-done:
		t.Fatalf("taking the owner lock: %v", err)
	}
	// Another owner is not blocked.
	if err := s.InTx(ctx, "t", func(tx *memory.Tx) error { return tx.LockOwner(ctx, "u2") }); err != nil {
		t.Fatal(err)
	}
	// The same owner is: a short lock timeout fails while the first holds it.
	err := s.InTx(ctx, "t", func(tx *memory.Tx) error {
		if _, err := tx.Raw().Exec(ctx, "SET LOCAL lock_timeout = '200ms'"); err != nil {
			return err
		}
		return tx.LockOwner(ctx, "u1")
	})
	if err == nil {
		t.Fatal("a second transaction took the same owner's lock")
	}
	unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSessionWindow(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		_, err := s.InsertTurn(ctx, "t", memory.Turn{TurnID: uuid.NewString(), UserID: "u1", SessionID: "s1",
			Role: memory.RoleUser, Content: string(rune('a' + i)), OccurredAt: base.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	var w []memory.Turn
	err := s.InTx(ctx, "t", func(tx *memory.Tx) error {
		var err error
		w, err = tx.SessionWindow(ctx, "u1", "s1", base.Add(3*time.Minute), 3, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 3 || w[0].Content != "b" || w[2].Content != "d" {
		t.Fatalf("window: %+v", w)
	}
	_ = pgx.ErrNoRows
}

func TestPutTurnEmbedding(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	ctx := context.Background()
	for _, id := range []string{"t1", "t2"} {
		if _, err := s.InsertTurn(ctx, "tenant-a", memory.Turn{TurnID: id, UserID: "u1", SessionID: "s1",
			Role: memory.RoleUser, Content: "hi " + id, OccurredAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(tenant, turnID string, e memory.Embedding) error {
		return s.InTx(ctx, tenant, func(tx *memory.Tx) error { return tx.PutTurnEmbedding(ctx, turnID, "u1", e) })
	}
	count := func(tenant string) (n int) {
		t.Helper()
		if err := s.InTx(ctx, tenant, func(tx *memory.Tx) error {
			return tx.Raw().QueryRow(ctx, "SELECT count(*) FROM turn_embeddings").Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		name    string
		tenant  string
		turnID  string
		e       memory.Embedding
		wantErr error
	}{
		{"stores", "tenant-a", "t1", memory.Embedding{Model: "m", Vector: unit(4, 0)}, nil},
		{"upserts", "tenant-a", "t1", memory.Embedding{Model: "m", Vector: unit(4, 1)}, nil},
		{"second model", "tenant-a", "t1", memory.Embedding{Model: "m2", Vector: unit(8, 1)}, nil},
		{"unknown turn is a no-op", "tenant-a", "nope", memory.Embedding{Model: "m", Vector: unit(4, 0)}, nil},
		{"another tenant's turn is a no-op", "tenant-b", "t2", memory.Embedding{Model: "m", Vector: unit(4, 0)}, nil},
		{"no model", "tenant-a", "t2", memory.Embedding{Vector: unit(4, 0)}, memory.ErrInvalid},
		{"no vector", "tenant-a", "t2", memory.Embedding{Model: "m"}, memory.ErrInvalid},
	}
	for _, tc := range tests {
		if err := put(tc.tenant, tc.turnID, tc.e); !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: got %v, want %v", tc.name, err, tc.wantErr)
		}
	}
	if n := count("tenant-a"); n != 2 {
		t.Fatalf("tenant-a has %d turn vectors, want 2 (t1 under m and m2)", n)
	}
	if n := count("tenant-b"); n != 0 {
		t.Fatalf("tenant-b sees %d of tenant-a's turn vectors", n)
	}
	var got []float32
	if err := s.InTx(ctx, "tenant-a", func(tx *memory.Tx) error {
		var v pgvector.Vector
		err := tx.Raw().QueryRow(ctx, "SELECT embedding FROM turn_embeddings WHERE turn_id = 't1' AND model = 'm'").Scan(&v)
		got = v.Slice()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got[1] != 1 {
		t.Fatalf("the upsert kept the old vector: %v", got)
	}
	// Retention deleting a turn's content takes its vectors with it.
	if err := s.InTx(ctx, "tenant-a", func(tx *memory.Tx) error {
		_, err := tx.Raw().Exec(ctx, "UPDATE turns SET content = NULL, search_text = '' WHERE turn_id = 't1'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := count("tenant-a"); n != 0 {
		t.Fatalf("%d vectors left of a purged turn", n)
	}
	if err := put("tenant-a", "t1", memory.Embedding{Model: "m", Vector: unit(4, 0)}); err != nil {
		t.Fatal(err)
	}
	if n := count("tenant-a"); n != 0 {
		t.Fatalf("a purged turn was given a vector")
	}
}
