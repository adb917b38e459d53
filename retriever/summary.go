package retriever

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/engramhq/engram/memory"
)

type sessionKey struct{ tenant, userID, sessionID string }

// requestSummary queues a session for RunSummarizer; it never blocks (a full queue
// means the next context call asks again).
func (r *Retriever) requestSummary(k sessionKey) {
	select {
	case r.summaries <- k:
	default:
	}
}

// RunSummarizer refreshes rolling session summaries until ctx ends. Context calls
// queue a session when it has passed Config.SummaryMinTurns turns and gained
// Config.SummaryEvery turns since its summary; the work happens here, never on the
// request path. Workers that store turns may call SummarizeSession directly instead.
func (r *Retriever) RunSummarizer(ctx context.Context) {
	recent := map[sessionKey]time.Time{} // local: skips sessions refreshed a moment ago
	for {
		select {
		case <-ctx.Done():
			return
		case k := <-r.summaries:
			if t, ok := recent[k]; ok && time.Since(t) < 10*time.Second {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if err := r.SummarizeSession(sctx, k.tenant, k.userID, k.sessionID); err != nil && ctx.Err() == nil {
				r.logger.WarnContext(ctx, "refreshing a session summary failed", "tenant", k.tenant,
					"session_id", k.sessionID, "error", err)
			}
			cancel()
			recent[k] = time.Now()
			if len(recent) > 10000 {
				clear(recent)
			}
		}
	}
}

// SummarizeSession rewrites the rolling summary of a session: an extractive summary
// of the user's turns older than the context window (the window itself is shown
// verbatim), keeping the most informative sentences in their original order.
func (r *Retriever) SummarizeSession(ctx context.Context, tenant, userID, sessionID string) error {
	return r.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		total, last, err := tx.SessionTurnStats(ctx, userID, sessionID)
		if err != nil {
			return err
		}
		if total == 0 {
			return nil
		}
		texts, err := tx.SessionUserTexts(ctx, userID, sessionID, r.cfg.WindowTurns)
		if err != nil {
			return err
		}
		summary := ExtractiveSummary(texts, r.cfg.SummaryMaxSentences)
		if summary == "" {
			return nil
		}
		return tx.PutSessionSummary(ctx, memory.SessionSummary{UserID: userID, SessionID: sessionID,
			Summary: summary, TurnCount: total, LastTurnAt: last})
	})
}

// ExtractiveSummary picks up to n of the most informative sentences of texts and
// joins them in their original order. A sentence scores by its distinct content
// words (Latin words of 3+ letters outside a stopword list, CJK character bigrams),
// plus a bonus for numbers and identifiers and for first-person statements of
// preference or fact; questions and filler score low.
func ExtractiveSummary(texts []string, n int) string {
	type sent struct {
		text  string
		score float64
		pos   int
	}
	var all []sent
	seen := map[string]bool{}
	for _, t := range texts {
		for _, s := range splitSentences(t) {
			norm := normaliseContent(s)
			if norm == "" || seen[norm] {
				continue
			}
			seen[norm] = true
			all = append(all, sent{text: s, score: informativeness(s), pos: len(all)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	if len(all) > n {
		all = all[:n]
	}
	sort.Slice(all, func(i, j int) bool { return all[i].pos < all[j].pos })
	parts := make([]string, 0, len(all))
	for _, s := range all {
		if s.score <= 0 {
			continue
		}
		parts = append(parts, s.text)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Earlier in this session the user said: " + strings.Join(parts, " … ")
}

func splitSentences(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		s := strings.TrimSpace(b.String())
		b.Reset()
		if s == "" {
			return
		}
		if r := []rune(s); len(r) > 300 {
			s = string(r[:300]) + "…"
		}
		out = append(out, s)
	}
	for _, r := range text {
		switch r {
		case '\n':
			flush()
		case '.', '!', '?', '。', '！', '？', '；', ';':
			b.WriteRune(r)
			flush()
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

// isSummaryStopword reports words too common to make a sentence informative.
func isSummaryStopword(w string) bool {
	switch w {
	case "the", "and", "for", "you", "that", "this", "with", "are", "was", "but", "not", "have", "has", "can", "could", "would", "should", "will", "just", "what", "how", "why", "when", "where", "who", "yes", "yeah", "okay", "thanks", "thank", "please", "sure", "all", "any", "some", "its", "it's", "there", "then", "than", "also", "very", "really", "about", "from", "they", "them", "our", "your":
		return true
	}
	return false
}

// firstPersonMarkers are phrases that introduce a statement about the user.
func firstPersonMarkers() []string {
	return []string{"i prefer", "i like", "i love", "i hate", "i don't", "i do not", "i am", "i'm",
		"i work", "i live", "my ", "i always", "i never", "i need", "i want", "always", "never", "allergic",
		"我喜欢", "我不", "我是", "我在", "我的", "不要", "一定", "总是", "从不", "过敏"}
}

func informativeness(s string) float64 {
	lower := strings.ToLower(s)
	words := map[string]bool{}
	var run []rune
	hasDigit := false
	flushCJK := func() {
		for i := 0; i+1 < len(run); i++ {
			words[string(run[i:i+2])] = true
		}
		run = run[:0]
	}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool {
		if unicode.IsDigit(r) {
			hasDigit = true
		}
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '-')
	}) {
		for _, r := range w {
			if isCJK(r) {
				run = append(run, r)
			} else {
				flushCJK()
			}
		}
		flushCJK()
		if len([]rune(w)) >= 3 && !isSummaryStopword(w) && !containsCJK(w) {
			words[w] = true
		}
	}
	score := float64(len(words))
	if hasDigit {
		score += 2
	}
	for _, m := range firstPersonMarkers() {
		if strings.Contains(lower, m) {
			score += 3
			break
		}
	}
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") {
		score /= 2
	}
	return score
}

func containsCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}
