package consolidator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
)

// Distillation turns recurring episodes into one semantic memory. Per owner, the
// active episodic memories not yet consolidated are clustered by embedding similarity
// (average linkage, within one category; episodes sharing a key always go together).
// A cluster of at least MinCluster becomes one candidate, written by the LLM (the
// general rule or preference behind the episodes) or, offline, by a deterministic
// extractive statement around the cluster's most central episode. The candidate goes
// through the same Resolver as any extracted candidate, so it dedupes, confirms or
// supersedes what the owner already knows. Its sources are then marked consolidated
// and down-weighted — never deleted.

// distillVersion is part of every distilled candidate's id: changing how clusters
// are turned into candidates must change the ids.
const distillVersion = "distill-v1"

// episode is one distillable memory with its vector.
type episode struct {
	id         uuid.UUID
	content    string
	category   memory.Category
	key        string
	importance float64
	validFrom  time.Time
	source     memory.Source
	vec        []float32 // unit length
}

// distil distils one owner's episodes; it returns the counts and the LLM calls made.
func (c *Consolidator) distil(ctx context.Context, o owner, dryRun bool) (Counts, int, error) {
	var cnt Counts
	eps, err := c.loadEpisodes(ctx, o)
	if err != nil {
		return cnt, 0, err
	}
	cnt.Episodes = len(eps)
	if len(eps) < c.cfg.MinCluster {
		return cnt, 0, nil
	}
	calls := 0
	for _, cl := range clusterEpisodes(eps, c.cfg.ClusterSim) {
		if len(cl) < c.cfg.MinCluster {
			continue
		}
		cnt.Clusters++
		if dryRun {
			continue
		}
		members := make([]episode, len(cl))
		for i, ix := range cl {
			members[i] = eps[ix]
		}
		n, err := c.distilCluster(ctx, o, members, &cnt)
		calls += n
		if err != nil {
			return cnt, calls, err
		}
	}
	return cnt, calls, nil
}

// loadEpisodes reads the owner's distillable episodes (the newest MaxEpisodes, in
// time order) with their vectors under the embedder's model, embedding those that
// have none. Newest, because episodes that never join a cluster stay unconsolidated:
// an old backlog must not hide what recurs now (archiving retires it after
// ArchiveAfter).
func (c *Consolidator) loadEpisodes(ctx context.Context, o owner) ([]episode, error) {
	var eps []episode
	err := c.store.InTx(ctx, o.Tenant, func(tx *memory.Tx) error {
		rs, err := tx.EpisodesToDistil(ctx, o.UserID, c.emb.Model(), c.cfg.MaxEpisodes)
		if err != nil {
			return fmt.Errorf("reading episodes of %s: %w", o, err)
		}
		eps = make([]episode, len(rs))
		for i, e := range rs {
			eps[i] = episode{id: e.ID, content: e.Content, category: e.Category, key: e.Key,
				importance: e.Importance, validFrom: e.ValidFrom, source: e.Source, vec: e.Vector}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(eps) // the newest MaxEpisodes, clustered in the order they happened
	var missing []int
	for i := range eps {
		if len(eps[i].vec) == 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		texts := make([]string, len(missing))
		for j, i := range missing {
			texts[j] = eps[i].content
		}
		vs, err := c.emb.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embedding %d episodes of %s: %w", len(texts), o, err)
		}
		if len(vs) != len(texts) {
			return nil, fmt.Errorf("embedding episodes of %s: got %d vectors for %d texts", o, len(vs), len(texts))
		}
		for j, i := range missing {
			eps[i].vec = vs[j]
		}
	}
	for i := range eps {
		eps[i].vec = unit(eps[i].vec)
	}
	return eps, nil
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// cluster is a set of episode indexes with the sum of their unit vectors: the average
// cosine of a vector to the members is dot(v, sum)/n, and between two clusters
// dot(sumA, sumB)/(nA·nB), so average linkage costs one dot product per comparison.
type cluster struct {
	members  []int
	sum      []float32
	category memory.Category
}

func (cl *cluster) add(i int, v []float32) {
	cl.members = append(cl.members, i)
	for k := range v {
		cl.sum[k] += v[k]
	}
}

func (cl *cluster) absorb(o *cluster) {
	cl.members = append(cl.members, o.members...)
	for k := range o.sum {
		cl.sum[k] += o.sum[k]
	}
}

// clusterEpisodes groups episodes (vectors of unit length) by average-linkage cosine
// of at least threshold, within one category; episodes sharing a key join the same
// cluster whatever their similarity. A greedy pass in input order assigns each
// episode to its best cluster, then clusters close enough are merged until none are,
// which removes most of the greedy pass's dependence on order. Deterministic for a
// given input order. Clusters come back with members in input order, largest first.
func clusterEpisodes(eps []episode, threshold float64) [][]int {
	if len(eps) == 0 {
		return nil
	}
	dims := len(eps[0].vec)
	var cls []*cluster
	byKey := map[string]*cluster{}
	for i, e := range eps {
		if len(e.vec) != dims {
			continue // a vector of another size cannot be compared; it stays unclustered
		}
		var best *cluster
		if e.key != "" {
			best = byKey[string(e.category)+"\x00"+e.key]
		}
		if best == nil {
			bestSim := threshold
			for _, cl := range cls {
				if cl.category != e.category {
					continue
				}
				if s := dot(e.vec, cl.sum) / float64(len(cl.members)); s >= bestSim {
					best, bestSim = cl, s
				}
			}
		}
		if best == nil {
			best = &cluster{sum: make([]float32, dims), category: e.category}
			cls = append(cls, best)
		}
		best.add(i, e.vec)
		if e.key != "" {
			if _, ok := byKey[string(e.category)+"\x00"+e.key]; !ok {
				byKey[string(e.category)+"\x00"+e.key] = best
			}
		}
	}
	// Merge the closest pair at or above the threshold until none is left. raw[i][j]
	// is dot(sum_i, sum_j); after merging j into i, row i is the sum of both rows,
	// so a merge costs O(clusters) and no vector arithmetic.
	k := len(cls)
	raw := make([][]float64, k)
	for i := range cls {
		raw[i] = make([]float64, k)
		for j := range i {
			if cls[i].category == cls[j].category {
				raw[i][j] = dot(cls[i].sum, cls[j].sum)
				raw[j][i] = raw[i][j]
			}
		}
	}
	alive := make([]bool, k)
	for i := range alive {
		alive[i] = true
	}
	for {
		bi, bj, bestSim := -1, -1, threshold
		for i := range k {
			if !alive[i] {
				continue
			}
			for j := i + 1; j < k; j++ {
				if !alive[j] || cls[i].category != cls[j].category {
					continue
				}
				if s := raw[i][j] / float64(len(cls[i].members)*len(cls[j].members)); s >= bestSim {
					bi, bj, bestSim = i, j, s
				}
			}
		}
		if bi < 0 {
			break
		}
		cls[bi].absorb(cls[bj])
		alive[bj] = false
		for x := range k {
			raw[bi][x] += raw[bj][x]
			raw[x][bi] = raw[bi][x]
		}
	}
	live := cls[:0]
	for i, cl := range cls {
		if alive[i] {
			live = append(live, cl)
		}
	}
	cls = live
	out := make([][]int, len(cls))
	for i, cl := range cls {
		sort.Ints(cl.members)
		out[i] = cl.members
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// distillID is the deterministic candidate id of a cluster: the same sources always
// make the same candidate, which the resolver's ledger applies once.
func distillID(members []episode) string {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.id.String()
	}
	sort.Strings(ids)
	h := sha256.Sum256([]byte(strings.Join(ids, ",") + "|" + distillVersion))
	return distillVersion + ":" + hex.EncodeToString(h[:16])
}

// distilCluster proposes the cluster's candidate to the resolver and marks the sources
// consolidated. It returns the LLM calls made.
func (c *Consolidator) distilCluster(ctx context.Context, o owner, members []episode, cnt *Counts) (int, error) {
	cand, applied, err := c.prepareCandidate(ctx, o, members)
	if err != nil {
		return 0, err
	}
	calls := 0
	if !applied && c.chat != nil {
		// A candidate already in the ledger (a resumed run) is replayed without asking
		// the model again: its recorded decision stands, whatever the content.
		calls = 1
		nothing, err := c.llmDistil(ctx, &cand, members)
		switch {
		case err == nil && nothing:
			cnt.Noop++
			n, err := c.markSources(ctx, o, members, cand.ID, uuid.Nil, "the model found no general statement")
			cnt.Consolidated += n
			return calls, err
		case err == nil:
		case errors.Is(err, llm.ErrPermanent) || errors.Is(err, errBadDistillation):
			// The model cannot answer usefully for this cluster: the extractive statement stands in.
			c.log.Warn("LLM distillation unusable; using the extractive statement", "candidate", cand.ID, "err", err)
			extractive(&cand, members)
		default:
			return calls, fmt.Errorf("distilling candidate %s: %w", cand.ID, err)
		}
	}
	d, err := c.resolver.Resolve(ctx, cand)
	if err != nil {
		return calls, err
	}
	switch {
	case d.Replayed:
		cnt.Replayed++
	case d.Kind == KindAdd:
		cnt.Distilled++
	case d.Kind == KindNoop:
		cnt.Noop++
	default:
		cnt.Merged++
	}
	reason := fmt.Sprintf("distilled into %s (%s)", d.MemoryID, d.Kind)
	if d.MemoryID == uuid.Nil {
		reason = fmt.Sprintf("considered for distillation (%s: %s)", d.Kind, d.Reason)
	}
	n, err := c.markSources(ctx, o, members, cand.ID, d.MemoryID, reason)
	cnt.Consolidated += n
	return calls, err
}

// prepareCandidate builds the cluster's candidate with the extractive statement and
// the union of the sources' turns, and reports whether the ledger has it already.
func (c *Consolidator) prepareCandidate(ctx context.Context, o owner, members []episode) (memory.Candidate, bool, error) {
	cand := c.baseCandidate(o, members)
	var applied bool
	var turnIDs []string
	err := c.store.InTx(ctx, o.Tenant, func(tx *memory.Tx) error {
		var err error
		if applied, err = tx.CandidateApplied(ctx, cand.ID); err != nil {
			return err
		}
		if turnIDs, err = tx.SourceTurns(ctx, memberIDs(members)); err != nil {
			return fmt.Errorf("reading the source turns of a cluster: %w", err)
		}
		return nil
	})
	if err != nil {
		return cand, false, fmt.Errorf("preparing candidate %s: %w", cand.ID, err)
	}
	cand.SourceTurnIDs = turnIDs
	extractive(&cand, members)
	return cand, applied, nil
}

func memberIDs(members []episode) []uuid.UUID {
	ids := make([]uuid.UUID, len(members))
	for i, m := range members {
		ids[i] = m.id
	}
	return ids
}

// markSources marks the sources consolidated and multiplies their importance by
// SourceImportanceFactor, with a version row (change "consolidate") and an audit row
// each (see memory.Tx.MarkConsolidated); a repeat is a no-op.
func (c *Consolidator) markSources(ctx context.Context, o owner, members []episode, candID string, into uuid.UUID, reason string) (int, error) {
	var n int
	err := c.store.InTx(ctx, o.Tenant, func(tx *memory.Tx) error {
		var err error
		n, err = tx.MarkConsolidated(ctx, memory.Consolidation{IDs: memberIDs(members),
			ImportanceFactor: c.cfg.SourceImportanceFactor, CandidateID: candID, Into: into,
			Actor: c.cfg.Actor, Module: module, Reason: reason})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("marking the sources of %s consolidated: %w", candID, err)
	}
	return n, nil
}

// baseCandidate fills what does not depend on how the content is written.
func (c *Consolidator) baseCandidate(o owner, members []episode) memory.Candidate {
	latest := members[0].validFrom
	imp := 0.0
	for _, m := range members {
		if m.validFrom.After(latest) {
			latest = m.validFrom
		}
		imp = math.Max(imp, m.importance)
	}
	return memory.Candidate{
		ID: distillID(members), Tenant: o.Tenant, UserID: o.UserID, Scope: memory.ScopeUser,
		Type: memory.Semantic, Category: clusterCategory(members), Key: commonKey(members),
		Importance: imp,
		// More recurrences, more confidence: 3 → 0.75, 5 → 0.85, capped at 0.95.
		Confidence:      math.Min(0.95, 0.6+0.05*float64(len(members))),
		SourceMemoryIDs: idStrings(members),
		// The pattern holds as of its latest occurrence; a later distillation of the same
		// pattern then never looks stale to the resolver.
		ValidFrom: latest,
		Source:    memory.SourceConsolidation, Trusted: true,
		Extractor: "distill", ExtractorVersion: distillVersion,
		CreatedAt: time.Now().UTC(),
	}
}

func idStrings(members []episode) []string {
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = m.id.String()
	}
	sort.Strings(out)
	return out
}

// clusterCategory is the members' most common category, mapped to a semantic one:
// events become facts, or skills when they came from tools.
func clusterCategory(members []episode) memory.Category {
	count := map[memory.Category]int{}
	tools := 0
	for _, m := range members {
		count[m.category]++
		if m.source == memory.SourceTool {
			tools++
		}
	}
	best, bestN := memory.CatFact, 0
	for _, cat := range memory.Categories() { // fixed order: ties resolve the same way every time
		if count[cat] > bestN {
			best, bestN = cat, count[cat]
		}
	}
	switch best {
	case memory.CatEvent, memory.CatTask, memory.CatOther:
		if tools*2 > len(members) {
			return memory.CatSkill
		}
		return memory.CatFact
	}
	return best
}

// commonKey is the key every member shares, if any.
func commonKey(members []episode) string {
	k := members[0].key
	for _, m := range members[1:] {
		if m.key != k {
			return ""
		}
	}
	return k
}

// central is the index of the member with the highest mean cosine to the others.
func central(members []episode) int {
	best, bestS := 0, math.Inf(-1)
	for i := range members {
		s := 0.0
		for j := range members {
			if i != j {
				s += dot(members[i].vec, members[j].vec)
			}
		}
		if s > bestS+1e-9 {
			best, bestS = i, s
		}
	}
	return best
}

// extractive writes the offline statement: the most central episode with how often
// and over which dates the pattern recurred, in the episode's script.
func extractive(cand *memory.Candidate, members []episode) {
	first, last := members[0].validFrom, members[0].validFrom
	for _, m := range members {
		if m.validFrom.Before(first) {
			first = m.validFrom
		}
		if m.validFrom.After(last) {
			last = m.validFrom
		}
	}
	text := strings.TrimSpace(members[central(members)].content)
	d1, d2 := first.UTC().Format("2006-01-02"), last.UTC().Format("2006-01-02")
	var prefix string
	switch {
	case hasHan(text) && d1 == d2:
		prefix = fmt.Sprintf("反复出现（%d 次，%s）：", len(members), d1)
	case hasHan(text):
		prefix = fmt.Sprintf("反复出现（%d 次，%s 至 %s）：", len(members), d1, d2)
	case d1 == d2:
		prefix = fmt.Sprintf("Recurring (%d times on %s): ", len(members), d1)
	default:
		prefix = fmt.Sprintf("Recurring (%d times between %s and %s): ", len(members), d1, d2)
	}
	if room := 8000 - utf8.RuneCountInString(prefix); utf8.RuneCountInString(text) > room {
		text = string([]rune(text)[:room-1]) + "…"
	}
	cand.Content = prefix + text
	cand.Model = ""
	cand.Metadata = map[string]any{"method": "extractive", "occurrences": len(members),
		"first_seen": first.UTC().Format(time.RFC3339), "last_seen": last.UTC().Format(time.RFC3339)}
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// errBadDistillation marks a model answer that cannot be used.
var errBadDistillation = errors.New("unusable distillation")

const distillSystem = `You consolidate a user's long-term memory. You are given several episodic memories of one user (things that happened, with dates) that resemble each other. Write ONE self-contained, general statement that these episodes support together: a recurring problem, a habit, a preference, a rule or a skill — not a list of the episodes. Write it in the language of the episodes, refer to the user as "the user" (or 用户), and do not add facts the episodes do not support. If the episodes share no general point, return an empty content.
Fields: content (the statement, or "" for none); category (one of preference, fact, constraint, skill, goal, profile, relationship, decision, other); key (a short normalised slot such as "payment.failure_cause" when the statement fills a single-valued slot, else null); importance (0 to 1: how useful it is to remember for future conversations).`

func distillSchema() map[string]any {
	cats := []string{}
	for _, c := range memory.Categories() {
		if c != memory.CatEvent && c != memory.CatTask {
			cats = append(cats, string(c))
		}
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"content":    map[string]any{"type": "string"},
			"category":   map[string]any{"type": "string", "enum": cats},
			"key":        map[string]any{"type": []string{"string", "null"}},
			"importance": map[string]any{"type": "number"},
		},
		"required":             []string{"content", "category", "key", "importance"},
		"additionalProperties": false,
	}
}

type distillEpisode struct {
	Date    string `json:"date"`
	Content string `json:"content"`
}

type distillAnswer struct {
	Content    string   `json:"content"`
	Category   string   `json:"category"`
	Key        *string  `json:"key"`
	Importance *float64 `json:"importance"`
}

// llmDistil asks the model for the cluster's statement and writes it into cand. It
// reports nothing = true when the model says the episodes share no general point.
func (c *Consolidator) llmDistil(ctx context.Context, cand *memory.Candidate, members []episode) (nothing bool, err error) {
	in := make([]distillEpisode, len(members))
	for i, m := range members {
		in[i] = distillEpisode{Date: m.validFrom.UTC().Format("2006-01-02"), Content: m.content}
	}
	body, err := json.Marshal(map[string]any{"episodes": in})
	if err != nil {
		return false, fmt.Errorf("encoding the episodes: %w", err)
	}
	resp, err := c.chat.Complete(ctx, llm.ChatRequest{
		System:   distillSystem,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: string(body)}},
		Schema:   &llm.JSONSchema{Name: "distilled_memory", Schema: distillSchema()},
	})
	if err != nil {
		return false, fmt.Errorf("asking the model: %w", err)
	}
	var a distillAnswer
	if err := json.Unmarshal([]byte(strings.TrimSpace(resp.Content)), &a); err != nil {
		return false, fmt.Errorf("%w: decoding %q: %v", errBadDistillation, clip(resp.Content, 200), err)
	}
	content := strings.TrimSpace(a.Content)
	if content == "" {
		return true, nil
	}
	if utf8.RuneCountInString(content) > 8000 {
		return false, fmt.Errorf("%w: content has %d characters", errBadDistillation, utf8.RuneCountInString(content))
	}
	cand.Content = content
	if cat := memory.Category(a.Category); cat.Valid() && cat != memory.CatEvent && cat != memory.CatTask {
		cand.Category = cat
	}
	if a.Key != nil {
		if k := strings.TrimSpace(*a.Key); k != "" && utf8.RuneCountInString(k) <= 200 {
			cand.Key = k
		}
	}
	if a.Importance != nil && *a.Importance >= 0 && *a.Importance <= 1 {
		cand.Importance = *a.Importance
	}
	cand.Model = resp.Model
	if cand.Model == "" {
		cand.Model = c.chat.Model()
	}
	cand.Metadata["method"] = "llm"
	return false, nil
}
