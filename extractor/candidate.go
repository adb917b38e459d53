package extractor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"

	"github.com/engramhq/engram/memory"
)

// CandidateID is the deterministic id of the index-th candidate extracted from the given
// source turns (in the order given) by one extractor version, so that a redelivered batch
// republishes the same ids and JetStream and PostgreSQL can drop the duplicates.
// Fields are length-prefixed so that no two different inputs share a preimage.
func CandidateID(sourceTurnIDs []string, index int, extractorName, extractorVersion string) string {
	h := sha256.New()
	writeField(h, strconv.Itoa(len(sourceTurnIDs)))
	for _, id := range sourceTurnIDs {
		writeField(h, id)
	}
	writeField(h, strconv.Itoa(index))
	writeField(h, extractorName)
	writeField(h, extractorVersion)
	return "cand_" + hex.EncodeToString(h.Sum(nil))[:32]
}

// AssignIDs sets each candidate's ID from its source turns, its position in cands and its
// extractor, as the pipeline does once extraction and trust are done.
func AssignIDs(cands []memory.Candidate) {
	for i := range cands {
		c := &cands[i]
		c.ID = CandidateID(c.SourceTurnIDs, i, c.Extractor, c.ExtractorVersion)
	}
}

func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
