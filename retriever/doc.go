// Package retriever is engram's read side: hybrid recall, context assembly, working
// memory, retrieval records and the HTTP API for them.
//
// Search filters first and ranks second. The retriever runs no SQL of its own: one
// candidate query of the store (memory.Tx.MemoryCandidates), inside a transaction that
// sets the tenant for row-level security, materialises the owner's eligible memories
// (owner, status, expiry, time range, types, categories; or, with as_of, each
// memory's version valid at that time), then draws candidates from three sides: the
// exact nearest vectors among them (an owner-scoped scan, never a filtered
// approximate index), the keyword matches ranked by Okapi BM25 with the owner's own
// statistics (English stemming, Chinese bigrams, identifiers whole), and the most
// recently updated. Candidates are fused with weighted reciprocal rank fusion and
// reranked with importance, recency and confidence (Config documents the weights),
// near-duplicates are dropped and the threshold applied; a search returns no memory
// that only the recency side found. The turns layer is BM25 keyword search over the
// owner's stored turns, each of the best matches lending a share of its score to
// its neighbours in the session (and, with turn embedding, vector search), fused
// the same way (memory.Tx.TurnCandidates).
//
// Context assembles a fenced block within a token budget from working memory (task
// state in the ENGRAM_TASKS KV bucket), short-term memory (the session's last turns
// and its rolling summary), and the procedural, semantic (led by the owner's standing
// preferences and constraints) and episodic layers, each within its share of the
// budget. When no memory matches the query by keyword, the episodic layer falls back
// to the user's own earlier turns that match it, that no memory came from and that
// nothing later speaks about (Config.ContextTurns). Tokens are estimated with EstimateTokens, calibrated against cl100k_base.
//
// Every search and context call writes a retrievals row (GET /v1/retrievals/{id});
// access counts are batched by AccessRecorder, and rolling session summaries are
// refreshed by RunSummarizer, both off the request path. Run runs both loops.
//
// HTTP (API.Register; the caller adds authentication):
//
//	POST   /v1/search                 SearchRequest  -> SearchResponse
//	POST   /v1/context                ContextRequest -> ContextResponse
//	PUT    /v1/tasks/{task_id}/state  JSON object    -> TaskState  (?user_id=: a task of that user)
//	GET    /v1/tasks/{task_id}/state                 -> TaskState (404 when none)
//	DELETE /v1/tasks/{task_id}/state                 -> 204
//	GET    /v1/retrievals/{id}                       -> Retrieval
//
// Invalid requests answer 400 {"error":{"code":"invalid_field","message","field"}}.
package retriever
