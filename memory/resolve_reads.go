package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// ResolveQuery is what the resolver reads of one owner before it decides about a
// candidate, in one round trip (ResolveReads).
type ResolveQuery struct {
	// CandidateID, when not empty, is looked up in the idempotency ledger.
	CandidateID string
	// Nearest asks for the owner's nearest active and pending memories, as
	// NearestVectorsFirst (Statuses and Types must be empty).
	Nearest NearestQuery
	// Key, when not empty, reads the owner's active and pending memories with that key
	// (as ByKey), and KeyPrefixes up to PrefixLimit memories per prefix (as ByKeyPrefix).
	Key         string
	KeyPrefixes []string
	PrefixLimit int
	// Mentions, when not empty, reads up to MentionLimit of the owner's active memories
	// whose text holds each (its words, as the keyword search matches them), newest
	// first: what was said of someone or something the candidate names, however far
	// its vector is.
	Mentions     []string
	MentionLimit int
}

// ResolveRead is the answer to a ResolveQuery.
type ResolveRead struct {
	Ledger   LedgerEntry
	Recorded bool // the candidate is in the ledger (Ledger holds its entry)
	Nearest  []Neighbour
	// Index is the owner's HNSW index that Nearest was read through, "" when it was
	// read by the exact scan.
	Index string
	// Keyed are the memories with the key, newest first, then those of each prefix in
	// turn, each with its similarity to Nearest.Vector under Nearest.Model (0 when it
	// has no vector under that model).
	Keyed []Neighbour
	// Mentioned are the memories holding one of Mentions, in their order, each with its
	// similarity as in Keyed.
	Mentioned []Neighbour
}

// ResolveReads reads the ledger entry, the nearest memories and the key slots of a
// ResolveQuery in one batch: the resolver's reads cost one round trip, and in a
// pipelined transaction (InOwnerTx) that is also the one that begins it and takes
// the owner's lock. An owner with a ready HNSW index (memory/hnsw_resolve.go) has its
// nearest memories read through it, everyone else by the exact scan.
func (t *Tx) ResolveReads(ctx context.Context, q ResolveQuery) (ResolveRead, error) {
	nq := q.Nearest
	if len(nq.Statuses) > 0 || len(nq.Types) > 0 || nq.Model == "" || len(nq.Vector) == 0 {
		return ResolveRead{}, fmt.Errorf("%w: the resolver's reads need a model and a vector, and no status or type filter", ErrInvalid)
	}
	if nq.K <= 0 {
		nq.K = 10
	}
	ix, err := t.ownerIndex(ctx, nq.Model, nq.UserID, nq.Vector)
	if err != nil {
		return ResolveRead{}, fmt.Errorf("choosing how to search nearest memories of %s: %w", nq.UserID, err)
	}
	vec := pgvector.NewVector(nq.Vector)
	live := []string{string(StatusActive), string(StatusPending)}
	b := &pgx.Batch{}
	if q.CandidateID != "" {
		b.Queue(`SELECT memory_id, decision, reason FROM applied_candidates WHERE tenant = $1 AND candidate_id = $2`,
			t.tenant, q.CandidateID)
	}
	// An index scan's settings hold for the nearest read alone: the key reads after
	// it plan as always.
	if ix != nil {
		sql, arg := ix.scanSQL(true)
		b.Queue(sql, arg)
	}
	nearSQL, nearArgs := t.resolveNearest(ix, nq)
	b.Queue(nearSQL, nearArgs...)
	if ix != nil {
		b.Queue(hnswScanDoneSQL)
	}
	var prefixes []string
	if q.Key != "" {
		b.Queue(neighboursSQL+`
			WHERE m.tenant = $1 AND m.user_id = $2 AND m.key = $3 AND m.status = ANY($6)
			ORDER BY m.updated_at DESC`, t.tenant, nq.UserID, q.Key, nq.Model, vec, live)
		for _, p := range q.KeyPrefixes {
			if p == "" || q.PrefixLimit <= 0 {
				continue
			}
			prefixes = append(prefixes, p)
			esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p)
			b.Queue(neighboursSQL+`
				WHERE m.tenant = $1 AND m.user_id = $2 AND m.key LIKE $3 || '%' AND m.status = ANY($6)
				ORDER BY m.updated_at DESC LIMIT $7`, t.tenant, nq.UserID, esc, nq.Model, vec, live, q.PrefixLimit)
		}
	}
	var mentions []string
	for _, m := range q.Mentions {
		if strings.TrimSpace(m) == "" || q.MentionLimit <= 0 {
			continue
		}
		mentions = append(mentions, m)
		// Through the owner's full-text index (memories_owner_tsv), as a phrase of the
		// words as stored: a read of the rows holding the name, whatever the owner's size.
		b.Queue(neighboursSQL+`
			WHERE m.tenant = $1 AND m.user_id = $2 AND `+ownerKeySQL("m", "$1", "$2")+`
			  AND m.tsv @@ phraseto_tsquery('english', $3) AND m.status = 'active'
			ORDER BY m.updated_at DESC LIMIT $6`, t.tenant, nq.UserID, SearchText(m), nq.Model, vec, q.MentionLimit)
	}
	br := t.tx.SendBatch(ctx, b)
	defer func() { _ = br.Close() }()
	var out ResolveRead
	if q.CandidateID != "" {
		var mid *uuid.UUID
		err := br.QueryRow().Scan(&mid, &out.Ledger.Decision, &out.Ledger.Reason)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return ResolveRead{}, fmt.Errorf("reading the ledger entry of candidate %s: %w", q.CandidateID, err)
		default:
			out.Recorded = true
			if mid != nil {
				out.Ledger.MemoryID = *mid
			}
		}
	}
	if ix != nil {
		if _, err := br.Exec(); err != nil {
			return ResolveRead{}, fmt.Errorf("setting up the vector index scan of %s: %w", nq.UserID, err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return ResolveRead{}, fmt.Errorf("searching nearest memories of %s: %w", nq.UserID, err)
	}
	near, complete, err := t.scanNearestVectorsFirst(rows, nq, ix)
	if err != nil {
		return ResolveRead{}, err
	}
	out.Nearest = near
	if ix != nil {
		if _, err := br.Exec(); err != nil {
			return ResolveRead{}, fmt.Errorf("ending the vector index scan of %s: %w", nq.UserID, err)
		}
		out.Index = ix.Name
	}
	if q.Key != "" {
		for i := range 1 + len(prefixes) {
			what := "key " + q.Key
			if i > 0 {
				what = "key prefix " + prefixes[i-1]
			}
			ms, err := t.readNeighbours(br)
			if err != nil {
				return ResolveRead{}, fmt.Errorf("reading memories with %s: %w", what, err)
			}
			out.Keyed = append(out.Keyed, ms...)
		}
	}
	for _, m := range mentions {
		ms, err := t.readNeighbours(br)
		if err != nil {
			return ResolveRead{}, fmt.Errorf("reading memories that mention %q: %w", m, err)
		}
		out.Mentioned = append(out.Mentioned, ms...)
	}
	if err := br.Close(); err != nil {
		return ResolveRead{}, fmt.Errorf("reading the owner's memories: %w", err)
	}
	if !complete {
		// Too many inactive memories among the closest vectors, or an index scan that
		// stopped short: only the exact scan can say which K are nearest.
		if out.Nearest, err = t.Nearest(ctx, nq); err != nil {
			return ResolveRead{}, err
		}
		out.Index = ""
	}
	return out, nil
}

// neighboursSQL selects the owner's memories m, each with its similarity to $5 under
// model $4 (0 without a vector in it); the caller adds WHERE and ORDER BY.
var neighboursSQL = `SELECT ` + memoryColumnsAs("m") + `, coalesce(1 - (e.embedding <=> $5), 0) FROM memories m
	LEFT JOIN memory_embeddings e ON e.tenant = m.tenant AND e.memory_id = m.id AND e.model = $4`

// readNeighbours reads the rows of the next neighboursSQL statement in br.
func (t *Tx) readNeighbours(br pgx.BatchResults) ([]Neighbour, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Neighbour, error) {
		var n Neighbour
		m, err := scanMemory(r, t.tenant, &n.Similarity)
		n.Memory = m
		return n, err
	})
}

// resolveNearest is the statement of ResolveReads' nearest read: through the owner's
// index ix, or the exact scan when ix is nil.
func (t *Tx) resolveNearest(ix *HNSWOwnerIndex, q NearestQuery) (string, []any) {
	if ix != nil {
		return ix.resolveNearestSQL(), t.nearestVectorsFirstArgs(q)
	}
	return nearestVectorsFirstSQL, t.nearestVectorsFirstArgs(q)
}
