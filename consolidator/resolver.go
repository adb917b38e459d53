// Package consolidator turns memory candidates into memories. The online resolver
// (this file, rules.go, judge.go, worker.go) decides for each candidate whether it is
// new (add), a restatement (confirm), a refinement (update), a contradiction
// (supersede) or doubtful (pending), and writes the outcome in one transaction with
// an idempotency ledger. ops.go offers the operations API (read, history, correct,
// deprecate, rollback, as-of); bench.go measures the resolver at scale. The nightly
// consolidation (distillation, forgetting) belongs here too, in its own files.
//
// Design choice: a supersede writes a new version of the SAME memory row (same id),
// not a new row. The old content stays in memory_versions with status superseded and
// valid_to = the new valid_from, so history, as-of reads and rollback of one fact
// live under one id, and references to the memory (lineage, audit) stay valid.
package consolidator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Embedder is what the resolver needs of an embedding model (llm.Embedder fits).
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ResolverConfig holds the resolver's thresholds. Zero fields take the defaults of
// DefaultResolverConfig.
//
// The defaults were chosen by measurement with the local hash embedder
// (engram-hash-v1) on testdata/pairs.jsonl (146 labelled zh/en pairs, ≥ 35 per
// label), moving one threshold at a time with the others at their defaults
// (TestThresholdSweep, ENGRAM_RESOLVER_SWEEP=1; macro F1 of the four labels):
//   - DuplicateSim 0.80: F1 0.973 on the plateau 0.80–0.95; 0.75 → 0.966 and
//     0.65 → 0.946 as refinements and same-topic facts start being confirmed
//     (duplicate precision 0.97, 0.87). 0.80 is the low edge of the plateau, so
//     restatements at 0.80–0.85 still merge.
//   - RefineSim 0.35: flat 0.10–0.40 (containment does the work), then recall of
//     refinements falls (0.50 → 0.89, 0.70 → 0.37): long additions dilute the vector.
//     0.35 is the top of the flat part, the safest against unrelated pairs.
//   - ContradictSim 0.45: F1 equal from 0.05 to 0.45, contradiction precision best
//     at 0.45 (0.95 vs 0.93 below 0.40); above it recall drops (0.55 → 0.93,
//     0.75 → 0.85). "I love Chinese food" / "I hate Chinese food" scores 0.63.
//   - NeighbourFloor 0.25: flat 0.10–0.40, then recall drops (0.50 → 0.953); low,
//     so the judge sees near misses; below 0.2 it would see most of the owner.
//   - Containment 0.75: 0.70 scores 0.980, 0.75 0.973, 0.65 0.966 with duplicate
//     precision 0.94; 0.75 keeps a margin from that edge.
//   - PendingConfidence 0.5: the offline extractor gives unverified claims 0.5 and
//     hedged statements 0.7, so only what is weaker than a claim waits.
//
// With these, dev-set precision/recall are ≥ 0.94 for every label; on
// testdata/holdout.jsonl (40 pairs written after the rules were frozen) macro F1 is
// 0.78, with paraphrased duplicates the weak spot (recall 0.40): lexical rules
// cannot see synonyms, which is what the LLM judge is for. A dense embedding model
// needs its own sweep: its cosines sit higher and closer together.
type ResolverConfig struct {
	// DuplicateSim is the cosine at and above which a candidate without a polarity
	// change restates a memory (confirm). Default 0.80.
	DuplicateSim float64
	// RefineSim is the lowest cosine at which a candidate that contains a memory's
	// tokens and adds detail refines it (update). Default 0.35.
	RefineSim float64
	// ContradictSim is the lowest cosine at which a polarity flip or a change cue makes
	// a candidate contradict a memory without a shared key (supersede). Default 0.45.
	ContradictSim float64
	// NeighbourFloor is the cosine below which a neighbour is not considered (unless
	// it has the candidate's key); the judge is not called when none passes it.
	// Default 0.25.
	NeighbourFloor float64
	// Containment is the share of one text's tokens the other must hold for the
	// containment rules (refinement, restatement). Default 0.75.
	Containment float64
	// PendingConfidence: candidates below it are held pending. Default 0.5.
	PendingConfidence float64
	// ConfidenceCap bounds confidence raised by confirmations. Default 0.99.
	ConfidenceCap float64
	// K is how many nearest neighbours are read. Default 8.
	K int
	// MaxAttempts bounds transient-error retries inside Resolve. Default 4.
	MaxAttempts int
	// Actor is recorded on versions and audit entries. Default "resolver".
	Actor string
}

// DefaultResolverConfig returns the measured defaults (see ResolverConfig).
func DefaultResolverConfig() ResolverConfig {
	return ResolverConfig{
		DuplicateSim:      0.80,
		RefineSim:         0.35,
		ContradictSim:     0.45,
		NeighbourFloor:    0.25,
		Containment:       0.75,
		PendingConfidence: 0.5,
		ConfidenceCap:     0.99,
		K:                 8,
		MaxAttempts:       4,
		Actor:             "resolver",
	}
}

func (c ResolverConfig) withDefaults() ResolverConfig {
	d := DefaultResolverConfig()
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setF(&c.DuplicateSim, d.DuplicateSim)
	setF(&c.RefineSim, d.RefineSim)
	setF(&c.ContradictSim, d.ContradictSim)
	setF(&c.NeighbourFloor, d.NeighbourFloor)
	setF(&c.Containment, d.Containment)
	setF(&c.PendingConfidence, d.PendingConfidence)
	setF(&c.ConfidenceCap, d.ConfidenceCap)
	if c.K <= 0 {
		c.K = d.K
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.Actor == "" {
		c.Actor = d.Actor
	}
	return c
}

// DecisionKind is what the resolver did with a candidate.
type DecisionKind string

const (
	KindAdd       DecisionKind = "add"       // a new active memory
	KindConfirm   DecisionKind = "confirm"   // an existing memory restated: confidence and lineage grow
	KindUpdate    DecisionKind = "update"    // a new version with merged content
	KindSupersede DecisionKind = "supersede" // a new version replacing a contradicted one
	KindPending   DecisionKind = "pending"   // held (new or existing) until a trusted source confirms
	KindPromote   DecisionKind = "promote"   // a pending memory confirmed and made active
	KindNoop      DecisionKind = "noop"      // nothing to store
)

// Decision is the outcome of resolving one candidate.
type Decision struct {
	Kind     DecisionKind `json:"kind"`
	MemoryID uuid.UUID    `json:"memory_id,omitzero"`
	Reason   string       `json:"reason"`
	// By is "rules" or "judge".
	By string `json:"by,omitempty"`
	// Replayed is set when the candidate was already in the ledger: the recorded
	// decision is returned and nothing changed.
	Replayed bool `json:"replayed,omitempty"`
}

// Resolver is the online resolver. It is safe for concurrent use: writers of one
// owner serialise on a PostgreSQL advisory lock, so any number of resolvers in any
// number of processes may run.
type Resolver struct {
	store   *memory.Store
	emb     Embedder
	judge   Judge
	cfg     ResolverConfig
	log     *slog.Logger
	batches ownerBatches
}

// NewResolver makes a resolver. judge may be nil (rules only); a nil logger discards.
func NewResolver(store *memory.Store, emb Embedder, judge Judge, cfg ResolverConfig, logger *slog.Logger) *Resolver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Resolver{store: store, emb: emb, judge: judge, cfg: cfg.withDefaults(), log: logger.With("component", "resolver")}
}

const module = "consolidator"

// errLedgerRace means another transaction recorded the same candidate first (only
// possible across owners, which do not share a lock); the retry finds the ledger row.
var errLedgerRace = errors.New("candidate recorded concurrently")

// errStaleVerdict means the neighbours changed between the judge's call and the
// locked transaction, so its verdict may refer to a state that no longer exists.
var errStaleVerdict = errors.New("neighbours changed since the judge was asked")

// maxJudgeRounds bounds judge calls per candidate when neighbours keep changing.
const maxJudgeRounds = 2

// Resolve decides what candidate c means for its owner's memories and writes the
// outcome in one transaction. Transient database errors are retried a few times;
// what remains is returned as is (retry later), and candidates that can never apply
// come back wrapped in streams.Permanent.
func (r *Resolver) Resolve(ctx context.Context, c memory.Candidate) (Decision, error) {
	if err := checkCandidate(c); err != nil {
		return Decision{}, streams.Permanent(fmt.Errorf("resolving candidate %q: %w", c.ID, err))
	}
	vec, err := r.embed(ctx, c.Content)
	if err != nil {
		return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, err)
	}
	return r.resolveVec(ctx, c, vec)
}

// resolveVec is Resolve for a checked candidate and its vector.
func (r *Resolver) resolveVec(ctx context.Context, c memory.Candidate, vec []float32) (Decision, error) {
	var jv *judged
	var err error
	judgeRounds, attempt := 0, 0
	for {
		if r.judge != nil && jv == nil && judgeRounds < maxJudgeRounds {
			judgeRounds++
			var done *Decision
			jv, done, err = r.consultJudge(ctx, c, vec)
			switch {
			case err != nil:
				if r.retry(ctx, &attempt, err) {
					judgeRounds--
					continue
				}
				return Decision{}, r.final(c, err)
			case done != nil:
				return *done, nil
			case jv == nil:
				judgeRounds = maxJudgeRounds // nothing to ask about: rules decide
			}
		}
		d, err := r.resolveOnce(ctx, c, vec, jv)
		if err == nil {
			return d, nil
		}
		if errors.Is(err, errStaleVerdict) {
			r.log.Debug("judge verdict stale; asking again", "candidate", c.ID)
			jv = nil
			continue
		}
		if r.retry(ctx, &attempt, err) {
			continue
		}
		return Decision{}, r.final(c, err)
	}
}

// retry sleeps before another attempt when err is transient and attempts remain.
func (r *Resolver) retry(ctx context.Context, attempt *int, err error) bool {
	*attempt++
	transient := memory.IsRetryable(err) || memory.IsUniqueViolation(err) || errors.Is(err, errLedgerRace) ||
		errors.Is(err, memory.ErrAlreadyRecorded)
	if !transient || *attempt >= r.cfg.MaxAttempts || ctx.Err() != nil {
		return false
	}
	d := time.Duration(float64(20*time.Millisecond) * math.Pow(2, float64(*attempt-1)) * (0.5 + rand.Float64()))
	r.log.Debug("transient failure; retrying", "err", err, "attempt", *attempt, "delay", d)
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *Resolver) final(c memory.Candidate, err error) error {
	err = fmt.Errorf("resolving candidate %s: %w", c.ID, err)
	if errors.Is(err, memory.ErrInvalid) || errors.Is(err, memory.ErrBadTenant) || errors.Is(err, memory.ErrNoTenant) {
		return streams.Permanent(err)
	}
	return err
}

func (r *Resolver) embed(ctx context.Context, text string) ([]float32, error) {
	vs, err := r.emb.Embed(ctx, []string{text})
	if err != nil {
		err = fmt.Errorf("embedding with %s: %w", r.emb.Model(), err)
		if !llm.IsRetryable(err) {
			return nil, streams.Permanent(err)
		}
		return nil, err
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, fmt.Errorf("embedding with %s: got %d vectors for 1 text", r.emb.Model(), len(vs))
	}
	return vs[0], nil
}

// checkCandidate rejects candidates no retry can apply.
func checkCandidate(c memory.Candidate) error {
	var problems []string
	if strings.TrimSpace(c.ID) == "" {
		problems = append(problems, "id is empty")
	}
	if err := memory.CheckTenant(c.Tenant); err != nil {
		problems = append(problems, err.Error())
	}
	if !c.Scope.Valid() {
		problems = append(problems, fmt.Sprintf("scope %q is invalid", c.Scope))
	}
	if !c.Type.Valid() {
		problems = append(problems, fmt.Sprintf("type %q is invalid", c.Type))
	}
	if !c.Category.Valid() {
		problems = append(problems, fmt.Sprintf("category %q is invalid", c.Category))
	}
	if !c.Source.Valid() {
		problems = append(problems, fmt.Sprintf("source %q is invalid", c.Source))
	}
	if strings.TrimSpace(c.Content) == "" {
		problems = append(problems, "content is empty")
	} else if n := utf8.RuneCountInString(c.Content); n > 8000 {
		problems = append(problems, fmt.Sprintf("content has %d characters (at most 8000)", n))
	}
	if utf8.RuneCountInString(c.Key) > 200 {
		problems = append(problems, "key is longer than 200 characters")
	}
	if !(c.Importance >= 0 && c.Importance <= 1) {
		problems = append(problems, fmt.Sprintf("importance %v is outside [0,1]", c.Importance))
	}
	if !(c.Confidence >= 0 && c.Confidence <= 1) {
		problems = append(problems, fmt.Sprintf("confidence %v is outside [0,1]", c.Confidence))
	}
	switch c.Scope {
	case memory.ScopeUser:
		if c.UserID == "" {
			problems = append(problems, "user_id is required for user scope")
		}
	case memory.ScopeSession:
		if c.UserID == "" || c.SessionID == "" {
			problems = append(problems, "user_id and session_id are required for session scope")
		}
	case memory.ScopeAgent:
		if c.AgentID == "" {
			problems = append(problems, "agent_id is required for agent scope")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", memory.ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}

// lockKey names the owner whose writers serialise.
func lockKey(c memory.Candidate) string {
	return memory.Owner{UserID: c.UserID, AgentID: c.AgentID, Scope: c.Scope}.LockKey()
}

// sameOwner reports whether m belongs to the pool of memories c is resolved against.
func sameOwner(c memory.Candidate, m memory.Memory) bool {
	switch c.Scope {
	case memory.ScopeAgent:
		return m.Scope == memory.ScopeAgent && m.AgentID == c.AgentID
	case memory.ScopeGlobal:
		return m.Scope == memory.ScopeGlobal
	case memory.ScopeSession:
		return m.UserID == c.UserID && (m.Scope == memory.ScopeUser || (m.Scope == memory.ScopeSession && m.SessionID == c.SessionID))
	}
	return m.UserID == c.UserID && m.Scope == memory.ScopeUser
}

// resolveOnce is one attempt: lock the owner, consult the ledger, read the
// neighbours, decide, write, record — in a pipelined transaction (memory.InOwnerTx),
// where the lock, the ledger and the reads take one round trip and the writes with
// the commit one or two more.
func (r *Resolver) resolveOnce(ctx context.Context, c memory.Candidate, vec []float32, jv *judged) (Decision, error) {
	var d Decision
	err := r.store.InOwnerTx(ctx, c.Tenant, lockKey(c), func(tx *memory.Tx) error {
		var err error
		d, err = r.decideLocked(ctx, tx, c, vec, jv)
		return err
	})
	if err != nil {
		return Decision{}, err
	}
	if !d.Replayed {
		r.log.Debug("resolved", "candidate", c.ID, "kind", d.Kind, "memory", d.MemoryID, "by", d.By, "reason", d.Reason)
	}
	return d, nil
}

// decideLocked is one resolution in tx, which holds the owner's lock: consult the
// ledger, read the neighbours, decide, write, record.
func (r *Resolver) decideLocked(ctx context.Context, tx *memory.Tx, c memory.Candidate, vec []float32, jv *judged) (Decision, error) {
	rd, err := tx.ResolveReads(ctx, r.readQuery(c, vec, c.ID))
	if err != nil {
		return Decision{}, err
	}
	if rd.Recorded {
		e := rd.Ledger
		return Decision{Kind: DecisionKind(e.Decision), Reason: e.Reason, Replayed: true, MemoryID: e.MemoryID}, nil
	}
	ns := r.neighboursOf(c, rd)
	p, err := r.plan(c, vec, ns, jv)
	if err != nil {
		return Decision{}, err
	}
	d, err := r.write(ctx, tx, c, vec, ns, p)
	if err != nil {
		return Decision{}, err
	}
	if err := r.retireRuledOut(ctx, tx, c, ns, d); err != nil {
		return Decision{}, err
	}
	first, err := tx.RecordCandidate(ctx, c.ID, d.MemoryID, string(d.Kind), d.Reason)
	if err != nil {
		return Decision{}, err
	}
	if !first {
		return Decision{}, errLedgerRace
	}
	return d, nil
}

// ResolveLocked resolves c inside the caller's transaction, which must already hold
// the owner's lock (tx.LockOwner with memory.Owner{UserID, AgentID, Scope}.LockKey()).
// It is Resolve for a caller that changes several memories of one owner in one step
// (a rebuild from the turn log): the judge, when there is one, is asked inside the
// transaction, since nobody else can change the owner's memories meanwhile, and
// nothing is retried — on an error the caller rolls back and retries the whole step.
func (r *Resolver) ResolveLocked(ctx context.Context, tx *memory.Tx, c memory.Candidate) (Decision, error) {
	if err := checkCandidate(c); err != nil {
		return Decision{}, streams.Permanent(fmt.Errorf("resolving candidate %q: %w", c.ID, err))
	}
	if tx.Tenant() != c.Tenant {
		return Decision{}, streams.Permanent(fmt.Errorf("resolving candidate %s of tenant %s in a transaction of tenant %s: %w",
			c.ID, c.Tenant, tx.Tenant(), memory.ErrBadTenant))
	}
	vec, err := r.embed(ctx, c.Content)
	if err != nil {
		return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, err)
	}
	var jv *judged
	if r.judge != nil {
		rec, ok, err := recordedDecision(ctx, tx, c.ID)
		if err != nil || ok {
			return rec, err
		}
		ns, err := r.neighbours(ctx, tx, c, vec)
		if err != nil {
			return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, err)
		}
		if jv, err = r.askJudge(ctx, c, vec, ns); err != nil {
			return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, err)
		}
	}
	d, err := r.decideLocked(ctx, tx, c, vec, jv)
	if err != nil {
		return Decision{}, fmt.Errorf("resolving candidate %s: %w", c.ID, err)
	}
	return d, nil
}

// recordedDecision reads the ledger entry of a candidate, if any.
func recordedDecision(ctx context.Context, tx *memory.Tx, candidateID string) (Decision, bool, error) {
	e, ok, err := tx.LedgerEntry(ctx, candidateID)
	if err != nil || !ok {
		return Decision{}, false, err
	}
	return Decision{Kind: DecisionKind(e.Decision), Reason: e.Reason, Replayed: true, MemoryID: e.MemoryID}, true, nil
}

// neighbours returns the owner's K nearest active and pending memories under the
// embedder's model, plus every active or pending memory with the candidate's key.
func (r *Resolver) neighbours(ctx context.Context, tx *memory.Tx, c memory.Candidate, vec []float32) ([]scored, error) {
	rd, err := tx.ResolveReads(ctx, r.readQuery(c, vec, ""))
	if err != nil {
		return nil, err
	}
	return r.neighboursOf(c, rd), nil
}

// sourceIDs are the memories a candidate derives from (a distilled one's sources).
func sourceIDs(c memory.Candidate) map[uuid.UUID]bool {
	seen := map[uuid.UUID]bool{}
	for _, id := range c.SourceMemoryIDs {
		if u, err := uuid.Parse(id); err == nil {
			seen[u] = true
		}
	}
	return seen
}

// readQuery is what neighboursOf needs read for c (and its ledger entry when
// candidateID is not empty).
func (r *Resolver) readQuery(c memory.Candidate, vec []float32, candidateID string) memory.ResolveQuery {
	q := memory.ResolveQuery{CandidateID: candidateID,
		Nearest: memory.NearestQuery{UserID: c.UserID, Model: r.emb.Model(), Vector: vec, K: r.cfg.K + len(sourceIDs(c))}}
	if c.Key != "" {
		q.Key, q.KeyPrefixes, q.PrefixLimit = c.Key, relatedPrefixes(c), maxRelated
	}
	names := append(departedNames(c), metaNames(c, "aged")...)
	if n := personOf(c.Key); n != "" {
		// Someone told of by name: what a relation's slot says of that name is read too.
		names = append(names, n)
	}
	if len(names) > 0 {
		// Who or what left: what was said of them is read whatever its similarity, for
		// retireRuledOut.
		q.Mentions, q.MentionLimit = names, maxRelated
	}
	return q
}

// neighboursOf picks c's neighbours from what readQuery read.
func (r *Resolver) neighboursOf(c memory.Candidate, rd memory.ResolveRead) []scored {
	// A candidate derived from memories (a distilled one) is never a restatement or
	// a revision of its own sources: confirming or rewriting one of them would lose
	// the derived statement. Its sources are left out of its neighbours, and as many
	// more are read so that K others remain.
	seen := sourceIDs(c)
	near := rd.Nearest
	out := make([]scored, 0, len(near)+1)
	for _, n := range near {
		if !sameOwner(c, n.Memory) || seen[n.Memory.ID] || len(out) >= r.cfg.K {
			continue
		}
		seen[n.Memory.ID] = true
		out = append(out, scored{mem: n.Memory, sim: n.Similarity, sameKey: meets(c, n.Memory),
			related: related(c, n.Memory)})
	}
	// Memories in the key slot but outside the top K, and those that mention who or
	// what the candidate says left (whatever their key), come with their similarity
	// (zero when they have no vector under this model).
	add := func(ns []memory.Neighbour, keyed bool) {
		for _, k := range ns {
			m := k.Memory
			if !sameOwner(c, m) || seen[m.ID] || keyed && !(m.Key == c.Key || related(c, m)) {
				continue
			}
			seen[m.ID] = true
			out = append(out, scored{mem: m, sim: k.Similarity, sameKey: meets(c, m), related: related(c, m)})
		}
	}
	add(rd.Keyed, true)
	add(rd.Mentioned, false)
	return out
}

// maxRelated bounds the memories read per related key prefix.
const maxRelated = 20

// related reports a memory in a slot candidate c meets although the keys differ.
func related(c memory.Candidate, m memory.Memory) bool {
	return (m.Key != c.Key && meets(c, m)) || dietRulesOut(c, m)
}

// plan is what to do: a relation to one neighbour (target −1 for none).
type plan struct {
	target    int
	rel       relation
	noop      bool
	merged    string    // content of an update
	mergedVec []float32 // its vector
	by        string
	reason    string
}

// plan decides from the judge's verdict when there is a fresh one, else by the rules.
func (r *Resolver) plan(c memory.Candidate, vec []float32, ns []scored, jv *judged) (plan, error) {
	if jv != nil {
		if fp := fingerprint(r.judgeable(ns)); fp != jv.fingerprint {
			return plan{}, errStaleVerdict
		}
		p := plan{target: -1, rel: jv.rel, noop: jv.noop, merged: jv.merged, mergedVec: jv.mergedVec, by: "judge", reason: "judge: " + jv.reason}
		if jv.target != uuid.Nil {
			for i, n := range ns {
				if n.mem.ID == jv.target {
					p.target = i
				}
			}
		}
		if p.rel != relUnrelated && p.target < 0 {
			return plan{}, errStaleVerdict
		}
		return p, nil
	}
	i, m := r.cfg.chooseRule(c, ns)
	p := plan{target: i, rel: m.rel, by: "rules", reason: m.reason}
	if i >= 0 {
		p.reason = fmt.Sprintf("%s of %s: %s", m.rel, ns[i].mem.ID, m.reason)
	}
	if m.rel == relRefinement {
		p.merged, p.mergedVec = c.Content, vec
	}
	return p, nil
}

// doubtful reports candidates that must wait for confirmation: weak ones, and
// assistant claims nobody confirmed.
func (r *Resolver) doubtful(c memory.Candidate) bool {
	return c.Confidence < r.cfg.PendingConfidence || (c.Source == memory.SourceAssistant && !c.Trusted)
}

// raise is the confidence after a confirmation: each independent restatement removes
// half of the remaining doubt its own confidence would, c' = 1-(1-c)(1-c_new/2).
func (r *Resolver) raise(old, add float64) float64 {
	v := 1 - (1-old)*(1-add*0.5)
	return math.Min(math.Max(v, old), r.cfg.ConfidenceCap)
}

// write applies the plan in tx.
func (r *Resolver) write(ctx context.Context, tx *memory.Tx, c memory.Candidate, vec []float32, ns []scored, p plan) (Decision, error) {
	doubt := r.doubtful(c)
	d := Decision{By: p.by, Reason: p.reason}
	if p.noop {
		d.Kind = KindNoop
		return d, nil
	}
	if p.target < 0 || p.rel == relUnrelated {
		status, kind := memory.StatusActive, KindAdd
		if doubt {
			status, kind = memory.StatusPending, KindPending
			d.Reason = "doubtful (" + doubtReason(c) + "); " + d.Reason
		}
		m, err := tx.CreateMemory(ctx, r.newMemory(c, vec, status, d.Reason))
		if err != nil {
			return Decision{}, err
		}
		d.Kind, d.MemoryID = kind, m.ID
		return d, nil
	}
	t := ns[p.target].mem
	d.MemoryID = t.ID
	pending := t.Status == memory.StatusPending
	upd := memory.Update{
		SourceTurnIDs: c.SourceTurnIDs, SourceMemoryIDs: c.SourceMemoryIDs,
		CandidateID: c.ID, Actor: r.cfg.Actor, Module: module, Reason: d.Reason,
	}
	conf := r.raise(t.Confidence, c.Confidence)
	active := memory.StatusActive

	switch {
	case p.rel == relDuplicate && !pending && doubt:
		// An unconfirmed restatement of something already believed is no evidence.
		d.Kind = KindNoop
		d.Reason = "doubtful restatement of an active memory (" + doubtReason(c) + "); " + d.Reason
		return d, nil
	case p.rel == relDuplicate && !pending:
		if err := tx.ConfirmLater(ctx, t.ID, conf, c.SourceTurnIDs, c.ID, r.cfg.Actor); err != nil {
			return Decision{}, err
		}
		if err := tx.AddLineage(ctx, t.ID, memory.LineageMemory, c.SourceMemoryIDs, c.ID); err != nil {
			return Decision{}, err
		}
		d.Kind = KindConfirm
	case p.rel == relDuplicate && doubt:
		// Another unconfirmed mention of a pending memory: lineage grows, it stays pending.
		if err := tx.ConfirmLater(ctx, t.ID, t.Confidence, c.SourceTurnIDs, c.ID, r.cfg.Actor); err != nil {
			return Decision{}, err
		}
		d.Kind = KindPending
	case p.rel == relDuplicate: // trusted confirmation of a pending memory
		upd.Change, upd.Status, upd.Confidence = memory.ChangePromote, &active, &conf
		if _, err := tx.Apply(ctx, t.ID, upd); err != nil {
			return Decision{}, err
		}
		d.Kind = KindPromote
	case p.rel == relRefinement && !pending && doubt:
		// An unconfirmed detail must not rewrite a believed memory: it waits on its own.
		m, err := tx.CreateMemory(ctx, r.newMemory(c, vec, memory.StatusPending, d.Reason))
		if err != nil {
			return Decision{}, err
		}
		d.Kind, d.MemoryID = KindPending, m.ID
		d.Reason = "doubtful refinement (" + doubtReason(c) + "); " + d.Reason
	case p.rel == relRefinement:
		imp := math.Max(t.Importance, c.Importance)
		upd.Change, upd.Content, upd.Importance = memory.ChangeUpdate, &p.merged, &imp
		upd.Embeddings = []memory.Embedding{{Model: r.emb.Model(), Vector: p.mergedVec}}
		d.Kind = KindUpdate
		switch {
		case pending && !doubt:
			upd.Change, upd.Status, upd.Confidence = memory.ChangePromote, &active, &conf
			d.Kind = KindPromote
		case pending:
			d.Kind = KindPending
			upd.ValidFrom = validFrom(c)
		default:
			upd.Confidence = &conf
			upd.ValidFrom = validFrom(c)
		}
		if c.Key != "" && t.Key == "" {
			upd.Key = &c.Key
		}
		if _, err := tx.Apply(ctx, t.ID, upd); err != nil {
			return Decision{}, err
		}
		if err := tx.DropOtherEmbeddings(ctx, t.ID, r.emb.Model()); err != nil {
			return Decision{}, err
		}
	case p.rel == relContradiction && !c.ValidFrom.IsZero() && c.ValidFrom.Before(t.ValidFrom):
		// Older news than what the memory holds (candidates of one owner may be
		// resolved out of order): the newer statement stands.
		d.Kind = KindNoop
		d.Reason = fmt.Sprintf("stale: the memory holds a newer statement (valid from %s); %s",
			t.ValidFrom.Format(time.RFC3339), d.Reason)
		return d, nil
	case p.rel == relContradiction && !pending && doubt:
		// An unconfirmed claim cannot overturn a believed memory: it waits on its own.
		m, err := tx.CreateMemory(ctx, r.newMemory(c, vec, memory.StatusPending, d.Reason))
		if err != nil {
			return Decision{}, err
		}
		d.Kind, d.MemoryID = KindPending, m.ID
		d.Reason = "doubtful contradiction (" + doubtReason(c) + "); " + d.Reason
	case p.rel == relContradiction:
		content, conf, imp, cat := c.Content, c.Confidence, c.Importance, c.Category
		if fixed, ok := correctedID(c, t.Content); ok && correctedValue(c) == "" {
			// "The digits were swapped, it's 2741": the memory keeps what it said, with
			// the right number; the remark itself holds nothing more.
			content, cat = fixed, t.Category
			v, err := r.embed(ctx, content)
			if err != nil {
				return Decision{}, fmt.Errorf("embedding memory %s corrected by %s: %w", t.ID, c.ID, err)
			}
			vec = v
		}
		upd.Change, upd.Content, upd.Confidence, upd.Importance, upd.Category = memory.ChangeSupersede, &content, &conf, &imp, &cat
		upd.ValidFrom = validFrom(c)
		upd.Embeddings = []memory.Embedding{{Model: r.emb.Model(), Vector: vec}}
		if c.Key != "" && !strings.HasPrefix(t.Key, c.Key+".") {
			// A plan revised by its kind keeps the name it had (plan.flight.oslo).
			upd.Key = &c.Key
		}
		if c.ExpireAt != nil {
			upd.ExpireAt = c.ExpireAt
		} else {
			upd.ClearExpire = true // the old expiry belonged to the old content
		}
		d.Kind = KindSupersede
		if pending && doubt {
			d.Kind = KindPending
		} else if pending {
			upd.Status = &active
		}
		if _, err := tx.Apply(ctx, t.ID, upd); err != nil {
			return Decision{}, err
		}
		if err := tx.DropOtherEmbeddings(ctx, t.ID, r.emb.Model()); err != nil {
			return Decision{}, err
		}
	default:
		return Decision{}, fmt.Errorf("no action for relation %s", p.rel)
	}
	return d, nil
}

// retireRuledOut deprecates the other active memories a believed candidate rules out
// (the supersede itself replaced one): every liking of meat, once the user is vegetarian.
// They stay in history with their validity.
func (r *Resolver) retireRuledOut(ctx context.Context, tx *memory.Tx, c memory.Candidate, ns []scored, d Decision) error {
	switch d.Kind {
	case KindAdd, KindSupersede, KindUpdate, KindConfirm, KindPromote:
	default:
		return nil
	}
	if r.doubtful(c) {
		return nil
	}
	if err := r.propagateCorrection(ctx, tx, c, ns, d); err != nil {
		return err
	}
	if err := r.retireRetellings(ctx, tx, c, ns, d); err != nil {
		return err
	}
	rule := newRuling(c)
	for _, n := range ns {
		if n.mem.ID == d.MemoryID || n.mem.Status != memory.StatusActive || !rule.rulesOut(n.mem) {
			continue
		}
		if !c.ValidFrom.IsZero() && c.ValidFrom.Before(n.mem.ValidFrom) {
			continue // a liking told after the diet is the newer news
		}
		if err := r.retire(ctx, tx, n.mem.ID, fmt.Sprintf("ruled out by candidate %s (%s): %s", c.ID, c.Key, c.Content)); err != nil {
			return fmt.Errorf("retiring memory %s ruled out by %s: %w", n.mem.ID, c.Key, err)
		}
	}
	return nil
}

// retire deprecates memory id with reason; it stays in history with its validity. No
// candidate id on this version: the candidate's own decision carries it.
func (r *Resolver) retire(ctx context.Context, tx *memory.Tx, id uuid.UUID, reason string) error {
	deprecated := memory.StatusDeprecated
	_, err := tx.Apply(ctx, id, memory.Update{Change: memory.ChangeDeprecate, Status: &deprecated,
		Actor: r.cfg.Actor, Module: module, Reason: reason})
	return err
}

// retireRetellings deprecates the memories told together with a slot value c superseded
// (from the same statement: the same valid_from) that retell the old value: "lives in
// Tokyo, so book meetings on Tokyo time" once the user lives in Frankfurt. They stay in
// history with their validity.
func (r *Resolver) retireRetellings(ctx context.Context, tx *memory.Tx, c memory.Candidate, ns []scored, d Decision) error {
	if d.Kind != KindSupersede || correctedValue(c) != "" {
		return nil // a correction rewrites the wrong value where it was written (propagateCorrection)
	}
	var old memory.Memory
	for _, n := range ns {
		if n.mem.ID == d.MemoryID {
			old = n.mem
		}
	}
	if old.Key == "" {
		return nil // only a slot has a value that another memory can retell
	}
	vals := oldValues(old.Content, c.Content)
	// The slot's own words ("niece" of relation.niece.school) name whose value it is, not
	// the value: a memory told with them is not a retelling.
	vals.words = slices.DeleteFunc(vals.words, func(w string) bool {
		return slices.ContainsFunc(strings.FieldsFunc(old.Key+"."+c.Key, func(r rune) bool { return r == '.' || r == '_' }),
			func(k string) bool { return strings.EqualFold(k, w) })
	})
	if vals.empty() {
		return nil
	}
	for _, n := range ns {
		if n.mem.ID == old.ID || n.mem.Status != memory.StatusActive || !n.mem.ValidFrom.Equal(old.ValidFrom) ||
			!vals.heldBy(n.mem.Content) {
			continue
		}
		reason := fmt.Sprintf("retells the old value of %s, superseded by candidate %s: %s", old.Key, c.ID, c.Content)
		if err := r.retire(ctx, tx, n.mem.ID, reason); err != nil {
			return fmt.Errorf("retiring memory %s that retells the old %s: %w", n.mem.ID, old.Key, err)
		}
	}
	return nil
}

// propagateCorrection rewrites the wrong value a correction names ("it's Jayden, not
// Jaden", or a mistyped number of the right one's shape) in the other active memories
// that still hold it: the value was wrong wherever it was written down. Each rewrite is a
// new version with its reason; the old text stays in history.
func (r *Resolver) propagateCorrection(ctx context.Context, tx *memory.Tx, c memory.Candidate, ns []scored, d Decision) error {
	wrong, right := correctedValue(c), correctedTo(c)
	byName := wrong != "" && right != "" && !strings.EqualFold(wrong, right)
	for _, n := range ns {
		if n.mem.ID == d.MemoryID || n.mem.Status != memory.StatusActive {
			continue
		}
		var reason string
		content, ok := correctedID(c, n.mem.Content)
		if ok {
			reason = fmt.Sprintf("corrected by candidate %s: the number is %v", c.ID, c.Metadata["corrects_like"])
		}
		if byName && holdsValue(content, wrong) {
			content, reason = replaceValue(content, wrong, right), fmt.Sprintf("corrected by candidate %s: %q, not %q", c.ID, right, wrong)
		}
		if reason == "" {
			continue
		}
		vec, err := r.embed(ctx, content)
		if err != nil {
			return fmt.Errorf("embedding memory %s corrected by %s: %w", n.mem.ID, c.ID, err)
		}
		if _, err := tx.Apply(ctx, n.mem.ID, memory.Update{Change: memory.ChangeUpdate, Content: &content,
			Embeddings: []memory.Embedding{{Model: r.emb.Model(), Vector: vec}},
			Actor:      r.cfg.Actor, Module: module, Reason: reason}); err != nil {
			return fmt.Errorf("correcting memory %s by %s: %w", n.mem.ID, c.ID, err)
		}
		if err := tx.DropOtherEmbeddings(ctx, n.mem.ID, r.emb.Model()); err != nil {
			return fmt.Errorf("correcting memory %s by %s: %w", n.mem.ID, c.ID, err)
		}
	}
	return nil
}

func validFrom(c memory.Candidate) *time.Time {
	if c.ValidFrom.IsZero() {
		return nil
	}
	v := c.ValidFrom
	return &v
}

func doubtReason(c memory.Candidate) string {
	if c.Source == memory.SourceAssistant && !c.Trusted {
		return "unconfirmed assistant claim"
	}
	return fmt.Sprintf("confidence %.2f", c.Confidence)
}

func (r *Resolver) newMemory(c memory.Candidate, vec []float32, status memory.Status, reason string) memory.NewMemory {
	return memory.NewMemory{
		UserID: c.UserID, AgentID: c.AgentID, SessionID: c.SessionID, Scope: c.Scope,
		Type: c.Type, Category: c.Category, Key: c.Key, Content: c.Content,
		Importance: c.Importance, Confidence: c.Confidence, Status: status,
		ValidFrom: c.ValidFrom, ExpireAt: c.ExpireAt,
		Source: c.Source, Extractor: c.Extractor, ExtractorVersion: c.ExtractorVersion, Model: c.Model,
		Metadata:      c.Metadata,
		SourceTurnIDs: c.SourceTurnIDs, SourceMemoryIDs: c.SourceMemoryIDs,
		Embeddings:  []memory.Embedding{{Model: r.emb.Model(), Vector: vec}},
		CandidateID: c.ID, Actor: r.cfg.Actor, Module: module, Reason: reason,
	}
}
