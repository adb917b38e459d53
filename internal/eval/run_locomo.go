package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// LoCoMoOptions configure RunLoCoMo.
type LoCoMoOptions struct {
	// Conversations selects conversations by id ("conv-26"); empty runs all.
	Conversations []string
	// Ks are the cut-offs of recall@k (default 5, 10, 20); the search asks for the
	// largest (and at least 10, for NDCG@10).
	Ks []int
	// Layers searched (default memories and turns).
	Layers []string
	// BudgetTokens of the context call (0: engram's default).
	BudgetTokens int
	Tokens       TokenCounter // nil: a rough estimate
	Progress     io.Writer    // progress bars; nil: quiet
	// Answer, when set, also answers every category 1-4 question from engram's
	// context and grades it with an LLM judge (Mem0's "J").
	Answer *AnswerOptions
	// Details keeps one record per question in the report. Leave it off for
	// held-out conversations: nobody should read their per-question failures.
	Details bool
	// Explain keeps up to this many missed observations, and as many memories that
	// match no observation, per conversation in the report (0: none). Like Details,
	// not for held-out conversations.
	Explain int
}

// RecallStats is evidence recall at one k.
type RecallStats struct {
	Overall    float64         `json:"overall"` // mean over questions, not over categories
	ByCategory map[int]float64 `json:"by_category"`
}

// RetrievalScores are the retrieval metrics of one search mode.
type RetrievalScores struct {
	RecallAt       map[int]RecallStats `json:"recall_at"`
	NDCGAt10       float64             `json:"ndcg_at_10"`
	NDCGByCategory map[int]float64     `json:"ndcg_at_10_by_category"`
}

// LoCoMoBaselines are the same metrics for single-mode retrieval over the same
// stored data, for the memories layer alone, and for Okapi BM25 over the raw
// turns computed in-process without engram.
type LoCoMoBaselines struct {
	Keyword RetrievalScores `json:"keyword"`
	Vector  RetrievalScores `json:"vector"`
	// MemoriesOnly is hybrid search with layers = memories only: what extraction
	// alone finds.
	MemoriesOnly RetrievalScores `json:"memories_only"`
	// BM25Turns is Okapi BM25 (k1 = 1.2, b = 0.75) over each conversation's
	// turns with their image captions, the question as the query.
	BM25Turns RetrievalScores `json:"bm25_turns"`
}

// Category5Report is retrieval on the adversarial questions, kept out of the
// headline as every published LoCoMo result does.
type Category5Report struct {
	Questions int `json:"questions"`
	RetrievalScores
}

// LoCoMoReport is the outcome of a LoCoMo run. Retrieval metrics cover the
// category 1-4 questions whose evidence resolves to turns.
type LoCoMoReport struct {
	Conversations       []string        `json:"conversations"`
	Ks                  []int           `json:"ks"`
	Layers              []string        `json:"layers"`
	Questions           int             `json:"questions"`
	QuestionsByCategory map[int]int     `json:"questions_by_category"`
	NoEvidence          int             `json:"questions_without_evidence"` // categories 1-4, not in recall
	RetrievalScores                     // hybrid: recall_at, ndcg_at_10
	Baselines           LoCoMoBaselines `json:"baselines"`
	// HybridOverBM25 is hybrid recall@k / bm25-turns recall@k at each k.
	HybridOverBM25   map[int]float64 `json:"hybrid_over_bm25_turns"`
	BM25Tokenisation string          `json:"bm25_tokenisation"`
	// Observations measure extraction against LoCoMo's annotated facts; nil when
	// the system cannot list a tenant's memories.
	Observations *ObservationReport `json:"observations,omitempty"`
	// Context tokens are engram's context block for the question; full context
	// tokens are the whole conversation, what a model without memory would read.
	// Both are means over the category 1-4 questions.
	ContextTokensMean     float64                `json:"context_tokens_mean"`
	FullContextTokensMean float64                `json:"full_context_tokens_mean"`
	ContextBudget         int                    `json:"context_budget"` // 0: engram's default
	Turns                 int                    `json:"turns"`
	LLMCalls              int                    `json:"llm_calls"`
	LLMCallsPerTurn       float64                `json:"llm_calls_per_turn"`
	Category5             Category5Report        `json:"category5"`
	Answer                *AnswerReport          `json:"answer,omitempty"`
	Estimator             string                 `json:"tokens_estimator"`
	Details               []LoCoMoQuestionResult `json:"details,omitempty"`
}

// LoCoMoQuestionResult is one question's record (with LoCoMoOptions.Details).
type LoCoMoQuestionResult struct {
	Conversation  string          `json:"conversation"`
	Index         int             `json:"index"` // 0-based index in the conversation's qa list
	Category      int             `json:"category"`
	Question      string          `json:"question"`
	Evidence      []string        `json:"evidence"`
	RecallAt      map[int]float64 `json:"recall_at,omitempty"`
	NDCGAt10      float64         `json:"ndcg_at_10"`
	ContextTokens int             `json:"context_tokens,omitempty"`
	Answer        string          `json:"answer,omitempty"`
	Gold          string          `json:"gold,omitempty"`
	Label         string          `json:"label,omitempty"`
}

// retrievalAcc sums per-question retrieval metrics by category.
type retrievalAcc struct {
	ks     []int
	recall map[int]map[int]float64 // k → category → sum
	ndcg   map[int]float64         // category → sum
	n      map[int]int             // category → questions
}

func newRetrievalAcc(ks []int) *retrievalAcc {
	a := &retrievalAcc{ks: ks, recall: map[int]map[int]float64{}, ndcg: map[int]float64{}, n: map[int]int{}}
	for _, k := range ks {
		a.recall[k] = map[int]float64{}
	}
	return a
}

// add scores one ranking and returns its recall per k and its NDCG@10.
func (a *retrievalAcc) add(cat int, ranked [][]string, evidence []string) (map[int]float64, float64) {
	rec := make(map[int]float64, len(a.ks))
	for _, k := range a.ks {
		r := evidenceRecall(ranked, evidence, k)
		rec[k] = r
		a.recall[k][cat] += r
	}
	nd := ndcg(ranked, evidence, 10)
	a.ndcg[cat] += nd
	a.n[cat]++
	return rec, nd
}

func (a *retrievalAcc) scores() RetrievalScores {
	total := 0
	for _, n := range a.n {
		total += n
	}
	s := RetrievalScores{RecallAt: map[int]RecallStats{}, NDCGByCategory: map[int]float64{}}
	for _, k := range a.ks {
		st := RecallStats{ByCategory: map[int]float64{}}
		var sum float64
		for cat, v := range a.recall[k] {
			st.ByCategory[cat] = v / float64(a.n[cat])
			sum += v
		}
		if total > 0 {
			st.Overall = sum / float64(total)
		}
		s.RecallAt[k] = st
	}
	var sum float64
	for cat, v := range a.ndcg {
		s.NDCGByCategory[cat] = v / float64(a.n[cat])
		sum += v
	}
	if total > 0 {
		s.NDCGAt10 = sum / float64(total)
	}
	return s
}

// RunLoCoMo ingests each selected conversation into its own fresh tenant with the
// sessions' real dates, then, for every question, searches (hybrid, keyword-only
// and vector-only over the same stored data), assembles a context and, with
// opts.Answer, answers and grades. Errors of the system stop the run: a partial
// LoCoMo score would not be comparable.
func RunLoCoMo(ctx context.Context, sys System, convs []Conversation, opts LoCoMoOptions) (LoCoMoReport, error) {
	tokens, estimator := counter(opts.Tokens)
	ks := slices.Clone(opts.Ks)
	if len(ks) == 0 {
		ks = []int{5, 10, 20}
	}
	sort.Ints(ks)
	ks = slices.Compact(ks)
	if ks[0] <= 0 {
		return LoCoMoReport{}, fmt.Errorf("LoCoMo: recall cut-offs must be positive, got %v", opts.Ks)
	}
	topK := max(ks[len(ks)-1], 10)
	layers := opts.Layers
	if len(layers) == 0 {
		layers = []string{LayerMemories, LayerTurns}
	}
	selected, err := selectConversations(convs, opts.Conversations)
	if err != nil {
		return LoCoMoReport{}, err
	}

	rep := LoCoMoReport{Ks: ks, Layers: layers, QuestionsByCategory: map[int]int{}, ContextBudget: opts.BudgetTokens,
		Estimator: estimator, Conversations: []string{}}
	hybrid, keyword, vector, cat5 := newRetrievalAcc(ks), newRetrievalAcc(ks), newRetrievalAcc(ks), newRetrievalAcc(ks)
	memOnly, bm25 := newRetrievalAcc(ks), newRetrievalAcc(ks)
	obs := newObservationAcc(opts.Explain)
	listed := 0
	var ans *answerAcc
	if opts.Answer != nil {
		if opts.Answer.Chat == nil {
			return rep, errors.New("LoCoMo: answer options need a Chat completer")
		}
		ans = newAnswerAcc(*opts.Answer)
	}
	var ctxTokens, fullTokens, ctxQuestions int

	for _, conv := range selected {
		rep.Conversations = append(rep.Conversations, conv.ID)
		r := &convRun{conv: conv, opts: opts, layers: layers, topK: topK, tokens: tokens}
		index := newTurnsBM25(conv)
		err := r.run(ctx, sys, func(tn Tenant) error {
			if l, ok := tn.(MemoryLister); ok {
				mems, err := l.Memories(ctx, conv.ID)
				if err != nil {
					return fmt.Errorf("listing memories: %w", err)
				}
				obs.add(conv, mems)
				listed++
			}
			full := tokens(conv.fullText())
			bar := newProgress(opts.Progress, fmt.Sprintf("questions %s", conv.ID), len(conv.QA))
			for i, q := range conv.QA {
				if err := ctx.Err(); err != nil {
					return err
				}
				d := LoCoMoQuestionResult{Conversation: conv.ID, Index: i, Category: q.Category, Question: q.Question,
					Evidence: q.Evidence, Gold: q.Answer}
				scored := q.Category >= 1 && q.Category <= 4
				evidence := make([]string, len(q.Evidence))
				for j, e := range q.Evidence {
					evidence[j] = locomoTurnID(conv.ID, e)
				}
				if len(evidence) > 0 {
					items, err := r.search(ctx, tn, q.Question, modeHybrid)
					if err != nil {
						return err
					}
					acc := hybrid
					if !scored {
						acc = cat5
					}
					d.RecallAt, d.NDCGAt10 = acc.add(q.Category, items, evidence)
					if scored {
						rep.Questions++
						rep.QuestionsByCategory[q.Category]++
						for _, b := range []struct {
							mode string
							acc  *retrievalAcc
						}{{modeKeyword, keyword}, {modeVector, vector}} {
							items, err := r.search(ctx, tn, q.Question, b.mode)
							if err != nil {
								return err
							}
							b.acc.add(q.Category, items, evidence)
						}
						items, err := r.searchIn(ctx, tn, q.Question, modeHybrid, []string{LayerMemories})
						if err != nil {
							return err
						}
						memOnly.add(q.Category, items, evidence)
						bm25.add(q.Category, bm25Ranking(index, q.Question, topK), evidence)
					}
				} else if scored {
					rep.NoEvidence++
				}
				if scored {
					res, err := tn.Context(ctx, ContextQuery{UserID: conv.ID, Query: q.Question, BudgetTokens: opts.BudgetTokens})
					if err != nil {
						return fmt.Errorf("context for question %d: %w", i, err)
					}
					n := res.Tokens
					if n == 0 && res.Text != "" {
						n = tokens(res.Text)
					}
					d.ContextTokens = n
					ctxTokens += n
					fullTokens += full
					ctxQuestions++
					if ans != nil {
						d.Answer, d.Label, err = ans.grade(ctx, q, res.Text)
						if err != nil {
							return err
						}
					}
				}
				if opts.Details {
					rep.Details = append(rep.Details, d)
				}
				bar.set(i + 1)
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("LoCoMo %s: %w", conv.ID, err)
		}
		rep.Turns += r.turns
		rep.LLMCalls += r.llmCalls
	}
	rep.RetrievalScores = hybrid.scores()
	rep.Baselines.Keyword = keyword.scores()
	rep.Baselines.Vector = vector.scores()
	rep.Baselines.MemoriesOnly = memOnly.scores()
	rep.Baselines.BM25Turns = bm25.scores()
	rep.BM25Tokenisation = bm25Tokenisation
	rep.HybridOverBM25 = map[int]float64{}
	for _, k := range ks {
		if b := rep.Baselines.BM25Turns.RecallAt[k].Overall; b > 0 {
			rep.HybridOverBM25[k] = rep.RecallAt[k].Overall / b
		}
	}
	if listed > 0 && listed == len(selected) {
		rep.Observations = obs.report()
	}
	rep.Category5.RetrievalScores = cat5.scores()
	for _, n := range cat5.n {
		rep.Category5.Questions += n
	}
	rep.ContextTokensMean = mean(ctxTokens, ctxQuestions)
	rep.FullContextTokensMean = mean(fullTokens, ctxQuestions)
	rep.LLMCallsPerTurn = rate(rep.LLMCalls, rep.Turns)
	if ans != nil {
		a := ans.report()
		rep.Answer = &a
	}
	return rep, nil
}

func selectConversations(convs []Conversation, ids []string) ([]Conversation, error) {
	if len(ids) == 0 {
		return convs, nil
	}
	byID := map[string]Conversation{}
	for _, c := range convs {
		byID[c.ID] = c
	}
	out := make([]Conversation, 0, len(ids))
	for _, id := range ids {
		c, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("LoCoMo: no conversation %q in the file", id)
		}
		out = append(out, c)
	}
	return out, nil
}

// convRun ingests one conversation and hands its tenant to the question loop.
type convRun struct {
	conv     Conversation
	opts     LoCoMoOptions
	layers   []string
	topK     int
	tokens   TokenCounter
	turns    int
	llmCalls int
}

func (r *convRun) run(ctx context.Context, sys System, questions func(Tenant) error) (err error) {
	tn, err := sys.NewTenant(ctx, "locomo-"+r.conv.ID)
	if err != nil {
		return fmt.Errorf("creating a tenant: %w", err)
	}
	defer func() {
		if cerr := tn.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("closing the tenant: %w", cerr)
		}
	}()
	sessions := r.conv.turns()
	total := r.conv.turnCount()
	bar := newProgress(r.opts.Progress, fmt.Sprintf("ingesting %s", r.conv.ID), total)
	done := 0
	for i, s := range sessions {
		if err := tn.AddTurns(ctx, s); err != nil {
			return fmt.Errorf("adding session %d: %w", r.conv.Sessions[i].Number, err)
		}
		// Sessions are days apart: each is processed before the next arrives.
		if err := tn.Drain(ctx); err != nil {
			return fmt.Errorf("draining the pipeline after session %d: %w", r.conv.Sessions[i].Number, err)
		}
		done += len(s)
		bar.set(done)
	}
	r.turns = total
	if r.llmCalls, err = tn.LLMCalls(ctx); err != nil {
		return fmt.Errorf("counting LLM calls: %w", err)
	}
	return questions(tn)
}

func (r *convRun) search(ctx context.Context, tn Tenant, question, mode string) ([][]string, error) {
	return r.searchIn(ctx, tn, question, mode, r.layers)
}

func (r *convRun) searchIn(ctx context.Context, tn Tenant, question, mode string, layers []string) ([][]string, error) {
	res, err := tn.Search(ctx, SearchQuery{UserID: r.conv.ID, Query: question, TopK: r.topK, Layers: layers, Mode: mode})
	if err != nil {
		return nil, fmt.Errorf("%s search (%s) for %q: %w", mode, strings.Join(layers, "+"), clip(question, 60), err)
	}
	return rankedTurnIDs(res.Items), nil
}

// WriteTable prints the report for people.
func (r LoCoMoReport) WriteTable(w io.Writer) error {
	tw := newTable(w)
	tw.printf("LoCoMo %s: %d questions (categories 1-4 with evidence; %d without evidence left out), layers %s\n\n",
		strings.Join(r.Conversations, ", "), r.Questions, r.NoEvidence, strings.Join(r.Layers, "+"))
	cats := []int{1, 2, 3, 4}
	names := map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
	tw.printf("evidence recall\toverall")
	for _, c := range cats {
		tw.printf("\t%d %s (n=%d)", c, names[c], r.QuestionsByCategory[c])
	}
	tw.printf("\n")
	row := func(label string, s RetrievalScores) {
		for _, k := range r.Ks {
			st := s.RecallAt[k]
			tw.printf("%s @%d\t%s", label, k, pct(st.Overall))
			for _, c := range cats {
				if v, ok := st.ByCategory[c]; ok {
					tw.printf("\t%s", pct(v))
				} else {
					tw.printf("\t-")
				}
			}
			tw.printf("\n")
		}
		tw.printf("%s NDCG@10\t%.3f", label, s.NDCGAt10)
		for _, c := range cats {
			if v, ok := s.NDCGByCategory[c]; ok {
				tw.printf("\t%.3f", v)
			} else {
				tw.printf("\t-")
			}
		}
		tw.printf("\n")
	}
	row("hybrid", r.RetrievalScores)
	row("keyword", r.Baselines.Keyword)
	row("vector", r.Baselines.Vector)
	row("memories-only", r.Baselines.MemoriesOnly)
	row("bm25-turns", r.Baselines.BM25Turns)
	tw.printf("hybrid / bm25-turns")
	for _, k := range r.Ks {
		if v, ok := r.HybridOverBM25[k]; ok {
			tw.printf("\t@%d %.3f", k, v)
		} else {
			tw.printf("\t@%d -", k)
		}
	}
	tw.printf("\n")
	tw.printf("bm25-turns: Okapi BM25 k1=%.1f b=%.2f in-process over the raw turns; tokens: %s\n", bm25k1, bm25b, r.BM25Tokenisation)
	tw.printf("\ncategory 5 (adversarial, separate): %d questions", r.Category5.Questions)
	for _, k := range r.Ks {
		tw.printf(", recall@%d %s", k, pct(r.Category5.RecallAt[k].Overall))
	}
	tw.printf("\n\ncontext tokens per question (mean)\t%.0f\n", r.ContextTokensMean)
	tw.printf("full conversation tokens (mean)\t%.0f\n", r.FullContextTokensMean)
	if r.FullContextTokensMean > 0 {
		tw.printf("context / full\t%s\n", pct(r.ContextTokensMean/r.FullContextTokensMean))
	}
	tw.printf("LLM calls per ingested turn\t%.3f (%d calls, %d turns)\n", r.LLMCallsPerTurn, r.LLMCalls, r.Turns)
	tw.printf("tokens counted by\t%s\n", r.Estimator)
	if r.Observations != nil {
		writeObservations(tw, r.Observations)
	}
	if a := r.Answer; a != nil {
		tw.printf("\nanswer accuracy (LLM judge J; answer model %s, judge %s)\n", or(a.AnswerModel, "?"), or(a.JudgeModel, "?"))
		tw.printf("J overall\t%s (%d/%d)\n", pct(a.J), a.Correct, a.Questions)
		for _, c := range cats {
			if v, ok := a.JByCategory[c]; ok {
				tw.printf("J %d %s\t%s\n", c, names[c], pct(v))
			}
		}
		tw.printf("mean answer length\t%.1f words\n", a.MeanAnswerWords)
		if a.Errors > 0 {
			tw.printf("answer or judge errors (counted wrong)\t%d\n", a.Errors)
		}
	}
	return tw.flush()
}
