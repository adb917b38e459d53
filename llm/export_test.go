package llm

// DefaultHashDims is the HashEmbedder's default vector length, for the external tests.
const DefaultHashDims = defaultHashDims
