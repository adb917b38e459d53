package llm

import (
	"context"
	"math"
)

// Embedder turns texts into vectors. Vectors from different models (or different Dims) are not
// comparable, which is why engram stores embeddings per Model and Dims.
type Embedder interface {
	// Model names the model and its version; it keys stored vectors.
	Model() string
	// Dims is the vector length (0 if not known yet, see OpenAIEmbedder).
	Dims() int
	// Embed returns one vector per text, in input order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Cosine is the cosine similarity of a and b; 0 when lengths differ or either is all zeros.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}
