// Package lifecycle is what operators and users do to memories by hand: corrections,
// deprecation, rollback, restore from the archive, hard deletion, user erasure (with
// the purge of the user's stream messages), and export and import.
package lifecycle

import "context"

// module is the audit log's name for this package's writes.
const module = "lifecycle"

// Embedder is what manual corrections need of an embedding model (llm.Embedder fits).
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
