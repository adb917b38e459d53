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

// Unit returns v scaled to length 1 (nil for an all-zero or empty v), so that the
// cosine of two unit vectors is their dot product (Dot): one pass instead of three
// when one vector meets many.
func Unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	inv := 1 / math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Dot is the dot product of a and b; 0 when their lengths differ.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
