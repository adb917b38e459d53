package retriever

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// MaxQueryBytes bounds a search or context query; the API's edge and the console
// check it before they call the retriever.
const MaxQueryBytes = 4000

// Search modes: hybrid fuses every side; keyword and vector keep one, so the value
// of the hybrid can be measured on the same stored data.
const (
	ModeHybrid  = "hybrid"
	ModeKeyword = "keyword"
	ModeVector  = "vector"
)

// Layers a search can read.
const (
	LayerMemories = "memories"
	LayerTurns    = "turns"
)

// Time fields a search's from/to range can apply to.
const (
	TimeValidFrom = "valid_from"
	TimeUpdatedAt = "updated_at"
)

// SearchRequest is the body of POST /v1/search.
type SearchRequest struct {
	Query     string `json:"query"`
	UserID    string `json:"user_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Scope is whose memories are searched: "user" (default: the user's memories,
	// narrowed to agent_id's and unscoped ones when agent_id is given), "agent" (the
	// agent's own memories) or "global" (the tenant's global memories).
	Scope      memory.Scope      `json:"scope,omitempty"`
	Types      []memory.Type     `json:"types,omitempty"`
	Categories []memory.Category `json:"categories,omitempty"`
	// Statuses defaults to active; pending memories are returned only when asked for,
	// and then carry pending: true.
	Statuses []memory.Status `json:"statuses,omitempty"`
	// From and To bound TimeField (valid_from by default, or updated_at); turns are
	// bounded on occurred_at.
	From      *time.Time `json:"from,omitempty"`
	To        *time.Time `json:"to,omitempty"`
	TimeField string     `json:"time_field,omitempty"`
	// AsOf answers from history: each memory's version that was valid at that time,
	// with that version's content.
	AsOf      *time.Time `json:"as_of,omitempty"`
	TopK      int        `json:"top_k,omitempty"`
	Threshold float64    `json:"threshold,omitempty"`
	Layers    []string   `json:"layers,omitempty"`
	// Mode restricts recall to one side, to measure what each contributes:
	// "keyword" or "vector"; empty or "hybrid" fuses all sides. Turns have a vector
	// side only when turn embedding is enabled (Config.EmbedTurns); without it a
	// vector-mode search returns no turns.
	Mode string `json:"mode,omitempty"`
	// Metadata keeps memories (and turns) whose metadata holds each of these keys with
	// an equal value (jsonb containment).
	Metadata map[string]any `json:"metadata,omitempty"`
}

// maxMetadataFilterKeys bounds a metadata filter.
const maxMetadataFilterKeys = 32

// Components are the parts a result's score is made of.
type Components struct {
	Vector     float64 `json:"vector"`  // cosine similarity to the query (0 when unknown)
	Keyword    float64 `json:"keyword"` // Okapi BM25 score, a turn's with its neighbours' share (0: no term matched)
	RRF        float64 `json:"rrf"`     // normalised reciprocal-rank fusion score
	Recency    float64 `json:"recency"`
	Importance float64 `json:"importance"`
	Confidence float64 `json:"confidence"`
}

// Result is one search hit: a memory (layer "memories") or a turn (layer "turns").
type Result struct {
	Layer   string  `json:"layer"`
	ID      string  `json:"id"`
	Content string  `json:"content"`
	Score   float64 `json:"score"`

	Type            memory.Type     `json:"type,omitempty"`
	Category        memory.Category `json:"category,omitempty"`
	Key             string          `json:"key,omitempty"`
	Status          memory.Status   `json:"status,omitempty"`
	Pending         bool            `json:"pending,omitempty"`
	Version         int             `json:"version,omitempty"`
	ValidFrom       *time.Time      `json:"valid_from,omitempty"`
	ValidTo         *time.Time      `json:"valid_to,omitempty"`
	UpdatedAt       *time.Time      `json:"updated_at,omitempty"`
	Source          memory.Source   `json:"source,omitempty"`
	UserID          string          `json:"user_id,omitempty"`
	SourceTurnIDs   []string        `json:"source_turn_ids,omitempty"`
	SourceMemoryIDs []string        `json:"source_memory_ids,omitempty"`

	TurnID     string      `json:"turn_id,omitempty"`
	SessionID  string      `json:"session_id,omitempty"`
	OccurredAt *time.Time  `json:"occurred_at,omitempty"`
	Role       memory.Role `json:"role,omitempty"`

	// Metadata is the memory's (or the turn's) metadata.
	Metadata map[string]any `json:"metadata,omitempty"`

	Components Components `json:"components"`

	memoryID uuid.UUID
	vector   []float32 // the memory's vector, for the duplicate test (nil: none)
	vecRead  bool      // vector was read with the candidate (nil then: the memory has none)
	unit     []float32 // vector at length 1 (llm.Unit), made only for results finish reaches
}

// SearchResponse is the answer of POST /v1/search.
type SearchResponse struct {
	RetrievalID string   `json:"retrieval_id,omitempty"`
	Results     []Result `json:"results"`
	// VectorCoverage is the share of the owner's searched memories that have a vector
	// in the query's model, when the vector side ran: below 1 while a new embedding
	// model is rolled in (those without are ranked by keyword and recency).
	VectorCoverage *float64 `json:"vector_coverage,omitempty"`
}

func fieldErr(field, format string, args ...any) error {
	return memory.Invalid(field, format, args...)
}

// Retriever answers searches and assembles context. Safe for concurrent use; Run (or
// RunAccessFlusher and RunSummarizer) must be running for access counts and session
// summaries to be written.
type Retriever struct {
	store  *memory.Store
	emb    llm.Embedder
	cfg    Config
	logger *slog.Logger
	access *AccessRecorder
	// records writes retrieval records off the request path while Run runs.
	records *RecordWriter
	// summaries queues sessions whose rolling summary is due; RunSummarizer drains it.
	summaries chan sessionKey
	now       func() time.Time
	coverage  coverageCache
	textStats statsCache
	refresher *statsRefresher
	// parallel bounds the searches reading their turns layer on a connection of its
	// own, beside the memories (see searchLayers).
	parallel chan struct{}
}

// NewRetriever makes a retriever. emb may be nil (keyword and recency only); a nil
// logger discards logs.
func NewRetriever(store *memory.Store, emb llm.Embedder, cfg Config, logger *slog.Logger) (*Retriever, error) {
	if store == nil {
		return nil, errors.New("retriever: a store is required")
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Retriever{
		store: store, emb: emb, cfg: cfg, logger: logger,
		summaries: make(chan sessionKey, 256),
		now:       func() time.Time { return time.Now().UTC() },
	}
	// Fewer helpers than half the pool's connections: a request holding one
	// connection never waits for a second one that only requests like it could free.
	if pool := store.Pool(); pool != nil {
		if n := int(pool.Config().MaxConns) / 2; n > 0 {
			r.parallel = make(chan struct{}, n-1)
		}
	}
	r.refresher = newStatsRefresher(store, r.now, logger)
	r.access = NewAccessRecorder(store, cfg.AccessBuffer, cfg.AccessFlushInterval, logger)
	r.records = NewRecordWriter(store, cfg.RecordBuffer, cfg.RecordFlushInterval, logger)
	return r, nil
}

// Config returns the effective configuration.
func (r *Retriever) Config() Config { return r.cfg }

// Access is the batched access-count recorder (run by Run).
func (r *Retriever) Access() *AccessRecorder { return r.access }

// Records is the retrieval-record writer (run by Run).
func (r *Retriever) Records() *RecordWriter { return r.records }

// Run runs the access flusher, the retrieval-record writer, the summarizer and the
// refresher of stored text statistics until ctx ends.
func (r *Retriever) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var recErr error
	wg.Add(3)
	go func() {
		defer wg.Done()
		r.RunSummarizer(ctx)
	}()
	go func() {
		defer wg.Done()
		r.refresher.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		recErr = r.records.Run(ctx)
	}()
	err := r.access.Run(ctx)
	wg.Wait()
	return errors.Join(err, recErr)
}

// query is a validated search with its defaults applied.
type query struct {
	SearchRequest
	statuses   []string
	types      []string
	categories []string
	memories   bool
	turns      bool
	now        time.Time // "now" of recency and expiry: as_of when given
	// keepRecent keeps memories that only the recency side found (context layers);
	// a search answers with matches only, so a query that matched nothing returns
	// nothing rather than the owner's latest memories.
	keepRecent bool
}

func (r *Retriever) validate(tenant string, req SearchRequest) (query, error) {
	q := query{SearchRequest: req}
	if err := memory.CheckTenant(tenant); err != nil {
		return q, err
	}
	if len(req.Query) > MaxQueryBytes {
		return q, fieldErr("query", "longer than %d bytes", MaxQueryBytes)
	}
	switch req.Scope {
	case "", memory.ScopeUser, memory.ScopeSession:
		q.Scope = memory.ScopeUser
		if req.UserID == "" {
			return q, fieldErr("user_id", "required unless scope is global or agent")
		}
	case memory.ScopeAgent:
		if req.AgentID == "" {
			return q, fieldErr("agent_id", "required for scope agent")
		}
	case memory.ScopeGlobal:
	default:
		return q, fieldErr("scope", "must be user, agent or global, got %q", req.Scope)
	}
	for _, f := range []struct{ name, v string }{{"user_id", req.UserID}, {"agent_id", req.AgentID}, {"session_id", req.SessionID}} {
		if len(f.v) > 128 {
			return q, fieldErr(f.name, "longer than 128 characters")
		}
	}
	for _, t := range req.Types {
		if !t.Valid() {
			return q, fieldErr("types", "%q is not one of %v", t, memory.Types())
		}
		q.types = append(q.types, string(t))
	}
	for _, c := range req.Categories {
		if !c.Valid() {
			return q, fieldErr("categories", "%q is not one of %v", c, memory.Categories())
		}
		q.categories = append(q.categories, string(c))
	}
	if len(req.Statuses) == 0 {
		q.statuses = []string{string(memory.StatusActive)}
	}
	for _, s := range req.Statuses {
		if s != memory.StatusActive && s != memory.StatusPending {
			return q, fieldErr("statuses", "may hold active and pending, got %q (use as_of for history)", s)
		}
		q.statuses = append(q.statuses, string(s))
	}
	switch req.TimeField {
	case "":
		q.TimeField = TimeValidFrom
	case TimeValidFrom, TimeUpdatedAt:
	default:
		return q, fieldErr("time_field", "must be valid_from or updated_at, got %q", req.TimeField)
	}
	// Times are held to the write paths' rule (memory.CheckTime): one that RFC 3339
	// cannot write in UTC cannot be recorded or echoed as JSON either.
	for _, f := range []struct {
		name string
		at   *time.Time
	}{{"from", req.From}, {"to", req.To}, {"as_of", req.AsOf}} {
		if f.at != nil {
			if fe := memory.CheckTime(f.name, *f.at); fe != nil {
				return q, fe
			}
		}
	}
	if req.From != nil && req.To != nil && req.To.Before(*req.From) {
		return q, fieldErr("to", "is before from")
	}
	switch {
	case req.TopK == 0:
		q.TopK = r.cfg.DefaultTopK
	case req.TopK < 0 || req.TopK > r.cfg.MaxTopK:
		return q, fieldErr("top_k", "must be between 1 and %d, got %d", r.cfg.MaxTopK, req.TopK)
	}
	if req.Threshold < 0 || req.Threshold > 1 || math.IsNaN(req.Threshold) {
		return q, fieldErr("threshold", "must be between 0 and 1, got %v", req.Threshold)
	}
	if len(req.Layers) == 0 {
		q.memories = true
	}
	for _, l := range req.Layers {
		switch l {
		case LayerMemories:
			q.memories = true
		case LayerTurns:
			q.turns = true
		default:
			return q, fieldErr("layers", "must hold memories and/or turns, got %q", l)
		}
	}
	switch req.Mode {
	case "", ModeHybrid, ModeKeyword, ModeVector:
	default:
		return q, fieldErr("mode", "must be hybrid, keyword or vector, got %q", req.Mode)
	}
	if len(req.Metadata) > maxMetadataFilterKeys {
		return q, fieldErr("metadata", "may hold at most %d keys, got %d", maxMetadataFilterKeys, len(req.Metadata))
	}
	for k := range req.Metadata {
		if k == "" {
			return q, fieldErr("metadata", "keys must not be empty")
		}
	}
	// The filter is sent to PostgreSQL as jsonb: what the store could not hold in a
	// memory's metadata (NUL, invalid UTF-8, 1e999999) it cannot compare with either.
	if fe := memory.CheckMetadata("metadata", req.Metadata, 0); fe != nil {
		return q, fe
	}
	if q.turns && q.UserID == "" {
		return q, fieldErr("user_id", "required for the turns layer")
	}
	q.now = r.now()
	if req.AsOf != nil {
		q.now = req.AsOf.UTC()
	}
	return q, nil
}

// Search runs a hybrid search for tenant and records it.
func (r *Retriever) Search(ctx context.Context, tenant string, req SearchRequest) (SearchResponse, error) {
	q, err := r.validate(tenant, req)
	if err != nil {
		return SearchResponse{}, err
	}
	var vec []float32
	if q.Mode != ModeKeyword {
		vec = r.embedQuery(ctx, q.Query)
	}
	var resp SearchResponse
	var ids []uuid.UUID
	err = r.store.InReadTx(ctx, tenant, func(tx *memory.Tx) error {
		res, err := r.searchLayers(ctx, tx, q, vec)
		if err != nil {
			return err
		}
		res, err = r.finish(ctx, tx, res, q.TopK, q.Threshold, vec)
		if err != nil {
			return err
		}
		if err := r.attachLineage(ctx, tx, res); err != nil {
			return err
		}
		var turnIDs []string
		var memScores, turnScores []*float64
		for _, x := range res {
			score := x.Score
			if x.Layer == LayerMemories {
				ids = append(ids, x.memoryID)
				memScores = append(memScores, &score)
			} else {
				turnIDs = append(turnIDs, x.TurnID)
				turnScores = append(turnScores, &score)
			}
		}
		id, err := r.record(ctx, tx, memory.Retrieval{Kind: "search", UserID: q.UserID, SessionID: q.SessionID,
			MemoryIDs: ids, TurnIDs: turnIDs, MemoryScores: memScores, TurnScores: turnScores}, q.Query)
		if err != nil {
			return err
		}
		resp = SearchResponse{RetrievalID: id, Results: res}
		if q.memories {
			if resp.VectorCoverage, err = r.vectorCoverage(ctx, tx, q, vec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return SearchResponse{}, fmt.Errorf("searching: %w", err)
	}
	if resp.Results == nil {
		resp.Results = []Result{}
	}
	if q.AsOf == nil {
		// Reading history is not a use of the current memory.
		r.access.Record(tenant, ids)
	}
	return resp, nil
}

// alongside runs fn on a connection of its own, in its own transaction (so its own
// snapshot), while the caller goes on in tx, when a helper slot is free: a request then
// costs its slower part rather than the sum of its independent reads. Without a free
// slot it runs fn in tx at once. wait returns fn's error, after fn has returned.
func (r *Retriever) alongside(ctx context.Context, tx *memory.Tx, fn func(tx *memory.Tx) error) (wait func() error) {
	select {
	case r.parallel <- struct{}{}:
	default:
		err := fn(tx)
		return func() error { return err }
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-r.parallel }()
		done <- r.store.InReadTx(ctx, tx.Tenant(), fn)
	}()
	return func() error { return <-done }
}

// searchLayers returns the candidates of the layers q asks for. With both, the turns
// layer runs alongside the memories (the turn log only grows, and the two layers were
// never one consistent read anyway).
func (r *Retriever) searchLayers(ctx context.Context, tx *memory.Tx, q query, vec []float32) ([]Result, error) {
	var res, turns []Result
	wait := func() error { return nil }
	if q.turns {
		searchTurns := func(tx *memory.Tx) (err error) {
			turns, err = r.searchTurns(ctx, tx, q, vec)
			return err
		}
		if q.memories {
			wait = r.alongside(ctx, tx, searchTurns)
		} else if err := searchTurns(tx); err != nil {
			return nil, err
		}
	}
	if q.memories {
		ms, err := r.searchMemories(ctx, tx, q, vec, max(r.cfg.Candidates, 2*q.TopK))
		if err != nil {
			_ = wait()
			return nil, err
		}
		res = append(res, ms...)
	}
	if err := wait(); err != nil {
		return nil, err
	}
	return append(res, turns...), nil
}

// memoryCandidates runs the memory candidate query of ms. For an owner with its own
// vector index (a very large owner) the vector side is a statement of its own, run
// alongside the keyword and recency sides: at 100,000 memories each side took 10–16
// ms of one statement's 22–42, so the search costs the slower side, not their sum.
// The hits are merged by memory, each side's ranks from the statement that ran it.
func (r *Retriever) memoryCandidates(ctx context.Context, tx *memory.Tx, ms memory.MemorySearch) ([]memory.MemoryHit, []memory.TermDF, error) {
	parts, err := r.memoryStatements(ctx, tx, ms)
	if err != nil {
		return nil, nil, err
	}
	if len(parts) == 1 {
		return tx.MemoryCandidates(ctx, parts[0])
	}
	kq, vq := parts[0], parts[1]
	var near []memory.MemoryHit
	wait := r.alongside(ctx, tx, func(tx *memory.Tx) (err error) {
		near, _, err = tx.MemoryCandidates(ctx, vq)
		return err
	})
	hits, frequent, err := tx.MemoryCandidates(ctx, kq)
	if werr := wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, nil, err
	}
	at := make(map[uuid.UUID]int, len(hits))
	for i, h := range hits {
		at[h.Memory.ID] = i
	}
	for _, v := range near {
		i, ok := at[v.Memory.ID]
		if !ok {
			hits = append(hits, v)
			continue
		}
		hits[i].VectorRank, hits[i].Distance = v.VectorRank, v.Distance
		if hits[i].Vector == nil {
			hits[i].Vector = v.Vector
		}
	}
	return hits, frequent, nil
}

// memoryStatements splits ms into the statements memoryCandidates runs: ms itself,
// or for an indexed owner's hybrid search the keyword and recency sides (each hit
// still carries its vector in Model) and the vector side alone.
func (r *Retriever) memoryStatements(ctx context.Context, tx *memory.Tx, ms memory.MemorySearch) ([]memory.MemorySearch, error) {
	if ms.Vector == nil || ms.VectorOnly || ms.KeywordOnly || ms.AsOf != nil {
		return []memory.MemorySearch{ms}, nil
	}
	indexed, err := tx.OwnerIndexed(ctx, ms)
	if err != nil || !indexed {
		return []memory.MemorySearch{ms}, err
	}
	kq, vq := ms, ms
	kq.Vector = nil
	vq.VectorAlone, vq.Stats = true, nil
	return []memory.MemorySearch{kq, vq}, nil
}

// embedQuery embeds the query; a failure degrades the search to keyword and recency
// rather than failing it, because an embedding endpoint outage must not take reads down.
func (r *Retriever) embedQuery(ctx context.Context, text string) []float32 {
	if r.emb == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	vs, err := r.emb.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 || len(vs[0]) == 0 {
		r.logger.WarnContext(ctx, "embedding the query failed; searching without vectors", "error", err)
		return nil
	}
	return vs[0]
}

// searchMemories runs the hybrid candidate query and scores the candidates.
func (r *Retriever) searchMemories(ctx context.Context, tx *memory.Tx, q query, vec []float32, n int) ([]Result, error) {
	ms := r.memorySearch(q, vec, n)
	if q.AsOf == nil && !ms.VectorOnly && strings.TrimSpace(q.Query) != "" {
		stats, err := r.memoryTextStats(ctx, tx, q)
		if err != nil {
			return nil, err
		}
		ms.Stats = stats
	}
	hits, frequent, err := r.memoryCandidates(ctx, tx, ms)
	if err != nil {
		return nil, err
	}
	if ms.Stats != nil {
		r.textStats.learn(memoryStatsKey(tx, q), frequent)
	}
	sideNorm := r.cfg.KeywordSideWeight + r.cfg.RecentSideWeight
	if vec != nil {
		sideNorm += r.cfg.VectorSideWeight
	}
	sideNorm /= r.cfg.RRFK + 1
	// A memory without a vector in the query's model (a new model being rolled in)
	// cannot be ranked by the vector side: it is scored against the sides it can have,
	// so it competes on its keyword and recency ranks instead of sinking.
	unvectored, err := r.lackingVectors(ctx, tx, q, hits, vec)
	if err != nil {
		return nil, err
	}
	noVectorNorm := (r.cfg.KeywordSideWeight + r.cfg.RecentSideWeight) / (r.cfg.RRFK + 1)
	var out []Result
	for _, h := range hits {
		if h.VectorRank == 0 && h.KeywordRank == 0 && !q.keepRecent {
			continue
		}
		norm := sideNorm
		if unvectored[h.Memory.ID] {
			norm = noVectorNorm
		}
		m := h.Memory
		res := memoryResult(m)
		rrf := 0.0
		if h.VectorRank != 0 {
			rrf += r.cfg.VectorSideWeight / (r.cfg.RRFK + float64(h.VectorRank))
		}
		if h.KeywordRank != 0 {
			rrf += r.cfg.KeywordSideWeight / (r.cfg.RRFK + float64(h.KeywordRank))
		}
		if h.RecentRank != 0 {
			rrf += r.cfg.RecentSideWeight / (r.cfg.RRFK + float64(h.RecentRank))
		}
		if h.Distance != nil {
			res.Components.Vector = 1 - *h.Distance
		}
		if q.AsOf == nil && r.emb != nil {
			res.vector, res.vecRead = h.Vector, true
			if vec != nil && h.Vector != nil && len(vec) == len(h.Vector) && h.Distance == nil {
				res.Components.Vector = float64(llm.Cosine(vec, h.Vector))
			}
		}
		res.Components.Keyword = h.Keyword
		// Recency is world time (when the fact became true), the same clock turns use
		// (occurred_at): ingestion time would make every backfilled memory "new" and
		// rank it above the turns it came from.
		recencyAt := m.ValidFrom
		r.score(&res, r.cfg.MemoryLayerWeight*ratio(rrf, norm), q.now.Sub(recencyAt), m.Importance, m.Confidence)
		out = append(out, res)
	}
	return out, nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func memoryResult(m memory.Memory) Result {
	vf, ua := m.ValidFrom, m.UpdatedAt
	return Result{
		Layer: LayerMemories, ID: m.ID.String(), Content: m.Content,
		Type: m.Type, Category: m.Category, Key: m.Key, Status: m.Status, Pending: m.Status == memory.StatusPending,
		Version: m.Version, ValidFrom: &vf, ValidTo: m.ValidTo, UpdatedAt: &ua, Source: m.Source, UserID: m.UserID,
		Metadata: m.Metadata, memoryID: m.ID,
	}
}

// score fills the components and the final score.
func (r *Retriever) score(res *Result, rrfNorm float64, age time.Duration, importance, confidence float64) {
	if age < 0 {
		age = 0
	}
	rec := 1.0
	if r.cfg.RecencyHalfLife > 0 {
		rec = math.Exp(-math.Ln2 * age.Hours() / r.cfg.RecencyHalfLife.Hours())
	}
	rrfNorm = math.Min(rrfNorm, 1)
	res.Components.RRF = rrfNorm
	res.Components.Recency = rec
	res.Components.Importance = importance
	res.Components.Confidence = confidence
	res.Score = r.cfg.WeightRRF*rrfNorm + r.cfg.WeightImportance*importance +
		r.cfg.WeightRecency*rec + r.cfg.WeightConfidence*confidence
}

// finish orders results by score, applies the threshold, drops near-duplicates and
// cuts to k. Vectors for the cosine test are read only for results that may be
// returned, a few at a time, rather than for every candidate.
func (r *Retriever) finish(ctx context.Context, tx *memory.Tx, res []Result, k int, threshold float64, vec []float32) ([]Result, error) {
	sort.SliceStable(res, func(i, j int) bool {
		if res[i].Score != res[j].Score {
			return res[i].Score > res[j].Score
		}
		return res[i].ID < res[j].ID
	})
	for i, x := range res {
		if x.Score < threshold {
			res = res[:i]
			break
		}
	}
	seen := map[string]bool{}
	var kept []Result
	fetched := 0
	for i := 0; i < len(res) && len(kept) < k; i++ {
		if i == fetched && r.emb != nil {
			// Read the vectors of the next batch of memory results.
			fetched = min(len(res), i+2*k)
			if err := r.loadEmbeddings(ctx, tx, res[i:fetched], vec); err != nil {
				return nil, err
			}
		}
		x := res[i]
		norm := normaliseContent(x.Content)
		if seen[norm] {
			continue
		}
		dup := false
		x.unit = llm.Unit(x.vector)
		if x.unit != nil {
			for _, y := range kept {
				if y.unit != nil && float64(llm.Dot(x.unit, y.unit)) > r.cfg.DuplicateCosine {
					dup = true
					break
				}
			}
		}
		if dup {
			continue
		}
		seen[norm] = true
		kept = append(kept, x)
	}
	return kept, nil
}

// loadEmbeddings fills the vectors of memory results (and their vector component when
// the vector side did not rank them).
func (r *Retriever) loadEmbeddings(ctx context.Context, tx *memory.Tx, res []Result, vec []float32) error {
	idx := map[uuid.UUID]int{}
	var ids []uuid.UUID
	for i, x := range res {
		if x.Layer == LayerMemories && x.vector == nil && !x.vecRead {
			idx[x.memoryID] = i
			ids = append(ids, x.memoryID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	vs, err := tx.MemoryVectors(ctx, r.emb.Model(), ids)
	if err != nil {
		return err
	}
	for id, v := range vs {
		x := &res[idx[id]]
		x.vector = v
		if vec != nil && len(vec) == len(v) && x.Components.Vector == 0 {
			x.Components.Vector = float64(llm.Cosine(vec, v))
		}
	}
	return nil
}

// normaliseContent folds case, punctuation and spacing, so "Likes tea." and
// "likes tea" count as the same content.
func normaliseContent(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// memorySearch is the candidate query of q for the store: the owner, the filters and
// the sides to rank by, n candidates per side. Every filter is applied before ranking
// (see memory.MemoryCandidates).
func (r *Retriever) memorySearch(q query, vec []float32, n int) memory.MemorySearch {
	model := ""
	if r.emb != nil {
		model = r.emb.Model()
	}
	// The recency side is read only where it can change the answer: it ranks by its
	// weight, or it brings candidates the caller keeps (a context's layers).
	recent := r.cfg.RecentCandidates
	if r.cfg.RecentSideWeight == 0 && !q.keepRecent {
		recent = 0
	}
	return memory.MemorySearch{
		Query: q.Query, Scope: q.Scope, UserID: q.UserID, AgentID: q.AgentID, SessionID: q.SessionID,
		Types: q.types, Categories: q.categories, Statuses: q.statuses, Metadata: q.Metadata, Now: q.now,
		From: q.From, To: q.To, ByUpdatedAt: q.TimeField == TimeUpdatedAt, AsOf: q.AsOf,
		KeywordOnly: q.Mode == ModeKeyword, VectorOnly: q.Mode == ModeVector,
		Limit: n, RecentLimit: recent,
		Vector: vec, Model: model, MaxDistance: 1 - r.cfg.VectorMinSimilarity,
	}
}

// searchTurns is the turns layer: keyword search over the owner's stored turns and,
// when turn embedding is enabled and the query has a vector, an exact vector scan of
// the owner's turn vectors, the two fused by RRF like the memory sides. Mode keyword
// keeps the keyword side only, mode vector the vector side only.
func (r *Retriever) searchTurns(ctx context.Context, tx *memory.Tx, q query, vec []float32) (_ []Result, err error) {
	ts, ok := r.turnSearch(q, vec)
	if !ok {
		return nil, nil
	}
	keyword, vector := ts.Keyword, ts.Vector != nil
	if keyword {
		if ts.Stats, err = r.turnTextStats(ctx, tx, q.UserID); err != nil {
			return nil, err
		}
	}
	hits, frequent, err := tx.TurnCandidates(ctx, ts)
	if err != nil {
		return nil, err
	}
	if ts.Stats != nil {
		r.textStats.learn(turnStatsKey(tx, q.UserID), frequent)
	}
	// Normalised against the sides that ran, so the best turn match competes with the
	// best memory match instead of being capped below it by sides a turn cannot have
	// (recency) or that were not searched.
	sideNorm := 0.0
	if keyword {
		sideNorm += r.cfg.KeywordSideWeight
	}
	if vector {
		sideNorm += r.cfg.VectorSideWeight
	}
	sideNorm /= r.cfg.RRFK + 1
	var out []Result
	for _, h := range hits {
		at := h.OccurredAt
		res := Result{Layer: LayerTurns, ID: h.TurnID, Content: h.Content, TurnID: h.TurnID, SessionID: h.SessionID,
			Role: h.Role, OccurredAt: &at, Metadata: h.Metadata}
		rrf := 0.0
		if h.KeywordRank != 0 {
			rrf += r.cfg.KeywordSideWeight / (r.cfg.RRFK + float64(h.KeywordRank))
			res.Components.Keyword = h.Keyword
		}
		if h.VectorRank != 0 {
			rrf += r.cfg.VectorSideWeight / (r.cfg.RRFK + float64(h.VectorRank))
		}
		if h.Distance != nil {
			res.Components.Vector = 1 - *h.Distance
		}
		r.score(&res, ratio(rrf, sideNorm), q.now.Sub(at), r.cfg.TurnImportance, r.cfg.TurnConfidence)
		out = append(out, res)
	}
	return out, nil
}

// turnSearch is the turn-candidate query of q; false when the turns layer has nothing
// to rank (an empty query, or a mode whose side turns do not have).
func (r *Retriever) turnSearch(q query, vec []float32) (memory.TurnSearch, bool) {
	if strings.TrimSpace(q.Query) == "" {
		return memory.TurnSearch{}, false
	}
	keyword := q.Mode != ModeVector
	vector := r.cfg.EmbedTurns && r.emb != nil && vec != nil && q.Mode != ModeKeyword
	if !keyword && !vector {
		return memory.TurnSearch{}, false
	}
	ts := memory.TurnSearch{Query: q.Query, UserID: q.UserID, SessionID: q.SessionID, AgentID: q.AgentID, Metadata: q.Metadata,
		From: q.From, To: q.To, AsOf: q.AsOf, Keyword: keyword, Limit: r.cfg.Candidates, Neighbours: max(r.cfg.TurnNeighbourWeight, 0)}
	if vector {
		ts.Vector, ts.Model, ts.MaxDistance = vec, r.emb.Model(), 1-r.cfg.VectorMinSimilarity
	}
	return ts, true
}

// attachLineage adds source turn and memory ids to memory results.
func (r *Retriever) attachLineage(ctx context.Context, tx *memory.Tx, res []Result) error {
	var ids []uuid.UUID
	idx := map[uuid.UUID]int{}
	for i, x := range res {
		if x.Layer == LayerMemories {
			ids = append(ids, x.memoryID)
			idx[x.memoryID] = i
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ls, err := tx.LineageSources(ctx, ids)
	if err != nil {
		return err
	}
	for _, l := range ls {
		x := &res[idx[l.MemoryID]]
		if l.Kind == memory.LineageTurn {
			x.SourceTurnIDs = append(x.SourceTurnIDs, l.SourceID)
		} else {
			x.SourceMemoryIDs = append(x.SourceMemoryIDs, l.SourceID)
		}
	}
	return nil
}

// record hands the retrievals row rec (unless disabled) to the record writer, or
// writes it in tx when the writer cannot take it, and returns its id; either way the
// commit is asynchronous (memory.Tx.RecordRetrieval). Only the query's hash is kept.
func (r *Retriever) record(ctx context.Context, tx *memory.Tx, rec memory.Retrieval, queryText string) (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("generating a retrieval id: %w", err)
	}
	if r.cfg.DisableRecords {
		return id.String(), nil
	}
	h := sha256.Sum256([]byte(queryText))
	rec.ID, rec.QueryHash = id, h[:]
	if r.records.Queue(tx.Tenant(), rec) {
		return id.String(), nil
	}
	if err := tx.RecordRetrieval(ctx, rec); err != nil {
		return "", err
	}
	return id.String(), nil
}

// Retrieval is a recorded search or context call.
type Retrieval struct {
	ID        string      `json:"id"`
	Kind      string      `json:"kind"`
	QueryHash string      `json:"query_hash"`
	UserID    string      `json:"user_id,omitempty"`
	SessionID string      `json:"session_id,omitempty"`
	MemoryIDs []uuid.UUID `json:"memory_ids"`
	TurnIDs   []string    `json:"turn_ids"`
	// MemoryScores and TurnScores are aligned with the ids: the score each was ranked
	// by, null where it was not ranked (a context's profile memories and session turns).
	MemoryScores []*float64 `json:"memory_scores"`
	TurnScores   []*float64 `json:"turn_scores"`
	CreatedAt    time.Time  `json:"created_at"`
}

// GetRetrieval reads a retrieval record; memory.ErrNotFound when the tenant has none
// with that id.
func (r *Retriever) GetRetrieval(ctx context.Context, tenant string, id uuid.UUID) (Retrieval, error) {
	// A record may still be queued: write the queue first.
	if err := r.records.Flush(ctx); err != nil {
		return Retrieval{}, err
	}
	rec, err := r.store.GetRetrieval(ctx, tenant, id)
	if err != nil {
		return Retrieval{}, err
	}
	return Retrieval{ID: rec.ID.String(), Kind: rec.Kind, QueryHash: fmt.Sprintf("%x", rec.QueryHash),
		UserID: rec.UserID, SessionID: rec.SessionID, MemoryIDs: rec.MemoryIDs, TurnIDs: rec.TurnIDs,
		MemoryScores: rec.MemoryScores, TurnScores: rec.TurnScores, CreatedAt: rec.CreatedAt}, nil
}
