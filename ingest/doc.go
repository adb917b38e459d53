// Package ingest is engram's write path: it validates turn events (DecodeTurns),
// redacts secrets from them and publishes them to the TURNS stream (Service.Ingest),
// and turns explicit memories into candidates on CANDIDATES (Service.Remember). It
// knows nothing of HTTP: internal/httpapi serves it as POST /v1/turns and
// POST /v1/memories and chooses the status codes from its results.
//
// Ingest returns only after JetStream has acknowledged every accepted turn, so an
// accepted turn is durable. The tenant always comes from authentication; a turn id
// (assigned by the client, or by the service when absent) makes retries idempotent,
// because it is the Nats-Msg-Id JetStream deduplicates on; resending an id with other
// content is refused as a conflict (conflict.go). Every turn of a request
// gets an outcome: accepted, duplicate (already durable), rejected (invalid; resending
// cannot help) or failed (not acknowledged; resend it with the same turn id).
//
// internal/bench (engram bench ingest) measures the endpoint's throughput against
// raw JetStream publishing of the same payloads.
package ingest
