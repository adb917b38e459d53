package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// A turn id names one turn: resending it with the same content is an idempotent
// duplicate, with different content a conflict (409), and the first content accepted
// stays. Where the truth is:
//
//   - Within the stream's duplicate window (10 minutes by default) JetStream is the
//     arbiter: the Nats-Msg-Id stays tenant:turn_id (not a content hash, which would
//     let two contents of one id both into the stream), so of two requests in flight
//     at once exactly one is stored and the other's PubAck is a duplicate carrying the
//     sequence of the message that won. Ingest reads that message back and compares
//     contents: equal is a duplicate, different a conflict.
//   - After the window the stored row is the truth: before publishing, ingest looks up
//     the content hashes of the batch's turn ids in PostgreSQL (the same hash the row
//     keeps, memory.ContentHash, even after retention deleted the content). A stored
//     turn is answered without publishing it again.
//   - A turn past both (published more than a window ago and still not stored, or
//     published straight onto NATS) is caught by memory's InsertTurn, which refuses a
//     different content for a stored id (ErrTurnConflict, dead-lettered), so the stored
//     turn never changes and nothing is extracted from the other content.
//
// Contents are compared after redaction, which is what is published and stored.

// CodeConflict is the error code of a turn whose id is already stored with
// different content.
const CodeConflict = "conflict"

// storedLookupTimeout bounds the look-up of stored turns.
const storedLookupTimeout = 2 * time.Second

// StoredTurns reads the content hashes of stored turns (*memory.Store).
type StoredTurns interface {
	TurnContentHashes(ctx context.Context, tenant string, turnIDs []string) (map[string][]byte, error)
}

// StreamReader reads a stream's messages back (jetstream.JetStream).
type StreamReader interface {
	Stream(ctx context.Context, name string) (jetstream.Stream, error)
}

func conflictError(path, turnID string) *memory.FieldError {
	return &memory.FieldError{Code: CodeConflict, Field: joinPath(path, "turn_id"),
		Message: fmt.Sprintf("%q already stored with different content", turnID)}
}

// storedHashes looks up which of the valid decoded turns are already stored. A failed lookup (PostgreSQL
// away) returns nil: ingest keeps accepting, and the stream and InsertTurn checks
// still hold.
func (s *Service) storedHashes(ctx context.Context, tenant string, decoded []TurnResult, valid []int) map[string][]byte {
	if s.stored == nil || len(valid) == 0 {
		return nil
	}
	ids := make([]string, len(valid))
	for j, i := range valid {
		ids[j] = decoded[i].Turn.TurnID
	}
	// Bounded: a PostgreSQL that hangs must not hold up ingest, which only needs NATS.
	lctx, cancel := context.WithTimeout(ctx, storedLookupTimeout)
	defer cancel()
	hashes, err := s.stored.TurnContentHashes(lctx, tenant, ids)
	if err != nil {
		s.log.WarnContext(ctx, "looking up stored turns; checking resent turn ids against the stream only", "tenant", tenant, "err", err)
		return nil
	}
	return hashes
}

// originalDiffers reports whether the message a duplicate PubAck points at holds a
// different content than ev. It answers false when the message cannot be read (no
// reader, or gone), which keeps the duplicate as it was.
func (s *Service) originalDiffers(ctx context.Context, pr streams.PublishResult, ev streams.TurnEvent) bool {
	if s.streams == nil || pr.Stream == "" || pr.Seq == 0 {
		return false
	}
	st, err := s.streams.Stream(ctx, pr.Stream)
	if err != nil {
		s.log.WarnContext(ctx, "reading back a duplicate turn", "turn_id", ev.Turn.TurnID, "err", err)
		return false
	}
	// In a cluster the winning message may not be applied yet when its duplicate is
	// acknowledged: wait a little for it.
	var m *jetstream.RawStreamMsg
	for delay := 20 * time.Millisecond; ; delay *= 2 {
		m, err = st.GetMsg(ctx, pr.Seq)
		if err == nil || !errors.Is(err, jetstream.ErrMsgNotFound) || delay > 200*time.Millisecond {
			break
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
	}
	if err != nil {
		s.log.WarnContext(ctx, "reading back a duplicate turn", "turn_id", ev.Turn.TurnID, "seq", pr.Seq, "err", err)
		return false
	}
	orig, err := streams.DecodeTurnEvent(m.Data)
	if err != nil || orig.Tenant != ev.Tenant || orig.Turn.TurnID != ev.Turn.TurnID {
		// Not the message the id names (purged and reused sequence): nothing to compare.
		return false
	}
	return !bytes.Equal(memory.ContentHash(orig.Turn.Content), memory.ContentHash(ev.Turn.Content))
}
