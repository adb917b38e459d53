package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
)

// redirect answers a POST with a See Other to a console path (the browser then GETs
// it, so a reload does not repeat the action).
func redirect(w http.ResponseWriter, r *http.Request, path, done string) {
	if done != "" {
		path += "?done=" + url.QueryEscape(done)
	}
	http.Redirect(w, r, Prefix+path, http.StatusSeeOther)
}

func memoryID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, memory.Invalid("id", "not a memory id")
	}
	return id, nil
}

// confirmData is the confirmation step of a destructive action: the same form
// posted again with confirm=yes.
type confirmData struct {
	Question string
	Action   string
	Fields   map[string]string
	Cancel   string
}

// confirmed reports whether a destructive action's form carries the confirmation;
// when not, it shows the confirmation page.
func (c *Console) confirmed(w http.ResponseWriter, r *http.Request, s session, question, cancel string, fields ...string) bool {
	if r.PostFormValue("confirm") == "yes" {
		return true
	}
	d := confirmData{Question: question, Action: r.URL.Path, Fields: map[string]string{}, Cancel: cancel}
	for _, f := range fields {
		d.Fields[f] = r.PostFormValue(f)
	}
	c.render(w, r, http.StatusOK, "confirm.html", &s, view{Title: "Confirm", Data: d})
	return false
}

// ---- users and memories

func (c *Console) users(w http.ResponseWriter, r *http.Request, s session) error {
	us, err := c.cfg.Reader.ConsoleUsers(r.Context(), s.tenant)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "users.html", &s, view{Title: "Users", Nav: "users",
		Data: map[string]any{"Users": us, "Statuses": memory.Statuses()}})
	return nil
}

type filterData struct {
	User       string
	Type       string
	Category   string
	Status     string
	Key        string
	Text       string
	Types      []memory.Type
	Categories []memory.Category
	Statuses   []memory.Status
}

func filterFrom(r *http.Request) filterData {
	q := r.URL.Query()
	return filterData{User: q.Get("user"), Type: q.Get("type"), Category: q.Get("category"), Status: q.Get("status"),
		Key: q.Get("key"), Text: q.Get("text"),
		Types: memory.Types(), Categories: memory.Categories(), Statuses: memory.Statuses()}
}

func (c *Console) memories(w http.ResponseWriter, r *http.Request, s session) error {
	f := filterFrom(r)
	if err := memory.CheckIDs(memory.Field{Name: "user", Value: f.User}); err != nil {
		return err
	}
	if err := memory.CheckTexts(memory.Field{Name: "key", Value: f.Key}, memory.Field{Name: "text", Value: f.Text}); err != nil {
		return err
	}
	mf := memory.MemoryFilter{User: f.User, Type: memory.Type(f.Type), Category: memory.Category(f.Category),
		Status: memory.Status(f.Status), Key: f.Key, Text: f.Text}
	switch {
	case mf.Type != "" && !mf.Type.Valid():
		return memory.Invalid("type", "unknown type")
	case mf.Category != "" && !mf.Category.Valid():
		return memory.Invalid("category", "unknown category")
	case mf.Status != "" && !mf.Status.Valid():
		return memory.Invalid("status", "unknown status")
	}
	ms, err := c.cfg.Reader.ConsoleMemories(r.Context(), s.tenant, mf)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "memories.html", &s, view{Title: "Memories of " + userLabel(f.User), Nav: "users",
		Data: map[string]any{"Filter": f, "Memories": ms}})
	return nil
}

func userLabel(u string) string {
	if u == "" {
		return "no user"
	}
	return u
}

func (c *Console) search(w http.ResponseWriter, r *http.Request, s session) error {
	q := r.URL.Query()
	req := retriever.SearchRequest{Query: q.Get("q"), UserID: q.Get("user"), TopK: 20,
		Statuses: []memory.Status{memory.StatusActive, memory.StatusPending}}
	if err := checkQuery(req.Query, memory.Field{Name: "user", Value: req.UserID}); err != nil {
		return err
	}
	if req.UserID == "" {
		req.Scope = memory.ScopeGlobal
	}
	var res retriever.SearchResponse
	if strings.TrimSpace(req.Query) != "" {
		var err error
		if res, err = c.cfg.Retriever.Search(r.Context(), s.tenant, req); err != nil {
			return err
		}
	}
	c.render(w, r, http.StatusOK, "search.html", &s, view{Title: "Search", Nav: "users",
		Data: map[string]any{"User": req.UserID, "Query": req.Query, "Response": res}})
	return nil
}

func (c *Console) contextCall(w http.ResponseWriter, r *http.Request, s session) error {
	q := r.URL.Query()
	req := retriever.ContextRequest{UserID: q.Get("user"), SessionID: q.Get("session"), Query: q.Get("q")}
	if err := checkQuery(req.Query, memory.Field{Name: "user", Value: req.UserID}, memory.Field{Name: "session", Value: req.SessionID}); err != nil {
		return err
	}
	var res retriever.ContextResponse
	ran := strings.TrimSpace(req.Query) != "" && req.UserID != ""
	if ran {
		var err error
		if res, err = c.cfg.Retriever.Context(r.Context(), s.tenant, req); err != nil {
			return err
		}
	}
	c.render(w, r, http.StatusOK, "context.html", &s, view{Title: "Context", Nav: "users",
		Data: map[string]any{"Request": req, "Response": res, "Ran": ran}})
	return nil
}

// checkQuery checks a search or context call's query (q) and ids. The console checks
// every parameter and form field by the store's rules (memory.CheckTexts, CheckIDs),
// as the API's edge does, before it calls a service: a NUL byte or invalid UTF-8 is a
// 400 naming the field, not a 500 from PostgreSQL.
func checkQuery(q string, ids ...memory.Field) error {
	if err := memory.CheckTexts(memory.Field{Name: "q", Value: q, MaxBytes: retriever.MaxQueryBytes}); err != nil {
		return err
	}
	return memory.CheckIDs(ids...)
}

// ---- one memory

type versionView struct {
	V       memory.Version
	Diff    []diffPart // against the previous version; nil when the content is the same
	Current bool
}

type turnSource struct {
	ID    string
	Turn  *memory.Turn // nil when the tenant no longer has it
	Score string       // in a retrieval: the score it was ranked by, "" when not ranked
}

func (c *Console) memory(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	d, err := c.cfg.Memories.Get(ctx, s.tenant, id)
	if err != nil {
		return err
	}
	vs := make([]versionView, len(d.Versions))
	for i, v := range d.Versions {
		vs[i] = versionView{V: v, Current: v.Version == d.Memory.Version}
		if i > 0 && d.Versions[i-1].Content != v.Content {
			vs[i].Diff = wordDiff(d.Versions[i-1].Content, v.Content)
		}
	}
	slices.Reverse(vs) // newest first
	var turnIDs []string
	var sourceIDs []uuid.UUID
	for _, l := range d.Lineage {
		switch l.Kind {
		case memory.LineageTurn:
			turnIDs = append(turnIDs, l.SourceID)
		case memory.LineageMemory:
			if u, err := uuid.Parse(l.SourceID); err == nil {
				sourceIDs = append(sourceIDs, u)
			}
		}
	}
	turns, err := c.cfg.Reader.ConsoleTurns(ctx, s.tenant, turnIDs)
	if err != nil {
		return err
	}
	byTurn := map[string]*memory.Turn{}
	for i := range turns {
		byTurn[turns[i].TurnID] = &turns[i]
	}
	ts := make([]turnSource, len(turnIDs))
	for i, tid := range turnIDs {
		ts[i] = turnSource{ID: tid, Turn: byTurn[tid]}
	}
	sources, err := c.cfg.Reader.ConsoleMemoriesByID(ctx, s.tenant, sourceIDs)
	if err != nil {
		return err
	}
	distilled, err := c.cfg.Reader.ConsoleDistilledFrom(ctx, s.tenant, id)
	if err != nil {
		return err
	}
	audit, err := c.cfg.Reader.ConsoleAudit(ctx, s.tenant, id)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "memory.html", &s, view{Title: "Memory " + id.String(), Nav: "users",
		Data: map[string]any{"M": d.Memory, "Versions": vs, "Turns": ts, "Sources": sources,
			"Distilled": distilled, "Audit": audit, "Categories": memory.Categories()}})
	return nil
}

func (c *Console) correct(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	corr := lifecycle.Correction{Content: r.PostFormValue("content"), Reason: r.PostFormValue("reason")}
	// Checked before Correct, which embeds the content before it writes.
	if err := memory.CheckTexts(memory.Field{Name: "content", Value: corr.Content}, memory.Field{Name: "category", Value: r.PostFormValue("category")},
		memory.Field{Name: "reason", Value: corr.Reason, MaxBytes: memory.MaxReasonBytes}); err != nil {
		return err
	}
	if cat := r.PostFormValue("category"); cat != "" {
		cc := memory.Category(cat)
		corr.Category = &cc
	}
	if v := r.PostFormValue("expect_version"); v != "" {
		if corr.ExpectVersion, err = strconv.Atoi(v); err != nil {
			return memory.Invalid("expect_version", "not a number")
		}
	}
	if _, err := c.cfg.Memories.Correct(r.Context(), s.tenant, id, corr, s.actor); err != nil {
		return err
	}
	redirect(w, r, "/memories/"+id.String(), "corrected")
	return nil
}

func (c *Console) deprecate(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	reason := r.PostFormValue("reason")
	if err := memory.CheckTexts(memory.Field{Name: "reason", Value: reason, MaxBytes: memory.MaxReasonBytes}); err != nil {
		return err
	}
	if !c.confirmed(w, r, s, "Deprecate this memory? It stays in the history but is no longer believed.",
		Prefix+"/memories/"+id.String(), "reason") {
		return nil
	}
	if _, err := c.cfg.Memories.Deprecate(r.Context(), s.tenant, id, reason, s.actor); err != nil {
		return err
	}
	redirect(w, r, "/memories/"+id.String(), "deprecated")
	return nil
}

func (c *Console) rollback(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PostFormValue("version"))
	if err != nil {
		return memory.Invalid("version", "not a version number")
	}
	reason := r.PostFormValue("reason")
	if err := memory.CheckTexts(memory.Field{Name: "reason", Value: reason, MaxBytes: memory.MaxReasonBytes}); err != nil {
		return err
	}
	if _, err := c.cfg.Memories.Rollback(r.Context(), s.tenant, id, n, reason, s.actor); err != nil {
		return err
	}
	redirect(w, r, "/memories/"+id.String(), "rolledback")
	return nil
}

func (c *Console) restore(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if _, err := c.cfg.Lifecycle.Restore(r.Context(), s.tenant, id, s.actor); err != nil {
		return err
	}
	redirect(w, r, "/memories/"+id.String(), "restored")
	return nil
}

func (c *Console) deleteMemory(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if !c.confirmed(w, r, s, "Delete this memory for good, with its history, lineage and vectors? This cannot be undone.",
		Prefix+"/memories/"+id.String()) {
		return nil
	}
	if _, err := c.cfg.Lifecycle.DeleteMemory(r.Context(), s.tenant, id, s.actor); err != nil {
		return err
	}
	redirect(w, r, "/users", "deleted")
	return nil
}

// ---- retrievals

type retrievalView struct {
	ID        string
	Record    *retriever.Retrieval
	Memories  []rankedMemory
	Turns     []turnSource
	NotFound  bool
	BadID     bool
	Requested bool
}

type rankedMemory struct {
	Rank   int
	ID     uuid.UUID
	Memory *memory.Memory // nil when the memory is gone (deleted since)
	Score  string         // the score it was ranked by, "" when not ranked (profile)
}

// scoreAt is the i-th recorded score, "" when there is none (not ranked, or a record
// older than the scores).
func scoreAt(scores []*float64, i int) string {
	if i < len(scores) && scores[i] != nil {
		return strconv.FormatFloat(*scores[i], 'f', 4, 64)
	}
	return ""
}

func (c *Console) retrieval(w http.ResponseWriter, r *http.Request, s session) error {
	raw := r.PathValue("id")
	if raw == "" {
		raw = strings.TrimSpace(r.URL.Query().Get("id"))
	}
	v := retrievalView{ID: raw, Requested: raw != ""}
	if raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil {
			v.BadID = true
		} else if err := c.fillRetrieval(r, s, id, &v); errors.Is(err, memory.ErrNotFound) {
			v.NotFound = true
		} else if err != nil {
			return err
		}
	}
	status := http.StatusOK
	if v.NotFound {
		status = http.StatusNotFound
	}
	c.render(w, r, status, "retrieval.html", &s, view{Title: "Retrieval", Nav: "retrievals", Data: v})
	return nil
}

func (c *Console) fillRetrieval(r *http.Request, s session, id uuid.UUID, v *retrievalView) error {
	ctx := r.Context()
	rec, err := c.cfg.Retriever.GetRetrieval(ctx, s.tenant, id)
	if err != nil {
		return err
	}
	v.Record = &rec
	ms, err := c.cfg.Reader.ConsoleMemoriesByID(ctx, s.tenant, rec.MemoryIDs)
	if err != nil {
		return err
	}
	byID := map[uuid.UUID]*memory.Memory{}
	for i := range ms {
		byID[ms[i].ID] = &ms[i]
	}
	for i, mid := range rec.MemoryIDs {
		v.Memories = append(v.Memories, rankedMemory{Rank: i + 1, ID: mid, Memory: byID[mid], Score: scoreAt(rec.MemoryScores, i)})
	}
	turns, err := c.cfg.Reader.ConsoleTurns(ctx, s.tenant, rec.TurnIDs)
	if err != nil {
		return err
	}
	byTurn := map[string]*memory.Turn{}
	for i := range turns {
		byTurn[turns[i].TurnID] = &turns[i]
	}
	for i, tid := range rec.TurnIDs {
		v.Turns = append(v.Turns, turnSource{ID: tid, Turn: byTurn[tid], Score: scoreAt(rec.TurnScores, i)})
	}
	return nil
}

// ---- pending memories

func (c *Console) pending(w http.ResponseWriter, r *http.Request, s session) error {
	ms, err := c.cfg.Reader.ConsoleMemories(r.Context(), s.tenant, memory.MemoryFilter{AnyUser: true, Status: memory.StatusPending})
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "pending.html", &s, view{Title: "Pending memories", Nav: "pending",
		Data: map[string]any{"Memories": ms}})
	return nil
}

// confirmPending makes a pending memory active as a person's correction that keeps
// its content (lifecycle.Ops.Correct: confidence 1, status active), at the version
// shown, so a memory changed meanwhile is not confirmed blind.
func (c *Console) confirmPending(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	// The version shown is required: without it the memory would be confirmed blind.
	expect, err := strconv.Atoi(r.PostFormValue("version"))
	if err != nil || expect < 1 {
		return memory.Invalid("version", "want the version number shown (1 or more)")
	}
	m, err := c.pendingMemory(r, s, id)
	if err != nil {
		return err
	}
	corr := lifecycle.Correction{Content: m.Content, Reason: "confirmed in the console", ExpectVersion: expect}
	if _, err := c.cfg.Memories.Correct(r.Context(), s.tenant, id, corr, s.actor); err != nil {
		return err
	}
	redirect(w, r, "/pending", "confirmed")
	return nil
}

// pendingMemory reads memory id and refuses it unless it is pending: confirming or
// rejecting anything else would change a memory the person did not see as pending.
func (c *Console) pendingMemory(r *http.Request, s session, id uuid.UUID) (memory.Memory, error) {
	d, err := c.cfg.Memories.Get(r.Context(), s.tenant, id)
	if err != nil {
		return memory.Memory{}, err
	}
	if d.Memory.Status != memory.StatusPending {
		return memory.Memory{}, memory.Invalid("status", "the memory is %s, not pending", d.Memory.Status)
	}
	return d.Memory, nil
}

func (c *Console) rejectPending(w http.ResponseWriter, r *http.Request, s session) error {
	id, err := memoryID(r)
	if err != nil {
		return err
	}
	if _, err := c.pendingMemory(r, s, id); err != nil {
		return err
	}
	if !c.confirmed(w, r, s, "Reject this pending memory? It is deprecated: kept in the history, never used.",
		Prefix+"/pending") {
		return nil
	}
	if _, err := c.cfg.Memories.Deprecate(r.Context(), s.tenant, id, "rejected in the console", s.actor); err != nil {
		return err
	}
	redirect(w, r, "/pending", "rejected")
	return nil
}

// ---- dead letters

// tenantLetters lists the DLQ entries of the session's tenant, oldest first.
func (c *Console) tenantLetters(r *http.Request, s session, stage string) ([]streams.DLQEntry, error) {
	all, err := c.cfg.DLQ.List(r.Context(), streams.DLQFilter{Stage: stage})
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, e := range all {
		if e.Tenant == s.tenant {
			out = append(out, e)
		}
	}
	return out, nil
}

// tenantLetter reads one DLQ entry; another tenant's is not found.
func (c *Console) tenantLetter(r *http.Request, s session) (streams.DLQEntry, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		return streams.DLQEntry{}, memory.Invalid("id", "not a dead-letter id")
	}
	e, err := c.cfg.DLQ.Get(r.Context(), id)
	if errors.Is(err, jetstream.ErrMsgNotFound) || (err == nil && e.Tenant != s.tenant) {
		return streams.DLQEntry{}, errNotFound
	}
	return e, err
}

// audit records a dead-letter action: the letters live in JetStream, so no service
// writes their audit entry. Details name the letters' ids and count, never payloads.
func (c *Console) audit(r *http.Request, s session, action string, ids []uint64, details map[string]any) error {
	details["ids"], details["count"] = ids, len(ids)
	return c.cfg.Reader.InTx(r.Context(), s.tenant, func(tx *memory.Tx) error {
		return tx.Audit(r.Context(), memory.AuditEntry{Action: action, Actor: s.actor, Module: "console", Details: details})
	})
}

func (c *Console) dlq(w http.ResponseWriter, r *http.Request, s session) error {
	stage := r.URL.Query().Get("stage")
	if err := memory.CheckIDs(memory.Field{Name: "stage", Value: stage}); err != nil {
		return err
	}
	es, err := c.tenantLetters(r, s, stage)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "dlq.html", &s, view{Title: "Dead letters", Nav: "dlq",
		Data: map[string]any{"Entries": es, "Stage": stage}})
	return nil
}

func (c *Console) dlqEntry(w http.ResponseWriter, r *http.Request, s session) error {
	e, err := c.tenantLetter(r, s)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "dlq_entry.html", &s, view{Title: fmt.Sprintf("Dead letter %d", e.ID), Nav: "dlq",
		Data: map[string]any{"E": e, "Payload": string(e.Data)}})
	return nil
}

func (c *Console) dlqReplay(w http.ResponseWriter, r *http.Request, s session) error {
	e, err := c.tenantLetter(r, s)
	if err != nil {
		return err
	}
	res, err := c.cfg.DLQ.Replay(r.Context(), streams.DLQFilter{IDs: []uint64{e.ID}})
	if res.Replayed > 0 { // what happened is audited even when the replay also reports a failure
		if aerr := c.audit(r, s, "dlq_replay", []uint64{e.ID}, map[string]any{"replayed": res.Replayed,
			"failed": res.Failed, "stage": e.Stage}); aerr != nil {
			return errors.Join(err, aerr)
		}
	}
	if err != nil {
		return err
	}
	redirect(w, r, "/dlq", "replayed")
	return nil
}

// dlqPurge deletes the tenant's dead letters (of one stage when given, dead-lettered
// before a time when given) one by one: streams.DLQ.Purge spans tenants.
func (c *Console) dlqPurge(w http.ResponseWriter, r *http.Request, s session) error {
	stage := r.PostFormValue("stage")
	if err := memory.CheckIDs(memory.Field{Name: "stage", Value: stage}); err != nil {
		return err
	}
	var before time.Time
	if b := r.PostFormValue("before"); b != "" {
		var err error
		if before, err = time.Parse("2006-01-02", b); err != nil {
			return memory.Invalid("before", "want a date (YYYY-MM-DD)")
		}
	}
	es, err := c.tenantLetters(r, s, stage)
	if err != nil {
		return err
	}
	var doomed []uint64
	for _, e := range es {
		if before.IsZero() || e.DeadLetteredAt.Before(before) {
			doomed = append(doomed, e.ID)
		}
	}
	if !c.confirmed(w, r, s, fmt.Sprintf("Purge %d dead letter(s) of tenant %s? Their messages are lost.", len(doomed), s.tenant),
		Prefix+"/dlq", "stage", "before") {
		return nil
	}
	purged := make([]uint64, 0, len(doomed))
	var failed error
	for _, id := range doomed {
		if err := c.cfg.DLQ.Delete(r.Context(), id); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			failed = err
			break
		}
		purged = append(purged, id)
	}
	// The ones deleted are audited even when a later one failed.
	if len(purged) > 0 {
		if aerr := c.audit(r, s, "dlq_purge", purged, map[string]any{"stage": stage, "before": r.PostFormValue("before")}); aerr != nil {
			return errors.Join(failed, aerr)
		}
	}
	if failed != nil {
		return failed
	}
	redirect(w, r, "/dlq", "purged")
	return nil
}

// ---- consolidation runs

func (c *Console) runs(w http.ResponseWriter, r *http.Request, s session) error {
	rs, err := c.cfg.Reader.ConsoleRuns(r.Context(), s.tenant, 50)
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "runs.html", &s, view{Title: "Consolidation runs", Nav: "runs",
		Data: map[string]any{"Runs": rs}})
	return nil
}
