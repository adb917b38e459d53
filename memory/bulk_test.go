package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

// A bulk load may record its memories in the idempotency ledger, as the resolver
// would have (a benchmark's steady state); without a prefix it records nothing.
func TestCopyMemoriesLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app, _, _, _ := hnswStores(t)
	for _, tc := range []struct {
		name, tenant, prefix string
	}{
		{"with a ledger prefix", "acme", "seed-"},
		{"without one", "globex", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := make([]memory.BulkMemory, 3)
			for i := range ms {
				ms[i] = memory.BulkMemory{ID: uuid.Must(uuid.NewV7()), UserID: "u1", Type: memory.Semantic,
					Category: memory.CatFact, Content: "bulk memory", Importance: 0.5, Confidence: 0.8,
					ValidFrom: time.Now(), Source: memory.SourceUser, Embedding: []float32{1, 0}}
			}
			err := app.InTx(ctx, tc.tenant, func(tx *memory.Tx) error {
				return tx.CopyMemories(ctx, ms, memory.BulkOptions{Model: "test-2d", Dims: 2, LedgerPrefix: tc.prefix})
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				for _, tenant := range []string{"acme", "globex"} {
					var e memory.LedgerEntry
					var ok bool
					err := app.InTx(ctx, tenant, func(tx *memory.Tx) error {
						var err error
						e, ok, err = tx.LedgerEntry(ctx, "seed-"+m.ID.String())
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					want := tc.prefix != "" && tenant == tc.tenant
					if ok != want {
						t.Fatalf("tenant %s: ledger entry of %s found %v, want %v", tenant, m.ID, ok, want)
					}
					if ok && (e.Decision != "add" || e.MemoryID != m.ID) {
						t.Errorf("ledger entry of %s = %+v, want the add of that memory", m.ID, e)
					}
				}
			}
		})
	}
}
