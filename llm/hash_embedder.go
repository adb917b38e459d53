package llm

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf8"
)

// HashModel names the hashing embedder's algorithm. Change the version whenever the output for
// any text would change: stored vectors are keyed by it.
const HashModel = "engram-hash-v1"

// defaultHashDims is the HashEmbedder's default vector length; minHashDims the smallest allowed.
const (
	defaultHashDims = 384
	minHashDims     = 16
)

// Feature kinds. Each is hashed as a leading byte, so features of different kinds never collide
// by construction, and each has its own weight.
const (
	featWord     byte = 'w' // Latin (non-CJK) word, stemmed
	featWordPair byte = 'p' // two consecutive kept words
	featCJK1     byte = '1' // CJK character
	featCJK2     byte = '2' // CJK character bigram: carries most word meaning in Chinese
	featCJK3     byte = '3' // CJK character trigram
)

const (
	weightWord     = 1.0
	weightWordPair = 0.7
	weightCJK1     = 0.4 // single characters are common and ambiguous (的, 会, 下)
	weightCJK2     = 1.0
	weightCJK3     = 0.6
)

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
	maxWordLen  = 64 // longer tokens (URLs, base64) are truncated: enough to stay distinct
)

// HashEmbedder is engram's local default embedder: deterministic, pure Go, no model files. It
// embeds by signed feature hashing (FNV-1a 64) of word unigrams and bigrams for alphabetic text
// and character 1-3-grams for CJK (Han, Hiragana, Katakana, Hangul), with sublinear term
// frequency weights (1+ln tf) and L2 normalisation. It matches texts that share words, not
// meaning: paraphrases with different vocabulary score low. Safe for concurrent use.
//
// Dimension 0 is reserved: no feature hashes to it, and a text without features (empty,
// whitespace, punctuation only) gets the unit vector on it, so its cosine is 1 with other empty
// texts and 0 with everything else, rather than undefined as for a zero vector.
type HashEmbedder struct {
	dims    int
	scratch sync.Pool // *hashScratch, so steady-state embedding allocates only its output
}

var _ Embedder = (*HashEmbedder)(nil)

// NewHashEmbedder makes a hashing embedder; dims 0 means 384 (defaultHashDims).
func NewHashEmbedder(dims int) (*HashEmbedder, error) {
	if dims == 0 {
		dims = defaultHashDims
	}
	if dims < minHashDims {
		return nil, fmt.Errorf("llm: hash embedder: dims must be at least %d, got %d", minHashDims, dims)
	}
	return &HashEmbedder{dims: dims}, nil
}

// Model returns HashModel.
func (e *HashEmbedder) Model() string { return HashModel }

// Dims returns the vector length.
func (e *HashEmbedder) Dims() int { return e.dims }

// Embed returns one unit vector per text. It fails only if ctx is done.
func (e *HashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*e.dims) // one allocation for the whole batch
	sc, _ := e.scratch.Get().(*hashScratch)
	if sc == nil {
		sc = &hashScratch{}
	}
	defer e.scratch.Put(sc)
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("llm: hash embedding: %w", err)
			}
		}
		v := backing[i*e.dims : (i+1)*e.dims : (i+1)*e.dims]
		sc.embed(t, v)
		out[i] = v
	}
	return out, nil
}

// hashScratch is the reusable working memory of one embedding.
type hashScratch struct {
	word     []byte // word being read, lowercased
	prev     []byte // previous kept word, for word pairs
	havePrev bool
	cjk      []rune // CJK run being read

	// Open-addressing table counting features (key 0 = empty), and the slots in use in
	// insertion order, which keeps the float sums, hence the output, deterministic.
	keys    []uint64
	counts  []float32
	weights []float32
	used    []int32
}

func (s *hashScratch) embed(text string, v []float32) {
	s.reset(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			s.ascii(c)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII, common in Chinese text
			s.ascii(byte(r - 0xFEE0))
		case r == '\u2019' || r == '\u02BC': // typographic apostrophes: "don’t" → "dont"
			s.ascii('\'')
		case isCJK(r):
			s.flushWord()
			s.havePrev = false // a word pair never spans a CJK run
			s.cjk = append(s.cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			s.flushCJK()
			if len(s.word) < maxWordLen {
				s.word = utf8.AppendRune(s.word, unicode.ToLower(r))
			}
		default:
			s.flushWord()
			s.flushCJK()
		}
	}
	s.flushWord()
	s.flushCJK()
	s.finish(v)
}

func (s *hashScratch) ascii(c byte) {
	switch {
	case c >= 'A' && c <= 'Z':
		c += 'a' - 'A'
		fallthrough
	case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		s.flushCJK()
		if len(s.word) < maxWordLen {
			s.word = append(s.word, c)
		}
	case c == '\'':
		// Inside a word an apostrophe is dropped ("don't" → "dont", keeping the negation).
		if len(s.word) == 0 {
			s.flushCJK()
		}
	default:
		s.flushWord()
		s.flushCJK()
	}
}

func (s *hashScratch) reset(n int) {
	s.word, s.prev, s.cjk, s.havePrev = s.word[:0], s.prev[:0], s.cjk[:0], false
	// At most about one feature per input byte, so a table twice that size stays half empty.
	size := 256
	for size < 2*n+8 {
		size <<= 1
	}
	if len(s.keys) < size {
		s.keys = make([]uint64, size)
		s.counts = make([]float32, size)
		s.weights = make([]float32, size)
	}
	s.used = s.used[:0]
}

func (s *hashScratch) flushWord() {
	if len(s.word) == 0 {
		return
	}
	if isStopword(s.word) {
		s.word = s.word[:0]
		return
	}
	w := stem(s.word)
	s.word = s.word[:0]
	s.add(fnvBytes(fnvByte(fnvOffset64, featWord), w), weightWord)
	if s.havePrev {
		h := fnvBytes(fnvByte(fnvOffset64, featWordPair), s.prev)
		h = fnvBytes(fnvByte(h, 0), w)
		s.add(h, weightWordPair)
	}
	s.prev = append(s.prev[:0], w...)
	s.havePrev = true
}

func (s *hashScratch) flushCJK() {
	r := s.cjk
	if len(r) == 0 {
		return
	}
	s.cjk = s.cjk[:0]
	for i := range r {
		h1 := fnvRune(fnvByte(fnvOffset64, featCJK1), r[i])
		s.add(h1, weightCJK1)
		if i+1 < len(r) {
			h2 := fnvRune(fnvRune(fnvByte(fnvOffset64, featCJK2), r[i]), r[i+1])
			s.add(h2, weightCJK2)
		}
		if i+2 < len(r) {
			h3 := fnvRune(fnvRune(fnvRune(fnvByte(fnvOffset64, featCJK3), r[i]), r[i+1]), r[i+2])
			s.add(h3, weightCJK3)
		}
	}
}

// add counts one occurrence of the feature with hash h.
func (s *hashScratch) add(h uint64, w float32) {
	h = mix64(h) // FNV-1a's high bits avalanche poorly; the finaliser spreads them
	if h == 0 {
		h = 1
	}
	mask := uint64(len(s.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.keys[i] {
		case 0:
			s.keys[i], s.counts[i], s.weights[i] = h, 1, w
			s.used = append(s.used, int32(i))
			return
		case h:
			s.counts[i]++
			return
		}
	}
}

// finish writes the weighted features into v, L2-normalises it, and clears the table.
func (s *hashScratch) finish(v []float32) {
	clear(v)
	n := uint64(len(v) - 1) // dimension 0 is reserved
	for _, i := range s.used {
		h, w := s.keys[i], s.weights[i]
		if c := s.counts[i]; c > 1 {
			w *= 1 + float32(math.Log(float64(c)))
		}
		idx, _ := bits.Mul64(h, n) // uniform in [0, n) from the high bits
		if h&1 != 0 {              // sign from the low bit, independent of idx
			w = -w
		}
		v[1+idx] += w
		s.keys[i] = 0
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		v[0] = 1
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}

func isCJK(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r == 0x30FB: // katakana middle dot is punctuation
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3040 && r <= 0x30FF, r >= 0xAC00 && r <= 0xD7A3, r >= 0x3400 && r <= 0x4DBF:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// stem strips common English inflections crudely, so that prefer/prefers/preferred and
// meeting/meetings share a feature. It only touches plain a-z words and may modify w in place.
func stem(w []byte) []byte {
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	if len(w) <= 3 {
		return w
	}
	switch {
	case hasSuffix(w, "ies") && len(w) > 4:
		w = append(w[:len(w)-3], 'y')
	case hasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
	case w[len(w)-1] == 's':
		w = w[:len(w)-1]
	}
	switch n := len(w); {
	case hasSuffix(w, "ing") && n-3 >= 3 && hasVowel(w[:n-3]):
		w = undouble(w[:n-3])
	case hasSuffix(w, "ed") && n-2 >= 3 && hasVowel(w[:n-2]):
		w = undouble(w[:n-2])
	case hasSuffix(w, "ly") && n-2 >= 4:
		w = w[:n-2]
	}
	if len(w) > 3 && w[len(w)-1] == 'e' { // like/liked/liking → lik
		w = w[:len(w)-1]
	}
	return w
}

func hasSuffix(w []byte, suf string) bool {
	return len(w) >= len(suf) && string(w[len(w)-len(suf):]) == suf
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		switch c {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}

// undouble drops a doubled final consonant left by suffix stripping (preferr → prefer), except
// l, s, z, which English keeps doubled (call, pass, buzz).
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] {
		switch w[n-1] {
		case 'a', 'e', 'i', 'o', 'u', 'l', 's', 'z':
		default:
			return w[:n-1]
		}
	}
	return w
}

// isStopword reports function words that carry no topic. Negations are deliberately kept:
// "prefer" and "dont prefer" must not look alike.
func isStopword(w []byte) bool {
	switch string(w) {
	case "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
		"from", "as", "into", "about", "is", "are", "was", "were", "be", "been", "being", "am",
		"i", "im", "me", "my", "we", "our", "us", "you", "your", "he", "him", "his", "she", "her",
		"it", "its", "they", "them", "their", "this", "that", "these", "those",
		"do", "does", "did", "will", "would", "should", "can", "could", "shall",
		"so", "if", "then", "than", "there", "here", "where", "please", "just", "also", "very", "s", "t":
		return true
	}
	return false
}

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime64 }

func fnvBytes(h uint64, bs []byte) uint64 {
	for _, b := range bs {
		h = (h ^ uint64(b)) * fnvPrime64
	}
	return h
}

// fnvRune hashes r's UTF-8 encoding.
func fnvRune(h uint64, r rune) uint64 {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, b := range buf[:n] {
		h = (h ^ uint64(b)) * fnvPrime64
	}
	return h
}

// mix64 is the splitmix64 finaliser.
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
