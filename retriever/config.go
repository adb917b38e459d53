package retriever

import (
	"fmt"
	"time"
)

// Config tunes the retriever. Zero values take the documented defaults (see
// DefaultConfig); WithDefaults fills them in.
type Config struct {
	// DefaultTopK and MaxTopK bound a search's result count. Defaults 10 and 100.
	DefaultTopK, MaxTopK int
	// Candidates is how many candidates each side (vector, keyword) contributes before
	// fusion (at least twice top_k); RecentCandidates how many of the owner's most
	// recently updated memories join them. Defaults 30 and 20: enough that a result
	// ranked well on one side still meets its rank on the other, few enough that
	// reading the candidates' rows stays a small part of a search.
	Candidates, RecentCandidates int

	// VectorMinSimilarity keeps memories less similar than this (cosine) off the vector
	// side: rank fusion ignores how similar a neighbour is, so without a floor the
	// nearest of many unrelated memories would count as a vector hit. Default 0.1 (an
	// unrelated text scores about 0 with the hashing embedder and 0.1-0.2 with
	// OpenAI-style models); negative disables the floor.
	VectorMinSimilarity float64
	// RRFK is the reciprocal-rank-fusion constant k (default 60, the value of Cormack
	// et al., which damps the difference between rank 1 and rank 5).
	RRFK float64
	// Per-side fusion weights. Defaults vector 1, keyword 1, recent 0. The recent side
	// supplies candidates (so a vague or empty query still sees fresh memories), but
	// its order enters the score through the recency component of the rerank, not
	// through fusion: with k=60 one extra side is worth far more than the gap between
	// rank 1 and rank 2, so fusing recency would let a fresh partial match (another
	// order number) outrank the exact one.
	VectorSideWeight, KeywordSideWeight, RecentSideWeight float64

	// Rerank weights (they sum to 1 by default, so a final score lies in [0,1]):
	//   final = WeightRRF*normalised RRF + WeightImportance*importance
	//         + WeightRecency*recency + WeightConfidence*confidence
	// Defaults 0.95 / 0 / 0.05 / 0, measured on the LoCoMo dev conversations (conv-26,
	// conv-30; `engram eval locomo`, offline defaults, ENGRAM_SEARCH_WEIGHTS) with the
	// golden set as a guard (40/40 at every point below):
	//   rrf/imp/rec/conf        recall@5  @10    @20    NDCG@10
	//   0.60/0.15/0.15/0.10     24.1 %   49.1 %  64.6 %  0.236
	//   0.80/0.10/0.05/0.05     29.6     50.2    64.6    0.249
	//   0.90/0.04/0.03/0.03     43.1     53.9    64.6    0.327
	//   1.00/0/0/0              45.6     54.5    65.1    0.409
	//   0.95/0/0.05/0           45.6     54.7    65.1    0.413
	// Importance and confidence are priors about a memory, not about the query: any
	// weight on them lets an important but unrelated memory outrank the evidence.
	// They still shape the context's profile layer and stay configurable. A little
	// recency breaks ties toward what became true most recently. Normalised RRF is the
	// fused score divided by the score of a result ranked first on every side that ran.
	WeightRRF, WeightImportance, WeightRecency, WeightConfidence float64
	// RecencyHalfLife is the half-life of the recency component exp(-ln2·age/h),
	// age measured from valid_from (when it became true; occurred_at for turns).
	// Default 30 days.
	RecencyHalfLife time.Duration
	// DuplicateCosine drops a result whose vector is closer than this to a better one
	// (default 0.97); results with the same normalised content are always dropped.
	DuplicateCosine float64
	// MemoryLayerWeight scales the normalised RRF of memory results when a search
	// reads both layers, and TurnNeighbourWeight is the share of a turn's keyword
	// score that the turns just before and after it in its session receive (a reply
	// answers in words of its own what the turn before asked in the query's words;
	// negative: turns rank on their own text only). Defaults 0.95 and 0.5, measured
	// on the LoCoMo dev conversations only (conv-26, conv-30; `engram eval locomo`,
	// offline defaults; golden 40/40 at every point):
	//   neighbours/memory weight  hybrid @5  @10    @20    NDCG@10
	//   off /1     (BM25 alone)   49.4 %    57.7 %  68.5 %  0.430
	//   0.3 /1                    50.6      63.5    74.1    0.450
	//   0.5 /1                    49.1      64.0    75.9    0.432
	//   0.7 /1                    49.7      65.6    75.2    0.433
	//   0.5 /0.95                 58.9      68.0    76.3    0.486
	//   0.5 /0.95, final code     57.9      68.0    77.4    0.491  (default)
	//   0.5 /0.85                 58.9      71.0    78.4    0.496  (= turns alone)
	// bm25-turns, the in-process baseline of the same runs: 50.1 / 57.0 / 63.5 / 0.431
	// (the rows above the last were measured before BM25 was split in two stages and
	// the length became length(tsv); the last row is the shipped code).
	// The offline extractor's memories find little evidence (memories-only recall@10
	// about 8 %), so every weight at which they enter the top ten costs recall; 0.85
	// would keep them out of it altogether (a memory ranked first on both of its sides
	// scores like the 12th turn), 0.95 lets the best of them in (like the 4th turn).
	// Re-measure when the extractor changes. The hashing embedder's vector side is
	// noise for turns (ENGRAM_EMBED_TURNS=true: hybrid @10 43.4 %), so offline turns
	// stay keyword-only.
	MemoryLayerWeight, TurnNeighbourWeight float64
	// TurnImportance and TurnConfidence stand in for the missing columns of raw turns
	// when they are ranked with memories (defaults 0.3 and 0.5: a turn is neither
	// distilled nor confirmed).
	TurnImportance, TurnConfidence float64
	// EmbedTurns adds a vector side to the turns layer: the owner's turn vectors under
	// the retriever's embedding model (written by the extractor pipeline's
	// TurnEmbedder) are ranked by cosine to the query and fused with the keyword side.
	// Off, turns are searched by keyword only. Turns stored without a vector (before it
	// was enabled, or when embedding failed) stay keyword-searchable.
	EmbedTurns bool

	// DefaultBudget and MaxBudget bound /v1/context budget_tokens (1500 and 32000).
	DefaultBudget, MaxBudget int
	// Shares split a context budget over the layers in order working, short-term,
	// procedural, semantic, episodic (defaults 0.15, 0.20, 0.20, 0.30, 0.15); what a
	// layer leaves unused flows to the next.
	Shares [5]float64
	// WindowTurns is how many of the session's last turns the short-term layer reads
	// (default 20).
	WindowTurns int
	// ProfileLimit is how many standing preferences, constraints and profile facts lead
	// the semantic layer whatever the query (default 8).
	ProfileLimit int
	// ContextCandidates is how many ranked memories a context call considers across the
	// procedural, semantic and episodic layers (default 60).
	ContextCandidates int
	// ContextTurns is how many of the user's own earlier words a context call may add
	// to its episodic layer when no memory matches the query by keyword: turns of other
	// sessions that match it, that no memory came from and that nothing later speaks
	// about (default 3; negative: none). What the extractor did not recognise is then
	// still found, while what it did keep, drop or see superseded is not shown twice.
	ContextTurns int

	// SummaryMinTurns is the session length from which a rolling summary is kept, and
	// SummaryEvery how many new turns trigger a refresh (defaults 30 and 10).
	// SummaryMaxSentences bounds the extractive summary (default 8).
	SummaryMinTurns, SummaryEvery, SummaryMaxSentences int

	// RecordRetrievals writes a retrievals row per search and context call (default on;
	// set DisableRecords to turn it off, e.g. in benchmarks of the bare read path).
	DisableRecords bool
	// AccessFlushInterval is how often batched access counts are written (1s), and
	// AccessBuffer the capacity of the queue in front of the flusher (4096 reads); when
	// it is full, access updates are dropped and counted rather than slowing reads.
	AccessFlushInterval time.Duration
	AccessBuffer        int
	// RecordFlushInterval is how often queued retrieval records are written (100ms),
	// and RecordBuffer the capacity of their queue (4096); a call that finds the queue
	// full writes its record itself.
	RecordFlushInterval time.Duration
	RecordBuffer        int

	// Tasks reads working memory for context calls; nil leaves that layer empty.
	Tasks TaskStateReader

	// VectorsComplete, when set, says whether every memory has a vector in model (the
	// steady state, known from a periodic count): a search then skips the per-owner
	// coverage count and the check for memories lacking a vector, and reports
	// vector_coverage 1. Nil: always count.
	VectorsComplete func(model string) bool
	// CoverageCacheTTL is how long a per-owner coverage count is reused (default 10s;
	// negative: count on every search). The count reads every memory of the owner,
	// more than the rest of a search; a new model is a new count.
	CoverageCacheTTL time.Duration
	// StatsCacheTTL is how long an owner's BM25 statistics (document count and mean
	// length, of memories and of turns) are reused (default 60s; negative: count on
	// every search). Counting reads every row of the owner; the figures move by one
	// row in N per write, so a minute's lag changes scores by a hair.
	StatsCacheTTL time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		DefaultTopK: 10, MaxTopK: 100,
		Candidates: 30, RecentCandidates: 20,
		RRFK:                60,
		VectorMinSimilarity: 0.1,
		VectorSideWeight:    1, KeywordSideWeight: 1, RecentSideWeight: 0,
		WeightRRF: 0.95, WeightImportance: 0, WeightRecency: 0.05, WeightConfidence: 0,
		RecencyHalfLife: 30 * 24 * time.Hour,
		DuplicateCosine: 0.97,
		TurnImportance:  0.3, TurnConfidence: 0.5,
		MemoryLayerWeight: 0.95, TurnNeighbourWeight: 0.5,
		DefaultBudget: 1500, MaxBudget: 32000,
		Shares:              [5]float64{0.15, 0.20, 0.20, 0.30, 0.15},
		WindowTurns:         20,
		ProfileLimit:        8,
		ContextCandidates:   60,
		ContextTurns:        3,
		SummaryMinTurns:     30,
		SummaryEvery:        10,
		SummaryMaxSentences: 8,
		AccessFlushInterval: time.Second,
		AccessBuffer:        4096,
		RecordFlushInterval: 100 * time.Millisecond,
		RecordBuffer:        4096,
		CoverageCacheTTL:    10 * time.Second,
		StatsCacheTTL:       time.Minute,
	}
}

// SetContextTurns sets ContextTurns from an operator's count, where 0 turns the fallback
// off (ENGRAM_CONTEXT_TURNS); in Config itself 0 reads as the default.
func (c *Config) SetContextTurns(n int) {
	c.ContextTurns = n
	if n == 0 {
		c.ContextTurns = -1
	}
}

// WithDefaults returns c with every zero field set to its default. The rerank
// weights are taken as a group: all zero means the defaults.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setFloat := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setInt(&c.DefaultTopK, d.DefaultTopK)
	setInt(&c.MaxTopK, d.MaxTopK)
	setInt(&c.Candidates, d.Candidates)
	setInt(&c.RecentCandidates, d.RecentCandidates)
	setFloat(&c.RRFK, d.RRFK)
	setFloat(&c.VectorMinSimilarity, d.VectorMinSimilarity)
	if c.VectorSideWeight == 0 && c.KeywordSideWeight == 0 {
		c.VectorSideWeight, c.KeywordSideWeight = d.VectorSideWeight, d.KeywordSideWeight
	}
	if c.WeightRRF == 0 && c.WeightImportance == 0 && c.WeightRecency == 0 && c.WeightConfidence == 0 {
		c.WeightRRF, c.WeightImportance, c.WeightRecency, c.WeightConfidence = d.WeightRRF, d.WeightImportance, d.WeightRecency, d.WeightConfidence
	}
	if c.RecencyHalfLife == 0 {
		c.RecencyHalfLife = d.RecencyHalfLife
	}
	setFloat(&c.DuplicateCosine, d.DuplicateCosine)
	setFloat(&c.MemoryLayerWeight, d.MemoryLayerWeight)
	setFloat(&c.TurnNeighbourWeight, d.TurnNeighbourWeight)
	setFloat(&c.TurnImportance, d.TurnImportance)
	setFloat(&c.TurnConfidence, d.TurnConfidence)
	setInt(&c.DefaultBudget, d.DefaultBudget)
	setInt(&c.MaxBudget, d.MaxBudget)
	if c.Shares == ([5]float64{}) {
		c.Shares = d.Shares
	}
	setInt(&c.WindowTurns, d.WindowTurns)
	setInt(&c.ProfileLimit, d.ProfileLimit)
	setInt(&c.ContextCandidates, d.ContextCandidates)
	setInt(&c.ContextTurns, d.ContextTurns)
	setInt(&c.SummaryMinTurns, d.SummaryMinTurns)
	setInt(&c.SummaryEvery, d.SummaryEvery)
	setInt(&c.SummaryMaxSentences, d.SummaryMaxSentences)
	if c.AccessFlushInterval == 0 {
		c.AccessFlushInterval = d.AccessFlushInterval
	}
	if c.CoverageCacheTTL == 0 {
		c.CoverageCacheTTL = d.CoverageCacheTTL
	}
	if c.StatsCacheTTL == 0 {
		c.StatsCacheTTL = d.StatsCacheTTL
	}
	setInt(&c.AccessBuffer, d.AccessBuffer)
	setInt(&c.RecordBuffer, d.RecordBuffer)
	if c.RecordFlushInterval == 0 {
		c.RecordFlushInterval = d.RecordFlushInterval
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.DefaultTopK < 1 || c.MaxTopK < c.DefaultTopK:
		return fmt.Errorf("retriever config: top k: default %d, max %d", c.DefaultTopK, c.MaxTopK)
	case c.Candidates < 1 || c.RecentCandidates < 0:
		return fmt.Errorf("retriever config: candidates %d, recent %d", c.Candidates, c.RecentCandidates)
	case c.RecordFlushInterval < 0 || c.RecordBuffer < 0:
		return fmt.Errorf("retriever config: record flush interval %v and buffer %d must not be negative", c.RecordFlushInterval, c.RecordBuffer)
	case c.RRFK <= 0:
		return fmt.Errorf("retriever config: rrf k must be positive, got %v", c.RRFK)
	case c.VectorSideWeight < 0 || c.KeywordSideWeight < 0 || c.RecentSideWeight < 0:
		return fmt.Errorf("retriever config: side weights must not be negative")
	case c.WeightRRF < 0 || c.WeightImportance < 0 || c.WeightRecency < 0 || c.WeightConfidence < 0:
		return fmt.Errorf("retriever config: rerank weights must not be negative")
	case c.MemoryLayerWeight < 0:
		return fmt.Errorf("retriever config: memory layer weight must not be negative")
	case c.RecencyHalfLife < 0:
		return fmt.Errorf("retriever config: recency half-life must not be negative")
	case c.DefaultBudget < 1 || c.MaxBudget < c.DefaultBudget:
		return fmt.Errorf("retriever config: budget: default %d, max %d", c.DefaultBudget, c.MaxBudget)
	}
	sum := 0.0
	for _, s := range c.Shares {
		if s < 0 {
			return fmt.Errorf("retriever config: layer shares must not be negative, got %v", c.Shares)
		}
		sum += s
	}
	if sum <= 0 || sum > 1.0001 {
		return fmt.Errorf("retriever config: layer shares must sum to at most 1, got %v", sum)
	}
	return nil
}
