package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// Bulk loading and the other operations of engram's benchmarks (internal/bench):
// seeding a tenant with many memories at once, clearing it, refreshing the planner's
// statistics and comparing the exact per-owner vector scan with an HNSW index.

// BulkMemory is one memory for CopyMemories: active, user-scoped (or, with Scope
// ScopeGlobal and no UserID, in the tenant's global scope), with one vector.
type BulkMemory struct {
	ID         uuid.UUID
	UserID     string
	Scope      Scope // "": ScopeUser
	Type       Type
	Category   Category
	Key        string // "" for none
	Content    string
	Importance float64
	Confidence float64
	ValidFrom  time.Time
	// RecordedAt is also the memory's updated_at and last_confirmed_at; zero means
	// the transaction's time.
	RecordedAt       time.Time
	Source           Source
	Extractor        string
	ExtractorVersion string
	Embedding        []float32
}

// BulkOptions says what CopyMemories writes besides the memory rows.
type BulkOptions struct {
	// Model and Dims name every memory's Embedding.
	Model string
	Dims  int
	// VersionActor, when set, also writes each memory's version 1 ("add") with that
	// actor; empty writes no history.
	VersionActor string
	// LedgerPrefix, when set, also records each memory in the idempotency ledger as
	// the "add" of candidate LedgerPrefix+id, as a resolved memory is: a steady-state
	// ledger holds a row for every candidate ever applied, and the resolver's lookup
	// in it should cost what it costs there, not a scan of a ledger the run itself
	// is filling.
	LedgerPrefix string
}

// CopyMemories bulk-loads memories and their vectors into the transaction's tenant.
// It bypasses the change path (no audit, no lineage, no owner registry), so it is for
// seeding benchmark tenants only. Row-level security forbids COPY into the tenant
// tables, so the rows are COPYed into a temporary staging table and moved with
// INSERT … SELECT, which the policies check.
func (t *Tx) CopyMemories(ctx context.Context, ms []BulkMemory, opts BulkOptions) error {
	if opts.Model == "" || opts.Dims <= 0 {
		return fmt.Errorf("%w: bulk memories need an embedding model and its dimensions", ErrInvalid)
	}
	rows := make([][]any, len(ms))
	for i, m := range ms {
		var recorded *time.Time
		if !m.RecordedAt.IsZero() {
			recorded = &m.RecordedAt
		}
		scope := m.Scope
		if scope == "" {
			scope = ScopeUser
		}
		rows[i] = []any{m.ID, m.UserID, string(scope), string(m.Type), string(m.Category), nullIfEmpty(m.Key), m.Content,
			SearchText(m.Content), float32(m.Importance), float32(m.Confidence), m.ValidFrom, recorded,
			string(m.Source), m.Extractor, m.ExtractorVersion, pgvector.NewVector(m.Embedding)}
	}
	if _, err := t.tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS engram_bulk_stage (id uuid, user_id text,
		scope text, type text, category text, key text, content text, search_text text, importance real, confidence real,
		valid_from timestamptz, recorded_at timestamptz, source text, extractor text, extractor_version text,
		embedding vector) ON COMMIT DELETE ROWS`); err != nil {
		return fmt.Errorf("creating the staging table: %w", err)
	}
	if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{"engram_bulk_stage"},
		[]string{"id", "user_id", "scope", "type", "category", "key", "content", "search_text", "importance", "confidence",
			"valid_from", "recorded_at", "source", "extractor", "extractor_version", "embedding"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copying %d memories: %w", len(rows), err)
	}
	type step struct {
		what, sql string
		args      []any
	}
	steps := []step{{"memories", `INSERT INTO memories (tenant, id, user_id, scope, type, category, key, content, search_text,
			importance, confidence, status, valid_from, recorded_at, updated_at, last_confirmed_at, source,
			extractor, extractor_version)
			SELECT $1, id, user_id, scope, type, category, key, content, search_text, importance, confidence, 'active',
				valid_from, coalesce(recorded_at, now()), coalesce(recorded_at, now()), coalesce(recorded_at, now()),
				source, extractor, extractor_version FROM engram_bulk_stage`, []any{t.tenant}}}
	if opts.VersionActor != "" {
		steps = append(steps, step{"versions", `INSERT INTO memory_versions (tenant, memory_id, version, change, content, status, category,
			key, importance, confidence, valid_from, actor)
			SELECT $1, id, 1, 'add', content, 'active', category, key, importance, confidence, valid_from, $2
			FROM engram_bulk_stage`, []any{t.tenant, opts.VersionActor}})
	}
	if opts.LedgerPrefix != "" {
		steps = append(steps, step{"ledger rows", `INSERT INTO applied_candidates (tenant, candidate_id, memory_id, decision, reason)
			SELECT $1, $2 || id::text, id, 'add', 'bulk load' FROM engram_bulk_stage`, []any{t.tenant, opts.LedgerPrefix}})
	}
	steps = append(steps, step{"embeddings", `INSERT INTO memory_embeddings (tenant, memory_id, model, dims, user_id, embedding)
		SELECT $1, id, $2, $3, user_id, embedding FROM engram_bulk_stage`, []any{t.tenant, opts.Model, opts.Dims}})
	for _, s := range steps {
		if _, err := t.tx.Exec(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("moving staged %s: %w", s.what, err)
		}
	}
	// A second call in the same transaction must not see these rows again.
	if _, err := t.tx.Exec(ctx, `TRUNCATE engram_bulk_stage`); err != nil {
		return fmt.Errorf("emptying the staging table: %w", err)
	}
	return nil
}

// CountMemories counts the tenant's memories, whatever their status.
func (t *Tx) CountMemories(ctx context.Context) (int, error) {
	var n int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM memories WHERE tenant = $1`, t.tenant).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting memories: %w", err)
	}
	return n, nil
}

// DeleteTenantMemories deletes every memory of the tenant (their versions, lineage and
// vectors go with them), its candidate ledger, audit log and retrieval records: it
// empties a benchmark tenant. Turns and the owner registry stay.
func (t *Tx) DeleteTenantMemories(ctx context.Context) error {
	for _, tbl := range []string{"memories", "applied_candidates", "audit_log", "retrievals"} {
		if _, err := t.tx.Exec(ctx, "DELETE FROM "+tbl+" WHERE tenant = $1", t.tenant); err != nil {
			return fmt.Errorf("deleting the tenant's %s: %w", tbl, err)
		}
	}
	return nil
}

// VacuumAnalyzeMemories vacuums and analyses the memory tables, as a steady-state
// database would be after a bulk load: statistics fresh (or the planner may not use
// the owner index) and hint bits set (or the first read of every page writes it).
func (s *Store) VacuumAnalyzeMemories(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, "VACUUM (ANALYZE) memories, memory_embeddings, memory_versions, applied_candidates"); err != nil {
		return fmt.Errorf("vacuuming the memory tables: %w", err)
	}
	return nil
}

// AnalyzeMemories refreshes the planner's statistics of memories and their vectors.
func (s *Store) AnalyzeMemories(ctx context.Context) error {
	for _, tbl := range []string{"memories", "memory_embeddings"} {
		if _, err := s.pool.Exec(ctx, "ANALYZE "+tbl); err != nil {
			return fmt.Errorf("analyzing %s: %w", tbl, err)
		}
	}
	return nil
}

// CreateVectorIndex builds (unless it exists) a partial HNSW index named name over
// the vectors of model, which must all have dims dimensions. Searches do not use one
// (exact per-owner scans are faster and exact at owner sizes); benchmarks build it to
// compare. It is not tenant-scoped: it covers the shared table.
func (s *Store) CreateVectorIndex(ctx context.Context, name, model string, dims int) error {
	if !plainIdent(name) || dims <= 0 {
		return fmt.Errorf("%w: index name %q / dimensions %d", ErrInvalid, name, dims)
	}
	sql := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON memory_embeddings
		USING hnsw ((embedding::vector(%d)) vector_cosine_ops) WHERE model = '%s'`,
		name, dims, strings.ReplaceAll(model, "'", "''"))
	if _, err := s.pool.Exec(ctx, sql); err != nil {
		return fmt.Errorf("building the HNSW index %s: %w", name, err)
	}
	return nil
}

// DropIndex drops the index name if it exists.
func (s *Store) DropIndex(ctx context.Context, name string) error {
	if !plainIdent(name) {
		return fmt.Errorf("%w: index name %q", ErrInvalid, name)
	}
	if _, err := s.pool.Exec(ctx, `DROP INDEX IF EXISTS `+name); err != nil {
		return fmt.Errorf("dropping the index %s: %w", name, err)
	}
	return nil
}

// plainIdent reports whether s is a lower-case SQL identifier that needs no quoting.
func plainIdent(s string) bool {
	if s == "" || len(s) > 63 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// ExactNearest is the owner's k nearest memories under model by an exact scan of the
// owner's vectors (the (tenant, model, user_id) index range), ties broken by id: the
// baseline a search's vector side is measured against.
func (t *Tx) ExactNearest(ctx context.Context, model, userID string, vec []float32, k int) ([]uuid.UUID, error) {
	// k is part of the text, not a parameter, so the planner sees the real limit.
	return t.nearestIDs(ctx, fmt.Sprintf(`SELECT memory_id FROM memory_embeddings
			WHERE tenant = $1 AND model = $2 AND user_id = $3 ORDER BY embedding <=> $4, memory_id LIMIT %d`, k),
		model, userID, vec)
}

// HNSWNearest is ExactNearest through an HNSW index over vector(dims) (see
// CreateVectorIndex) with iterative relaxed-order scans and ef_search efSearch. It sets
// those, and enable_sort off, for the rest of the transaction: with the owner's B-tree
// available the planner may sort the owner's rows exactly instead, and forbidding the
// sort leaves the HNSW index as the only ordered path.
func (t *Tx) HNSWNearest(ctx context.Context, model, userID string, vec []float32, dims, k, efSearch int) ([]uuid.UUID, error) {
	if _, err := t.tx.Exec(ctx, fmt.Sprintf(`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
		set_config('hnsw.ef_search', '%d', true), set_config('enable_sort', 'off', true)`, efSearch)); err != nil {
		return nil, fmt.Errorf("setting up the HNSW scan: %w", err)
	}
	return t.nearestIDs(ctx, fmt.Sprintf(`SELECT memory_id FROM memory_embeddings
			WHERE tenant = $1 AND model = $2 AND user_id = $3
			ORDER BY embedding::vector(%d) <=> $4::vector(%d) LIMIT %d`, dims, dims, k),
		model, userID, vec)
}

func (t *Tx) nearestIDs(ctx context.Context, sql, model, userID string, vec []float32) ([]uuid.UUID, error) {
	rows, err := t.tx.Query(ctx, sql, t.tenant, model, userID, pgvector.NewVector(vec))
	if err != nil {
		return nil, fmt.Errorf("querying nearest vectors: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("reading nearest vectors: %w", err)
	}
	return ids, nil
}
