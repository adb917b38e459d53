package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// lifecycleEnv adds JetStream (topology and the working-memory bucket) to nightlyEnv.
type lifecycleEnv struct {
	*nightlyEnv
	js    jetstream.JetStream
	tasks *retriever.TaskStore
	lc    *Lifecycle
}

func newLifecycleEnv(t *testing.T) *lifecycleEnv {
	t.Helper()
	e := newNightlyEnv(t)
	_, js := natstest.Start(t).Connect(t)
	if err := streams.EnsureTopology(e.ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	tasks, err := retriever.NewTaskStore(e.ctx, js, retriever.TaskStoreConfig{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	lc := NewLifecycle(e.store, js, tasks, nil)
	// Erasure compacts the tables as the owner role, as engram serve does with the
	// owner's URL.
	owner, err := memory.ConnectOwner(e.ctx, pgtest.OwnerURLOf(t, e.pool.Config().ConnString()), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	lc.SetCompactor(memory.NewStore(owner))
	return &lifecycleEnv{nightlyEnv: e, js: js, tasks: tasks, lc: lc}
}

func (e *lifecycleEnv) publish(subject string, header nats.Header) {
	e.t.Helper()
	m := nats.NewMsg(subject)
	m.Data = []byte(`{"payload":"` + uuid.NewString() + `"}`)
	for k, v := range header {
		m.Header[k] = v
	}
	if _, err := e.js.PublishMsg(e.ctx, m); err != nil {
		e.t.Fatalf("publishing to %s: %v", subject, err)
	}
}

func (e *lifecycleEnv) subjectCount(stream, subject string) int {
	e.t.Helper()
	s, err := e.js.Stream(e.ctx, stream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(e.ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		e.t.Fatal(err)
	}
	return int(info.State.Subjects[subject])
}

// seedUser gives a user everything deletion must remove: distilled and episodic
// memories (versions, lineage, embeddings, ledger), turns, messages in every stream,
// working memory, retrieval records and a session summary.
func (e *lifecycleEnv) seedUser(user string) {
	e.t.Helper()
	e.seedPayments("acme", user)
	turnSubj, _ := streams.TurnSubject("acme", user)
	candSubj, _ := streams.CandidateSubject("acme", user)
	e.publish(turnSubj, nil)
	e.publish(turnSubj, nil)
	e.publish(candSubj, nil)
	e.publish("engram.dlq.extract.acme", nats.Header{streams.HeaderDLQSubject: {turnSubj}})
	e.publish("engram.dlq.resolve.acme", nats.Header{streams.HeaderDLQSubject: {candSubj}})
	e.publish("engram.dlq.extract._", nats.Header{streams.HeaderDLQSubject: {turnSubj}})
	if _, err := e.tasks.Put(e.ctx, "acme", "task-"+user, json.RawMessage(`{"step":2}`)); err != nil {
		e.t.Fatal(err)
	}
	// Two tasks of the user's own (no turn names them) under ids every user has.
	for _, task := range []string{"inbox", "draft"} {
		if _, err := e.tasks.PutFor(e.ctx, "acme", user, task, json.RawMessage(`{"step":3}`)); err != nil {
			e.t.Fatal(err)
		}
	}
	e.exec("acme", `INSERT INTO retrievals (tenant, id, kind, query_hash, user_id, session_id, memory_ids)
		SELECT 'acme', $1, 'search', '\x00', $2, 's1', array_agg(id) FROM memories WHERE user_id = $2`, uuid.New(), user)
	e.exec("acme", `INSERT INTO session_summaries (tenant, user_id, session_id, summary, turn_count)
		VALUES ('acme', $1, 's1', 'Earlier the user said: 支付失败', 7)`, user)
	for _, layer := range []string{memory.StatsMemories, memory.StatsTurns} {
		e.exec("acme", `INSERT INTO owner_text_stats (tenant, layer, scope, subject, docs, avg_len, counted_at, terms, dfs, terms_at)
			VALUES ('acme', $1, 'user', $2, 60, 5, now(), '{支付}', '{60}', now())`, layer, user)
	}
}

// userRows counts every row of every table that belongs to or points at the user.
func (e *lifecycleEnv) userRows(user string, memIDs []uuid.UUID, turnIDs []string) map[string]int {
	e.t.Helper()
	ids := make([]string, len(memIDs))
	for i, id := range memIDs {
		ids[i] = id.String()
	}
	out := map[string]int{}
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{
		"turns":              {`SELECT count(*) FROM turns WHERE user_id = $1 OR turn_id = ANY($2)`, []any{user, turnIDs}},
		"memories":           {`SELECT count(*) FROM memories WHERE user_id = $1 OR id = ANY($2)`, []any{user, memIDs}},
		"memory_versions":    {`SELECT count(*) FROM memory_versions WHERE memory_id = ANY($1)`, []any{memIDs}},
		"memory_lineage":     {`SELECT count(*) FROM memory_lineage WHERE memory_id = ANY($1) OR source_id = ANY($2) OR source_id = ANY($3)`, []any{memIDs, turnIDs, ids}},
		"memory_embeddings":  {`SELECT count(*) FROM memory_embeddings WHERE user_id = $1 OR memory_id = ANY($2)`, []any{user, memIDs}},
		"applied_candidates": {`SELECT count(*) FROM applied_candidates WHERE memory_id = ANY($1)`, []any{memIDs}},
		"retrievals":         {`SELECT count(*) FROM retrievals WHERE user_id = $1 OR memory_ids && $2`, []any{user, memIDs}},
		"session_summaries":  {`SELECT count(*) FROM session_summaries WHERE user_id = $1`, []any{user}},
		"owners":             {`SELECT count(*) FROM owners WHERE user_id = $1`, []any{user}},
		"progress":           {`SELECT count(*) FROM consolidation_progress WHERE user_id = $1`, []any{user}},
		"text statistics":    {`SELECT count(*) FROM owner_text_stats WHERE scope = 'user' AND subject = $1`, []any{user}},
	} {
		out[name] = e.count("acme", q.sql, q.args...)
	}
	return out
}

// idsOf lists the user's memory and turn ids (through the export's readers).
func (e *lifecycleEnv) idsOf(user string) ([]uuid.UUID, []string) {
	e.t.Helper()
	var mids []uuid.UUID
	var tids []string
	err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		ms, err := tx.ExportMemories(e.ctx, user, uuid.Nil, 1<<20)
		if err != nil {
			return err
		}
		for _, m := range ms {
			mids = append(mids, m.Memory.ID)
		}
		ts, err := tx.ExportTurns(e.ctx, user, "", 1<<20)
		if err != nil {
			return err
		}
		for _, t := range ts {
			tids = append(tids, t.Turn.TurnID)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return mids, tids
}

func TestDeleteUser(t *testing.T) {
	t.Parallel()
	e := newLifecycleEnv(t)
	e.seedUser("u1")
	e.seedUser("u2")
	e.run(consolidator.RunOptions{})
	u1Mem, u1Turns := e.idsOf("u1")
	// A global memory derived from u1's turn and memory: its links to u1 must go,
	// the memory itself (not u1's) stays.
	var global uuid.UUID
	err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		m, err := tx.CreateMemory(e.ctx, memory.NewMemory{Scope: memory.ScopeGlobal, Type: memory.Semantic,
			Category: memory.CatFact, Content: "Payments fail often this month", Importance: 0.5, Confidence: 0.8,
			Source: memory.SourceManual, SourceTurnIDs: u1Turns[:1], SourceMemoryIDs: []string{u1Mem[0].String()}, Actor: "test"})
		global = m.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	u2Mem, u2Turns := e.idsOf("u2")
	before := e.userRows("u2", u2Mem, u2Turns)

	rep, err := e.lc.DeleteUser(e.ctx, "acme", "u1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != 8 || rep.Turns != 7 || rep.Versions < 13 || rep.Embeddings != 8 || rep.Ledger != 1 ||
		rep.ForeignLineage != 2 || rep.Retrievals != 1 || rep.SessionSummaries != 1 || rep.TaskStates != 1 || rep.UserTaskStates != 2 ||
		rep.TurnMessages != 2 || rep.CandidateMsgs != 1 || rep.DeadLetters != 3 || len(rep.Skipped) != 0 ||
		!slices.Contains(rep.Compacted, "turns") || !slices.Contains(rep.Compacted, "memories") {
		t.Fatalf("report %+v", rep)
	}
	for table, n := range e.userRows("u1", u1Mem, u1Turns) {
		if n != 0 {
			t.Errorf("%s still holds %d rows of u1", table, n)
		}
	}
	turnSubj, _ := streams.TurnSubject("acme", "u1")
	candSubj, _ := streams.CandidateSubject("acme", "u1")
	if n := e.subjectCount(streams.TurnsStream, turnSubj) + e.subjectCount(streams.CandidatesStream, candSubj); n != 0 {
		t.Errorf("%d messages of u1 left in TURNS and CANDIDATES", n)
	}
	dlq, err := streams.NewDLQ(e.js).List(e.ctx, streams.DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dlq) != 3 {
		t.Errorf("%d dead letters left, want u2's 3", len(dlq))
	}
	for _, d := range dlq {
		if strings.HasSuffix(d.Subject, ".u1") {
			t.Errorf("dead letter %d of u1 left", d.ID)
		}
	}
	if _, err := e.tasks.Get(e.ctx, "acme", "task-u1"); !errors.Is(err, retriever.ErrTaskNotFound) {
		t.Errorf("u1's task state: %v", err)
	}
	for _, task := range []string{"inbox", "draft"} {
		if _, err := e.tasks.GetFor(e.ctx, "acme", "u1", task); !errors.Is(err, retriever.ErrTaskNotFound) {
			t.Errorf("u1's own task %s: %v", task, err)
		}
		if _, err := e.tasks.GetFor(e.ctx, "acme", "u2", task); err != nil {
			t.Errorf("u2's own task %s: %v", task, err)
		}
	}
	if n := e.count("acme", `SELECT count(*) FROM audit_log WHERE action = 'delete_user' AND subject = 'u1'`); n != 1 {
		t.Errorf("%d delete_user audit rows", n)
	}
	if n := e.count("acme", `SELECT count(*) FROM memories WHERE id = $1`, global); n != 1 {
		t.Error("the global memory was deleted")
	}

	// u2 is intact and still retrievable.
	if after := e.userRows("u2", u2Mem, u2Turns); !equalCounts(before, after) {
		t.Errorf("u2's rows changed: before %v, after %v", before, after)
	}
	u2Subj, _ := streams.TurnSubject("acme", "u2")
	if n := e.subjectCount(streams.TurnsStream, u2Subj); n != 2 {
		t.Errorf("u2 has %d turn messages, want 2", n)
	}
	if _, err := e.tasks.Get(e.ctx, "acme", "task-u2"); err != nil {
		t.Errorf("u2's task state: %v", err)
	}
	r, err := retriever.NewRetriever(e.store, e.emb, retriever.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Search(e.ctx, "acme", retriever.SearchRequest{Query: "支付失败", UserID: "u2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Results[0].UserID != "u2" {
		t.Fatalf("u2's search: %+v", res.Results)
	}

	// Deleting again finds nothing and fails nowhere.
	rep, err = e.lc.DeleteUser(e.ctx, "acme", "u1", "test")
	if err != nil || rep.Memories != 0 || rep.Turns != 0 || rep.DeadLetters != 0 {
		t.Fatalf("second deletion %+v, %v", rep, err)
	}
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// exportLines splits an export into its records.
func exportLines(t *testing.T, b []byte) []ExportRecord {
	t.Helper()
	var out []ExportRecord
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r ExportRecord
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// normalised strips what legitimately differs between an export and its re-import.
func normalised(rs []ExportRecord) []ExportRecord {
	var out []ExportRecord
	for _, r := range rs {
		switch r.Kind {
		case "memory":
			m := *r.Memory
			m.Tenant, m.UserID = "", ""
			r.Memory = &m
		case "turn":
			tr := *r.Turn
			tr.Tenant, tr.UserID = "", ""
			r.Turn = &tr
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

func TestExportImport(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t)
	e.seedPayments("acme", "u1")
	e.seedPayments("acme", "u2")
	e.run(consolidator.RunOptions{})
	// A deleted turn and an archived memory travel too.
	e.exec("acme", `UPDATE turns SET content = NULL, content_deleted_at = now() WHERE turn_id = (SELECT min(turn_id) FROM turns WHERE user_id = 'u1')`)
	e.exec("acme", `UPDATE memories SET status = 'archived' WHERE content = $1 AND user_id = 'u1'`, otherEpisodes[0])
	lc := NewLifecycle(e.store, nil, nil, nil)

	var buf bytes.Buffer
	rep, err := lc.Export(e.ctx, "acme", "u1", &buf, "test")
	if err != nil || rep.Memories != 8 || rep.Turns != 7 {
		t.Fatalf("export %+v, %v", rep, err)
	}
	exported := exportLines(t, buf.Bytes())
	if exported[0].Kind != "header" || exported[len(exported)-1].Kind != "end" {
		t.Fatalf("export framing: %s … %s", exported[0].Kind, exported[len(exported)-1].Kind)
	}

	imp, err := lc.Import(e.ctx, "globex", "u9", bytes.NewReader(buf.Bytes()), "test")
	if err != nil || imp.Memories != 8 || imp.Turns != 7 || imp.MemoriesSkipped != 0 {
		t.Fatalf("import %+v, %v", imp, err)
	}
	again, err := lc.Import(e.ctx, "globex", "u9", bytes.NewReader(buf.Bytes()), "test")
	if err != nil || again.Memories != 0 || again.MemoriesSkipped != 8 || again.TurnsSkipped != 7 {
		t.Fatalf("second import %+v, %v", again, err)
	}
	if n := e.count("globex", `SELECT count(*) FROM memories`); n != 8 {
		t.Fatalf("globex has %d memories after two imports, want 8", n)
	}

	var back bytes.Buffer
	if _, err := lc.Export(e.ctx, "globex", "u9", &back, "test"); err != nil {
		t.Fatal(err)
	}
	a, b := normalised(exported), normalised(exportLines(t, back.Bytes()))
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("re-imported export differs:\n%s\n%s", ja, jb)
	}
	var distilled int
	for _, r := range b {
		if r.Kind == "memory" && r.Memory.Type == memory.Semantic {
			distilled++
			if len(r.Lineage) != 10 || len(r.Versions) != 1 || len(r.Embeddings) != 1 {
				t.Errorf("distilled memory lineage %d, versions %d, embeddings %d", len(r.Lineage), len(r.Versions), len(r.Embeddings))
			}
		}
	}
	if distilled != 1 {
		t.Fatalf("%d distilled memories re-imported", distilled)
	}
	// The imported vectors serve searches in the new tenant without re-embedding.
	ns, err := e.store.Nearest(e.ctx, "globex", memory.NearestQuery{UserID: "u9", Model: e.emb.Model(),
		Vector: must(e.emb.Embed(e.ctx, []string{paymentEpisodes[0]}))[0], K: 1})
	if err != nil || len(ns) != 1 || ns[0].Similarity < 0.99 {
		t.Fatalf("nearest in globex: %+v, %v", ns, err)
	}

	for _, bad := range []struct{ name, body string }{
		{"empty", ""},
		{"no header", `{"kind":"memory"}`},
		{"truncated", strings.Join(strings.Split(buf.String(), "\n")[:3], "\n")},
		{"garbage", "not json\n"},
	} {
		if _, err := lc.Import(e.ctx, "initech", "u1", strings.NewReader(bad.body), "test"); !errors.Is(err, ErrBadExport) {
			t.Errorf("%s: %v, want ErrBadExport", bad.name, err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestDeletedMemoryStaysDeleted: a hard-deleted memory must not come back when its
// candidate is redelivered or re-extracted (candidate ids are deterministic).
func TestDeletedMemoryStaysDeleted(t *testing.T) {
	t.Parallel()
	e := newLifecycleEnv(t)
	c := memory.Candidate{ID: "cand_erase_1", Tenant: "acme", UserID: "u1", Scope: memory.ScopeUser,
		Type: memory.Semantic, Category: memory.CatPreference, Content: "The user prefers window seats",
		Importance: 0.7, Confidence: 0.9, SourceTurnIDs: []string{"t1"}, ValidFrom: time.Now().UTC(),
		Source: memory.SourceUser, Trusted: true, Extractor: "test", ExtractorVersion: "1"}
	d, err := e.res.Resolve(e.ctx, c)
	if err != nil || d.MemoryID == uuid.Nil {
		t.Fatalf("resolve: %+v %v", d, err)
	}
	if _, err := e.lc.DeleteMemory(e.ctx, "acme", d.MemoryID, "test"); err != nil {
		t.Fatal(err)
	}
	again, err := e.res.Resolve(e.ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.MemoryID != uuid.Nil {
		t.Fatalf("redelivered candidate after deletion: %+v", again)
	}
	if n := e.count("acme", `SELECT count(*) FROM memories`); n != 0 {
		t.Fatalf("the deleted memory came back: %d memories", n)
	}
}

// Compaction needs the owner (or MAINTAIN, PostgreSQL 17): the application role is
// told it may not, rather than VACUUM skipping the tables with a warning only.
func TestCompactNeedsTheRight(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t)
	var version int
	if err := e.pool.QueryRow(e.ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	_, err := e.store.CompactErased(e.ctx)
	if version < 170000 && !errors.Is(err, memory.ErrCannotCompact) {
		t.Fatalf("CompactErased as the application role on PostgreSQL %d: %v, want ErrCannotCompact", version, err)
	}
	if version >= 170000 && err != nil {
		t.Fatalf("CompactErased with MAINTAIN: %v", err)
	}
	lc := NewLifecycle(e.store, nil, nil, nil)
	lc.SetCompactor(e.store)
	rep, err := lc.DeleteUser(e.ctx, "acme", "nobody", "test")
	if err != nil || (version < 170000 && !slices.Contains(rep.Skipped, "compaction")) {
		t.Fatalf("DeleteUser without the right to compact: %+v, %v", rep, err)
	}
}
