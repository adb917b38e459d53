package llm

// What the external tests (package llm_test) read and nothing else in engram does: the
// hash embedder's default length, the chat client's JSON mode in force and the
// clients' call counters.

// DefaultHashDims is the HashEmbedder's default vector length.
const DefaultHashDims = defaultHashDims

// ChatStats counts calls since the client was made.
type ChatStats struct {
	Calls     int64 // Complete calls
	Retries   int64 // attempts beyond the first, fallbacks excluded
	Failures  int64 // Complete calls that returned an error
	Fallbacks int64 // times a rejected parameter was dropped (response_format, temperature)
}

// JSONMode is the JSON mode currently in force (it may have degraded from the configured one).
func (c *ChatClient) JSONMode() string { return levelName(c.mode.Load()) }

// Stats returns a snapshot of the call counters.
func (c *ChatClient) Stats() ChatStats {
	return ChatStats{
		Calls: c.calls.Load(), Retries: c.retries.Load(),
		Failures: c.failures.Load(), Fallbacks: c.fallbacks.Load(),
	}
}

// EmbedStats counts requests since the embedder was made.
type EmbedStats struct {
	Calls    int64 // HTTP requests (batches) made, first attempts only
	Retries  int64
	Failures int64 // batches that failed after retries
}

// Stats returns a snapshot of the request counters.
func (e *OpenAIEmbedder) Stats() EmbedStats {
	return EmbedStats{Calls: e.calls.Load(), Retries: e.retries.Load(), Failures: e.failures.Load()}
}
