package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// BM25 collection statistics of one owner, read apart from the search so a caller can
// cache them: they move slowly (one row in N per write), while counting them costs a
// pass over the owner's rows, the one part of a keyword search that would otherwise
// grow with the owner.

// OwnerTextStats counts the memories of a search's owner (scope global: the tenant's
// global memories; agent: agentID's agent memories; otherwise userID's) with one of
// statuses, unexpired at now, that hold at least one lexeme, and their mean length:
// the collection an unfiltered search of the owner ranks.
func (t *Tx) OwnerTextStats(ctx context.Context, scope Scope, userID, agentID string, statuses []string, now time.Time) (TextStats, error) {
	owner := "m.user_id = $2"
	switch scope {
	case ScopeAgent:
		owner, userID = "m.scope = 'agent' AND m.agent_id = $2", agentID
	case ScopeGlobal:
		owner, userID = "m.user_id = $2 AND m.scope = 'global'", ""
	}
	var s TextStats
	err := t.tx.QueryRow(ctx, `SELECT count(*)::float8, coalesce(avg(m.tsv_len), 0)::float8 FROM memories m
		WHERE m.tenant = $1 AND `+owner+` AND m.status = ANY($3::text[]) AND m.tsv_len > 0
		  AND (m.expire_at IS NULL OR m.expire_at > $4)`,
		t.tenant, userID, statuses, now).Scan(&s.N, &s.AvgLen)
	if err != nil {
		return s, fmt.Errorf("counting the text statistics of the owner's memories: %w", err)
	}
	return s, nil
}

// TurnTextStats counts a user's stored turns that hold at least one lexeme, and their
// mean length: one index-only range of turns_user_time, which carries the length.
func (t *Tx) TurnTextStats(ctx context.Context, userID string) (TextStats, error) {
	var s TextStats
	err := t.tx.QueryRow(ctx, `SELECT count(*)::float8, coalesce(avg(t.tsv_len), 0)::float8
		FROM turns t WHERE t.tenant = $1 AND t.user_id = $2 AND t.tsv_len > 0`, t.tenant, userID).Scan(&s.N, &s.AvgLen)
	if err != nil {
		return s, fmt.Errorf("counting the text statistics of %s's turns: %w", userID, err)
	}
	return s, nil
}

// Stored statistics (migration 0013). The retriever keeps each searched owner's
// statistics in owner_text_stats, with the owner's frequent terms, and refreshes the
// row in the background; a search reads the row (one primary-key lookup) instead of
// counting, and knows the owner's frequent terms from its first query on.

// Layers of stored statistics.
const (
	StatsMemories = "memories"
	StatsTurns    = "turns"
)

// StatsKey names one owner's stored statistics: the memories of a scope's owner
// (Scope user with the user id, agent with the agent id, global with ""), counted
// over its active memories, or a user's turns (Layer StatsTurns, Scope user).
type StatsKey struct {
	Layer   string
	Scope   Scope
	Subject string
}

// StoredTextStats is a stored row: the statistics and when each part was counted.
type StoredTextStats struct {
	Stats     TextStats // Frequent holds the stored frequent terms
	CountedAt time.Time // N and AvgLen
	TermsAt   time.Time // Frequent
}

func (k StatsKey) valid() error {
	switch {
	case k.Layer != StatsMemories && k.Layer != StatsTurns:
		return fmt.Errorf("%w: statistics layer %q", ErrInvalid, k.Layer)
	case k.Scope != ScopeUser && k.Scope != ScopeAgent && k.Scope != ScopeGlobal:
		return fmt.Errorf("%w: statistics scope %q", ErrInvalid, k.Scope)
	case k.Layer == StatsTurns && k.Scope != ScopeUser:
		return fmt.Errorf("%w: turn statistics are a user's", ErrInvalid)
	case (k.Scope == ScopeGlobal) != (k.Subject == ""):
		return fmt.Errorf("%w: statistics of scope %s with subject %q", ErrInvalid, k.Scope, k.Subject)
	}
	return nil
}

// ReadTextStats reads the stored statistics of k; false when there are none.
func (t *Tx) ReadTextStats(ctx context.Context, k StatsKey) (StoredTextStats, bool, error) {
	if err := k.valid(); err != nil {
		return StoredTextStats{}, false, err
	}
	var s StoredTextStats
	var freq frequentColumns
	err := t.tx.QueryRow(ctx, `SELECT docs, avg_len, counted_at, terms, dfs, terms_at FROM owner_text_stats
		WHERE tenant = $1 AND layer = $2 AND scope = $3 AND subject = $4`, t.tenant, k.Layer, string(k.Scope), k.Subject).
		Scan(&s.Stats.N, &s.Stats.AvgLen, &s.CountedAt, &freq.terms, &freq.dfs, &s.TermsAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return StoredTextStats{}, false, nil
	}
	if err != nil {
		return StoredTextStats{}, false, fmt.Errorf("reading the stored text statistics of %s %s %q: %w", k.Layer, k.Scope, k.Subject, err)
	}
	s.Stats.Frequent = freq.list()
	return s, true, nil
}

// MaxStoredFrequentTerms bounds the frequent terms stored for one owner (the most
// frequent first). A large owner's terms are frequent from 1 % of its rows, at most
// 1,000 (FrequentMinDF): a synthetic owner of 51,000 turns had 213 of them, one of
// 1,000,000 memories 1,064. Beyond the bound they are counted as rare terms by the
// searches that hold them, each read in full: with the bound at 1,024, a query holding
// one of the 40 left out (1,000–1,050 rows each) read 2,701 rows in its rare pass
// instead of about 1,800, 26.5 against 17.7 ms. A search looks each of its lexemes up
// in the list (bm25Spec), 0.2 ms for 2,064 terms.
const MaxStoredFrequentTerms = 2048

// statsRows selects tsv and tsv_len of the rows k's statistics are counted over.
func statsRows(k StatsKey) string {
	if k.Layer == StatsTurns {
		return `SELECT t.tsv, t.tsv_len FROM turns t WHERE t.tenant = $1 AND t.user_id = $4 AND t.tsv_len > 0`
	}
	owner := "m.user_id = $4"
	switch k.Scope {
	case ScopeAgent:
		owner = "m.scope = 'agent' AND m.agent_id = $4"
	case ScopeGlobal:
		owner = "m.user_id = $4 AND m.scope = 'global'"
	}
	return `SELECT m.tsv, m.tsv_len FROM memories m WHERE m.tenant = $1 AND ` + owner + `
		AND m.status = 'active' AND m.tsv_len > 0 AND (m.expire_at IS NULL OR m.expire_at > $5)`
}

// RefreshTextStats counts k's statistics at now and stores them: the document count
// and mean length, and with terms also the frequent terms (held by at least
// FrequentTermMinDF rows and FrequentMinDF of them, the MaxStoredFrequentTerms
// most frequent). Without terms the stored frequent terms stay as they were. An
// owner without a row to count has its stored statistics removed (an erased user
// gets none back from a refresh that raced the erasure). It returns what it stored.
func (t *Tx) RefreshTextStats(ctx context.Context, k StatsKey, now time.Time, terms bool) (TextStats, error) {
	if err := k.valid(); err != nil {
		return TextStats{}, err
	}
	args := []any{t.tenant, k.Layer, string(k.Scope), k.Subject, now}
	with := `WITH r AS MATERIALIZED (` + statsRows(k) + `),
			s AS (SELECT count(*)::float8 AS n, coalesce(avg(r.tsv_len), 0)::float8 AS avgdl FROM r)`
	// Without terms a new row gets none (counted at the epoch, so the next refresh
	// counts them) and an existing row keeps its own.
	termVals, termSet := `'{}', '{}', 'epoch'`, ""
	if terms {
		args = append(args, FrequentTermMinDF, MaxStoredFrequentTerms)
		// tsvector_to_array lists a row's distinct lexemes: one count per row holding it.
		with += `,
			d AS (SELECT u.lexeme, count(*)::float8 AS df FROM r, unnest(tsvector_to_array(r.tsv)) u(lexeme) GROUP BY u.lexeme),
			f AS (SELECT d.lexeme, d.df FROM d, s WHERE d.df >= $6 AND d.df >= ` + frequentMinDFSQL("s.n") + `
				ORDER BY d.df DESC, d.lexeme LIMIT $7)`
		termVals = `coalesce((SELECT array_agg(lexeme ORDER BY lexeme) FROM f), '{}'),
				coalesce((SELECT array_agg(df ORDER BY lexeme) FROM f), '{}'), $5`
		termSet = ", terms = excluded.terms, dfs = excluded.dfs, terms_at = excluded.terms_at"
	}
	sql := with + `
			INSERT INTO owner_text_stats AS o (tenant, layer, scope, subject, docs, avg_len, counted_at, terms, dfs, terms_at)
			SELECT $1, $2, $3, $4, s.n, s.avgdl, $5, ` + termVals + `
			FROM s WHERE s.n > 0
			ON CONFLICT (tenant, layer, scope, subject) DO UPDATE SET docs = excluded.docs, avg_len = excluded.avg_len,
				counted_at = excluded.counted_at` + termSet + `
			RETURNING o.docs, o.avg_len, o.terms, o.dfs`
	var s TextStats
	var freq frequentColumns
	err := t.tx.QueryRow(ctx, sql, args...).Scan(&s.N, &s.AvgLen, &freq.terms, &freq.dfs)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := t.tx.Exec(ctx, `DELETE FROM owner_text_stats WHERE tenant = $1 AND layer = $2 AND scope = $3 AND subject = $4`,
			t.tenant, k.Layer, string(k.Scope), k.Subject); err != nil {
			return TextStats{}, fmt.Errorf("removing the stored text statistics of %s %s %q: %w", k.Layer, k.Scope, k.Subject, err)
		}
		return TextStats{}, nil
	}
	if err != nil {
		return TextStats{}, fmt.Errorf("counting the text statistics of %s %s %q: %w", k.Layer, k.Scope, k.Subject, err)
	}
	s.Frequent = freq.list()
	return s, nil
}

// DeleteTextStats removes a user's stored statistics (memories and turns, or with
// turnsToo false the memories' only): what was counted over rows that are gone.
func (t *Tx) DeleteTextStats(ctx context.Context, userID string, turnsToo bool) error {
	layers := []string{StatsMemories}
	if turnsToo {
		layers = append(layers, StatsTurns)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM owner_text_stats WHERE tenant = $1 AND scope = 'user' AND subject = $2
		AND layer = ANY($3)`, t.tenant, userID, layers); err != nil {
		return fmt.Errorf("removing the stored text statistics of user %s: %w", userID, err)
	}
	return nil
}

// ClearTextStats removes every stored statistics row of the transaction's tenant (a
// benchmark measuring owners' first searches).
func (t *Tx) ClearTextStats(ctx context.Context) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM owner_text_stats WHERE tenant = $1`, t.tenant); err != nil {
		return fmt.Errorf("removing the stored text statistics of tenant %s: %w", t.tenant, err)
	}
	return nil
}
