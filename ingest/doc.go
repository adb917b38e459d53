// Package ingest is engram's write path: it validates turn events (DecodeTurns),
// redacts secrets from them and publishes them to the TURNS stream, and serves
// that as the HTTP endpoint POST /v1/turns (API).
//
// The endpoint answers 202 only after JetStream has acknowledged every accepted
// turn, so a 202 means durable. The tenant always comes from the API token; a
// turn id (assigned by the client, or by the server when absent) makes retries
// idempotent, because it is the Nats-Msg-Id JetStream deduplicates on.
//
// Answers of POST /v1/turns: 202 when every valid turn is durable, with one
// result per turn (accepted, duplicate or rejected); 400 (413 for size limits)
// when the body or every turn is invalid; 401 without a valid token; 503 with
// Retry-After when JetStream did not acknowledge some turn, even if it
// acknowledged others. The 503 is deliberate: the client must resend, and
// resending the whole request is safe because acknowledged turns come back as
// duplicates, whereas a 202 with a "failed" entry would be easy to ignore.
//
// internal/bench (engram bench ingest) measures the endpoint's throughput against
// raw JetStream publishing of the same payloads.
package ingest
