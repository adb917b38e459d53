package retriever_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
)

// TestRecordsWrittenOffPath checks the retrieval-record writer: while the retriever
// runs, a search's record is queued rather than written in the search, is readable at
// once through GetRetrieval (which writes the queue first), and every record of many
// searches reaches the table once; after Run ends, records are written in the call
// again.
func TestRecordsWrittenOffPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, func(c *retriever.Config) { c.RecordFlushInterval = time.Hour })
	e.add("acme", mem{user: "u1", content: "Keeps bees on the roof"})
	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = e.r.Run(ctx) }()
	// Run marks the writer running as it starts; wait for that, not for a time.
	for !e.r.Records().Queue("acme", probeRecord()) {
		time.Sleep(time.Millisecond)
	}
	resp := e.search("acme", retriever.SearchRequest{Query: "bees", UserID: "u1"})
	if n := pgtest.Count(t, e.pool, "acme", `SELECT count(*) FROM retrievals WHERE id = $1`, uuid.MustParse(resp.RetrievalID)); n != 0 {
		t.Fatalf("the record was written in the search (interval is an hour): %d rows", n)
	}
	rec, err := e.r.GetRetrieval(e.ctx, "acme", uuid.MustParse(resp.RetrievalID))
	if err != nil || rec.Kind != "search" || len(rec.MemoryIDs) != 1 {
		t.Fatalf("record %+v, %v", rec, err)
	}
	var ids []string
	for range 20 {
		ids = append(ids, e.search("acme", retriever.SearchRequest{Query: "roof", UserID: "u1"}).RetrievalID)
	}
	stop()
	wg.Wait()
	for _, id := range ids {
		if n := pgtest.Count(t, e.pool, "acme", `SELECT count(*) FROM retrievals WHERE id = $1`, uuid.MustParse(id)); n != 1 {
			t.Errorf("record %s: %d rows after Run ended, want 1", id, n)
		}
	}
	// Not running: the search writes its record itself.
	resp = e.search("acme", retriever.SearchRequest{Query: "bees", UserID: "u1"})
	if n := pgtest.Count(t, e.pool, "acme", `SELECT count(*) FROM retrievals WHERE id = $1`, uuid.MustParse(resp.RetrievalID)); n != 1 {
		t.Errorf("record of a search without a running writer: %d rows, want 1", n)
	}
}

// probeRecord is a valid record of no call, to find out when the writer accepts records.
func probeRecord() memory.Retrieval {
	return memory.Retrieval{ID: uuid.New(), Kind: "search", QueryHash: []byte{0}, UserID: "u1"}
}
