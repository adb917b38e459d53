package memory

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// Measured recall of the owners' approximate indexes. Two HNSW builds of the same
// owner with the same parameters can differ: `engram bench large`'s global scope of
// 100,000 found 0.944 of the exact top 10 through one build and 0.982 through the
// next (m 24, ef_construction 128, ef_search 400; docs/perf-search.md, session 32).
// So the maintenance pass measures every index it builds, and every ready index it
// has no measure of: sample queries drawn from the owner's own vectors (recallSample),
// the index's top 10 (read as the search reads it) against the exact scan's. A build below DefaultIndexRecallTarget is built once more (a new graph);
// what is still below reads more of the index (ef_search, probes) up to twice its
// setting. The registry keeps the measure (recall) for `engram index list`.

const (
	// DefaultIndexRecallTarget is the recall@10 an owner index must reach on the
	// sample queries; below it the pass rebuilds or reads more of it.
	DefaultIndexRecallTarget = 0.95
	// indexRecallQueries is the sample: 20 queries measured one index at 0.855 and
	// 0.965 in two draws (the bench's own queries: 0.982), 50 within 0.02 of it. At
	// 1,000,000 vectors each exact top 10 reads the whole owner (about a second), so
	// they add under a minute to a build of minutes.
	indexRecallQueries = 50
	// queryKeepOwn and queryKeepOther are the shares of two stored vectors'
	// coordinates a sample query keeps (recallSample).
	queryKeepOwn, queryKeepOther = 1.0 / 3, 0.1
	// minRecallQueries: fewer queries than this measure nothing (a failed measure).
	minRecallQueries = 10
	// maxEfSearch is the registry's bound (migration 0012).
	maxEfSearch = 1000
)

// recallHit is a row of a top 10: a memory and its distance.
type recallHit struct {
	ID   uuid.UUID
	Dist float64
}

// topHits runs a statement of (memory id, distance) rows, a top 10, and collects them.
func (t *Tx) topHits(ctx context.Context, sql string, args ...any) ([]recallHit, error) {
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[recallHit])
}

// recallQuery is a sample query and its exact neighbours.
type recallQuery struct {
	vec   pgvector.Vector
	exact []uuid.UUID
	// tenth is the exact scan's 10th distance: an index hit at that distance is a
	// tie, and counts.
	tenth float64
}

// recallSample draws the index's sample queries: each keeps a random third of one of
// the owner's vectors' coordinates and a tenth of another's. A query is shorter than
// the memories it looks for and may carry a word of something else ("a few words of
// one memory and a word of another", as `engram bench large` asks); a stored vector,
// or a point near one, the index finds trivially (sums of two stored vectors measured
// 0.995–1.000 on the indexes the bench's queries found 0.944–0.986 of).
// rows is the owner's vectors now (the registry's count is the build's).
func (s *Store) recallSample(ctx context.Context, ix HNSWOwnerIndex, rows int64, n int) ([]recallQuery, error) {
	var qs []recallQuery
	err := s.InTx(ctx, ix.Tenant, func(tx *Tx) error {
		// Like the maintainers' counts, the scans of a whole owner take no parallel
		// workers (the cores are the searches').
		if _, err := tx.tx.Exec(ctx, `SELECT set_config('max_parallel_workers_per_gather', '0', true)`); err != nil {
			return err
		}
		// A random share of all the owner's rows (not stopped early, which would leave
		// its newest out), enough for n queries of two vectors with some to spare.
		p := min(1, float64(6*n)/float64(max(rows, 1)))
		res, err := tx.tx.Query(ctx, `SELECT embedding FROM memory_embeddings
			WHERE tenant = $1 AND model = $2 AND user_id = $3 AND dims = $4 AND random() < $5`,
			ix.Tenant, ix.Model, ix.UserID, ix.Dims, p)
		if err != nil {
			return err
		}
		vs, err := pgx.CollectRows(res, pgx.RowTo[pgvector.Vector])
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(uint64(rows), uint64(len(vs))))
		rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		for i := 0; i+1 < len(vs) && len(qs) < n; i += 2 {
			a, b := vs[i].Slice(), vs[i+1].Slice()
			q := make([]float32, len(a))
			zero := true
			for j := range q {
				if rng.Float64() < queryKeepOwn {
					q[j] += a[j]
				}
				if rng.Float64() < queryKeepOther {
					q[j] += b[j]
				}
				zero = zero && q[j] == 0
			}
			// A sparse vector (the hashing embedder's, of a short memory) can keep no
			// coordinate: its cosine distances are undefined.
			if !zero {
				qs = append(qs, recallQuery{vec: pgvector.NewVector(q)})
			}
		}
		if len(qs) < minRecallQueries {
			return fmt.Errorf("%d sample queries from %d vectors, fewer than %d", len(qs), len(vs), minRecallQueries)
		}
		for i := range qs {
			// Not the index's expression (embedding::vector(d)), so the exact scan.
			hs, err := tx.topHits(ctx, `SELECT memory_id, embedding <=> $5 FROM memory_embeddings
				WHERE tenant = $1 AND model = $2 AND user_id = $3 AND dims = $4 ORDER BY 2, 1 LIMIT 10`,
				ix.Tenant, ix.Model, ix.UserID, ix.Dims, qs[i].vec)
			if err != nil {
				return err
			}
			for _, h := range hs {
				qs[i].exact = append(qs[i].exact, h.ID)
				qs[i].tenth = h.Dist // the last one's
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sampling the queries of index %s: %w", ix.Name, err)
	}
	return qs, nil
}

// indexRecall reads each sample query's top 10 through the index as a search reads
// it (hnswNearestSQL, the scan set up by scanSQL) and returns the share of the exact
// top 10 it found, ties counted.
func (s *Store) indexRecall(ctx context.Context, ix HNSWOwnerIndex, qs []recallQuery) (float64, error) {
	hits, total := 0, 0
	err := s.InTx(ctx, ix.Tenant, func(tx *Tx) error {
		sql, arg := ix.scanSQL(false)
		if _, err := tx.tx.Exec(ctx, sql, arg); err != nil {
			return err
		}
		read := ix.hnswNearestSQL("$2", "$4", "$3", "true", "10")
		for _, q := range qs {
			hs, err := tx.topHits(ctx, read, ix.Tenant, ix.Model, ix.UserID, q.vec)
			if err != nil {
				return err
			}
			for _, h := range hs {
				if slices.Contains(q.exact, h.ID) || h.Dist <= q.tenth+1e-6 {
					hits++
				}
			}
			total += len(q.exact)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measuring the recall of index %s: %w", ix.Name, err)
	}
	if total == 0 {
		return 0, fmt.Errorf("measuring the recall of index %s: no exact neighbours to compare with", ix.Name)
	}
	return float64(hits) / float64(total), nil
}

// tuneIndexReads raises how much of the index a search reads (ef_search, probes), by
// half again at a time up to twice ix's setting, until the sample reaches target. An
// IVFFlat index that reaches it is read less, down to fewestProbes lists (0: not
// lowered): the fewest probes whose sample still reaches target, by bisection. The
// default (one list in 50, at least 40) is a guess made before any measure: one
// sample of the million-memory owner found 0.960 at 40 of its 2,000 lists and 0.954
// at 32, and the bench's vector side at 30 lists was a fifth faster than at 40
// (docs/perf-search.md, session 35). It returns ix as read then and its recall. On an
// error it returns ix as it came.
func (s *Store) tuneIndexReads(ctx context.Context, ix HNSWOwnerIndex, qs []recallQuery, recall, target float64, fewestProbes int) (HNSWOwnerIndex, float64, error) {
	orig, origRecall := ix, recall
	if ix.Method == MethodIVFFlat && recall >= target && fewestProbes > 0 && fewestProbes < ix.Probes {
		// hi reaches target; lo only rises past a count measured short of it.
		lo, hi, hiRecall := fewestProbes, ix.Probes, recall
		for lo < hi {
			next := ix
			next.Probes = (lo + hi) / 2
			r, err := s.indexRecall(ctx, next, qs)
			if err != nil {
				return orig, origRecall, err
			}
			if r >= target {
				hi, hiRecall = next.Probes, r
			} else {
				lo = next.Probes + 1
			}
		}
		ix.Probes = hi
		return ix, hiRecall, nil
	}
	limitEf, limitProbes := min(2*ix.EfSearch, maxEfSearch), min(2*ix.Probes, ix.Lists)
	for recall < target {
		next := ix
		if ix.Method == MethodIVFFlat {
			next.Probes = min(limitProbes, ix.Probes+max(1, ix.Probes/2))
		} else {
			next.EfSearch = min(limitEf, ix.EfSearch+max(1, ix.EfSearch/2))
		}
		if next == ix {
			break
		}
		r, err := s.indexRecall(ctx, next, qs)
		if err != nil {
			return orig, origRecall, err
		}
		ix, recall = next, r
	}
	return ix, recall, nil
}

// measureRecall measures ix on a sample of the owner's rows (its vectors now) and
// reads more of it while it falls short of target. rebuild, when not nil, is called
// once first if the index falls short (a new build no search reads yet), and the
// rebuilt index is measured on the same sample. It returns ix as read then, measured.
func (s *Store) measureRecall(ctx context.Context, ix HNSWOwnerIndex, rows int64, target float64, fewestProbes int,
	rebuild func() error) (HNSWOwnerIndex, error) {
	qs, err := s.recallSample(ctx, ix, rows, indexRecallQueries)
	if err != nil {
		return ix, err
	}
	return s.measureOn(ctx, ix, qs, target, fewestProbes, rebuild)
}

// measureOn is measureRecall on the sample qs.
func (s *Store) measureOn(ctx context.Context, ix HNSWOwnerIndex, qs []recallQuery, target float64, fewestProbes int,
	rebuild func() error) (HNSWOwnerIndex, error) {
	r, err := s.indexRecall(ctx, ix, qs)
	if err != nil {
		return ix, err
	}
	if r < target && rebuild != nil {
		if err := rebuild(); err != nil {
			return ix, err
		}
		if r, err = s.indexRecall(ctx, ix, qs); err != nil {
			return ix, err
		}
	}
	if ix, r, err = s.tuneIndexReads(ctx, ix, qs, r, target, fewestProbes); err != nil {
		return ix, err
	}
	ix.Recall, ix.measured = r, true
	return ix, nil
}

// checkIndexRecall measures a ready index that searches read (one built before
// recall was measured, a replacement once the index it replaced is gone, or one
// whose measure failed) and records what it measured; it is never built again. A
// failure is logged: the index stays as it was.
func (s *Store) checkIndexRecall(ctx context.Context, ix HNSWOwnerIndex, rows int64, target float64, fewestProbes int, log *slog.Logger) (HNSWOwnerIndex, bool) {
	m, err := s.measureRecall(ctx, ix, rows, target, fewestProbes, nil)
	if err == nil {
		err = s.recordIndexReads(ctx, m)
	}
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("measuring a vector index's recall failed; the next pass tries again", "index", ix.Name, "error", err)
		}
		return ix, false
	}
	log.Info("measured a vector index's recall", "index", m.Name, "recall", m.Recall, "reads", m.Reads())
	return m, true
}

// recordIndexReads stores the index's measured recall and how it is read.
func (s *Store) recordIndexReads(ctx context.Context, ix HNSWOwnerIndex) error {
	return s.InTx(ctx, ix.Tenant, func(tx *Tx) error {
		_, err := tx.tx.Exec(ctx, `UPDATE hnsw_owner_indexes SET recall = $5, ef_search = $6, probes = $7
			WHERE tenant = $1 AND model = $2 AND user_id = $3 AND index_name = $4`,
			ix.Tenant, ix.Model, ix.UserID, ix.Name, ix.Recall, ix.EfSearch, nullIfZero(ix.Probes))
		if err != nil {
			return fmt.Errorf("recording the recall of index %s: %w", ix.Name, err)
		}
		return nil
	})
}

// measureBuild measures a new index that no search reads yet (buildHNSW) and sets
// its recall and reads. An HNSW build below target is dropped and built again once
// with ddl (its levels are drawn anew), and the second is kept; what is still below
// is read further. A failed measure is logged and leaves the index unmeasured (the
// next pass measures it); only a failed rebuild is an error.
func (s *Store) measureBuild(ctx context.Context, c *pgx.Conn, ix *HNSWOwnerIndex, ddl string, target float64, fewestProbes int,
	log *slog.Logger, rebuilds *int) error {
	var rebuild func() error
	var rebuildErr error
	var rebuildSeconds float64
	if ix.Method == MethodHNSW {
		rebuild = func() error {
			log.Info("a new vector index fell short of the recall target; building it again", "index", ix.Name, "target", target)
			if _, err := c.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+pgx.Identifier{ix.Name}.Sanitize()); err != nil {
				rebuildErr = fmt.Errorf("dropping the vector index %s to build it again: %w", ix.Name, err)
				return rebuildErr
			}
			start := time.Now()
			if _, err := c.Exec(ctx, ddl); err != nil {
				rebuildErr = fmt.Errorf("building the vector index %s again: %w", ix.Name, err)
				return rebuildErr
			}
			rebuildSeconds = time.Since(start).Seconds()
			*rebuilds++
			return nil
		}
	}
	m, err := s.measureRecall(ctx, *ix, ix.Rows, target, fewestProbes, rebuild)
	ix.BuildSeconds += rebuildSeconds
	switch {
	case rebuildErr != nil:
		return rebuildErr
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		log.Warn("measuring a new vector index's recall failed; the next pass measures it", "index", ix.Name, "error", err)
		return nil
	}
	m.BuildSeconds = ix.BuildSeconds
	*ix = m
	log.Info("measured a vector index's recall", "index", ix.Name, "recall", ix.Recall, "reads", ix.Reads())
	return nil
}
