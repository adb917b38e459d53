package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A census counts every tenant's memories for the operator's gauges and the vector
// coverage. It reads the whole table, so it reads the owner's census cursor (migration
// 0017) a batch at a time and pauses between batches: with tens of thousands of
// tenants, counting tenant by tenant took 350,000 round trips and seconds of both
// cores a minute, and one statement over the table held a core for seconds; requests
// beside it waited either way.

// VectorCount is how many of a tenant's memories with a status have a vector in a model.
type VectorCount struct {
	Tenant, Status, Model string
	Count                 int64
}

// Census is every tenant's memories by status and type, and their vectors by status
// and model.
type Census struct {
	Counts  []MemoryCount
	Vectors []VectorCount
	TakenAt time.Time // when it started
}

// Pace is how a census spreads its work.
type Pace struct {
	// Rows is how many memories one fetch reads; default 10,000.
	Rows int
	// Duty is the share of the time spent counting: after a fetch that took d it pauses
	// d*(1/Duty-1). Default 0.2; 1 counts without pausing.
	Duty float64
}

func (p Pace) withDefaults() Pace {
	if p.Rows <= 0 {
		p.Rows = 10_000
	}
	if p.Duty <= 0 || p.Duty > 1 {
		p.Duty = 0.2
	}
	return p
}

// MemoryCensus counts every tenant's memories at pace, in one read-only transaction
// (one snapshot), which stays open while the census runs.
func (s *Store) MemoryCensus(ctx context.Context, pace Pace) (Census, error) {
	pace = pace.withDefaults()
	c := Census{TakenAt: time.Now()}
	counts := map[MemoryCount]int64{}
	vectors := map[VectorCount]int64{}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var cursor string
		if err := tx.QueryRow(ctx, `SELECT engram_op_memory_census()`).Scan(&cursor); err != nil {
			return err
		}
		fetch := fmt.Sprintf("FETCH FORWARD %d FROM %s", pace.Rows, pgx.Identifier{cursor}.Sanitize())
		for {
			start := time.Now()
			rows, err := tx.Query(ctx, fetch)
			if err != nil {
				return err
			}
			var (
				tenant, status, typ string
				models              []string
			)
			n, err := pgx.ForEachRow(rows, []any{&tenant, &status, &typ, &models}, func() error {
				counts[MemoryCount{Tenant: tenant, Status: status, Type: typ}]++
				for _, m := range models {
					vectors[VectorCount{Tenant: tenant, Status: status, Model: m}]++
				}
				return nil
			})
			if err != nil {
				return err
			}
			took := time.Since(start)
			if n.RowsAffected() < int64(pace.Rows) {
				return nil
			}
			if pause := time.Duration(float64(took) * (1/pace.Duty - 1)); pause > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(pause):
				}
			}
		}
	})
	if err != nil {
		return Census{}, fmt.Errorf("counting memories: %w", err)
	}
	for k, n := range counts {
		k.Count = n
		c.Counts = append(c.Counts, k)
	}
	for k, n := range vectors {
		k.Count = n
		c.Vectors = append(c.Vectors, k)
	}
	sortCounts(c.Counts, func(m MemoryCount) [3]string { return [3]string{m.Tenant, m.Status, m.Type} })
	sortCounts(c.Vectors, func(v VectorCount) [3]string { return [3]string{v.Tenant, v.Status, v.Model} })
	return c, nil
}

// RecentCensus is the store's last census when it started within maxAge, otherwise a
// new one (taken once for concurrent callers): the gauges and the coverage tracker of
// one process share a count.
func (s *Store) RecentCensus(ctx context.Context, maxAge time.Duration, pace Pace) (Census, error) {
	s.census.mu.Lock()
	defer s.census.mu.Unlock()
	if last := s.census.last; last != nil && time.Since(last.TakenAt) <= maxAge {
		return *last, nil
	}
	c, err := s.MemoryCensus(ctx, pace)
	if err != nil {
		return Census{}, err
	}
	s.census.last = &c
	return c, nil
}

// censusCache is the store's last census (RecentCensus).
type censusCache struct {
	mu   sync.Mutex
	last *Census
}

// Embedded is each tenant's active memories with a vector, by model.
func (c Census) Embedded() []EmbeddingCount {
	var out []EmbeddingCount
	for _, v := range c.Vectors {
		if v.Status == string(StatusActive) {
			out = append(out, EmbeddingCount{Tenant: v.Tenant, Model: v.Model, Count: v.Count})
		}
	}
	return out
}

// Coverage is MemoryCoverage of every tenant (user nil), by tenant; a tenant without
// active, pending or archived memories is absent.
func (c Census) Coverage() map[string]Coverage {
	live := map[string]bool{string(StatusActive): true, string(StatusPending): true, string(StatusArchived): true}
	out := map[string]Coverage{}
	for _, m := range c.Counts {
		if live[m.Status] {
			cv, ok := out[m.Tenant]
			if !ok {
				cv.Models = []ModelCoverage{}
			}
			cv.Total += m.Count
			out[m.Tenant] = cv
		}
	}
	for _, v := range c.Vectors { // sorted by tenant, status, model
		cv, ok := out[v.Tenant]
		if !ok || !live[v.Status] {
			continue
		}
		i := slices.IndexFunc(cv.Models, func(m ModelCoverage) bool { return m.Model == v.Model })
		if i < 0 {
			cv.Models = append(cv.Models, ModelCoverage{Model: v.Model})
			i = len(cv.Models) - 1
		}
		cv.Models[i].WithVector += v.Count
		out[v.Tenant] = cv
	}
	for _, cv := range out {
		SortModels(cv.Models)
	}
	return out
}

func sortCounts[T any](s []T, key func(T) [3]string) {
	slices.SortFunc(s, func(a, b T) int {
		ka, kb := key(a), key(b)
		for i := range ka {
			if c := strings.Compare(ka[i], kb[i]); c != 0 {
				return c
			}
		}
		return 0
	})
}
