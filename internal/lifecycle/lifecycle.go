package lifecycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
)

// TaskStates is what user deletion needs of working memory (retriever.TaskStore fits).
type TaskStates interface {
	// Delete removes the state of a task of the tenant.
	Delete(ctx context.Context, tenant, taskID string) error
	// PurgeUser deletes the state of every task of the user, overwriting its bytes.
	PurgeUser(ctx context.Context, tenant, userID string) (retriever.TaskPurge, error)
}

// Compactor rewrites the tables an erasure deleted from, so the deleted rows' bytes
// leave the table files (memory.Store fits, on a pool of the owner role or one with
// MAINTAIN). It returns memory.ErrCannotCompact when the role may not.
type Compactor interface {
	CompactErased(ctx context.Context) (memory.CompactReport, error)
}

// Lifecycle deletes, restores, exports and imports memories and users. Hard deletion
// is for the right to erasure: the rows go, and only the audit log keeps a trace (ids
// and content hashes, never content).
type Lifecycle struct {
	store   *memory.Store
	js      jetstream.JetStream // nil: streams are not cleaned
	tasks   TaskStates          // nil: no working memory to delete
	compact Compactor           // nil: deleted rows stay in the table files until a VACUUM
	log     *slog.Logger
}

// SetCompactor makes DeleteUser finish with c's compaction of the tables it deleted from.
func (l *Lifecycle) SetCompactor(c Compactor) { l.compact = c }

// NewLifecycle makes the lifecycle operations. js (for purging the user's messages
// from TURNS, CANDIDATES and DLQ) and tasks (working memory) may be nil, in which
// case DeleteUser leaves those alone and says so in its report.
func NewLifecycle(store *memory.Store, js jetstream.JetStream, tasks TaskStates, logger *slog.Logger) *Lifecycle {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Lifecycle{store: store, js: js, tasks: tasks, log: logger.With("component", "lifecycle")}
}

// ErrNotArchived is returned by Restore for a memory that is not archived.
var ErrNotArchived = errors.New("memory is not archived")

// Restore brings an archived memory back to active (a version with change "restore").
// Its last use becomes now, so the next run does not archive it again at once.
func (l *Lifecycle) Restore(ctx context.Context, tenant string, id uuid.UUID, actor string) (memory.Memory, error) {
	var out memory.Memory
	err := l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		cur, err := tx.Get(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.LockOwner(ctx, memoryLockKey(cur)); err != nil {
			return err
		}
		if cur, err = tx.Get(ctx, id); err != nil {
			return err
		}
		if cur.Status != memory.StatusArchived {
			return fmt.Errorf("restoring memory %s (%s): %w", id, cur.Status, ErrNotArchived)
		}
		out, err = tx.RestoreFromArchive(ctx, id, actorOr(actor), module, "restored from the archive")
		return err
	})
	return out, err
}

func actorOr(a string) string {
	if a == "" {
		return "api"
	}
	return a
}

// MemoryDeletion reports a hard deletion of one memory.
type MemoryDeletion struct {
	MemoryID   uuid.UUID `json:"memory_id"`
	Versions   int       `json:"versions"`
	Lineage    int       `json:"lineage"`
	Embeddings int       `json:"embeddings"`
}

// DeleteMemory hard-deletes one memory with its versions, lineage and embeddings (the
// foreign keys cascade) and its ledger entries, and writes an audit row with the
// content hash. Lineage of other memories that names it as a source is kept: it is
// their provenance, and it holds only the id.
func (l *Lifecycle) DeleteMemory(ctx context.Context, tenant string, id uuid.UUID, actor string) (MemoryDeletion, error) {
	out := MemoryDeletion{MemoryID: id}
	err := l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		cur, err := tx.Get(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.LockOwner(ctx, memoryLockKey(cur)); err != nil {
			return err
		}
		if cur, err = tx.Get(ctx, id); err != nil {
			return err
		}
		// The source turns (ids only) stay in the audit entry: a rebuild from the turn
		// log must not derive the deleted memory from them again.
		lin, err := tx.LineageOf(ctx, id)
		if err != nil {
			return err
		}
		turns := []string{}
		for _, l := range lin {
			if l.Kind == memory.LineageTurn {
				turns = append(turns, l.SourceID)
			}
		}
		n, err := tx.DeleteMemory(ctx, id)
		if err != nil {
			return err
		}
		out.Versions, out.Lineage, out.Embeddings = n.Versions, n.Lineage, n.Embeddings
		return tx.Audit(ctx, memory.AuditEntry{Action: "delete", Actor: actorOr(actor), Module: module, MemoryID: id,
			Subject: cur.UserID, Version: cur.Version, ContentHash: memory.ContentHash(cur.Content),
			Details: map[string]any{"versions": out.Versions, "lineage": out.Lineage, "embeddings": out.Embeddings,
				"source_turn_ids": turns}})
	})
	return out, err
}

// UserDeletion reports what DeleteUser removed.
type UserDeletion struct {
	Tenant           string `json:"tenant"`
	UserID           string `json:"user_id"`
	Memories         int    `json:"memories"`
	Versions         int    `json:"versions"`
	Lineage          int    `json:"lineage"`
	ForeignLineage   int    `json:"foreign_lineage"` // other memories' links to the user's turns and memories
	Embeddings       int    `json:"embeddings"`
	Ledger           int    `json:"ledger"` // resolver ledger entries of the user's memories
	Turns            int    `json:"turns"`
	Retrievals       int    `json:"retrievals"`
	SessionSummaries int    `json:"session_summaries"`
	TaskStates       int    `json:"task_states"`      // tenant tasks named by the user's turns whose working memory was deleted
	UserTaskStates   int    `json:"user_task_states"` // the user's own tasks' working memory, securely deleted
	TurnMessages     int    `json:"turn_messages"`
	CandidateMsgs    int    `json:"candidate_messages"`
	DeadLetters      int    `json:"dead_letters"`
	// Compacted lists the tables rewritten after the deletion (and how long it took),
	// so the deleted rows are gone from the table files too.
	Compacted      []string `json:"compacted,omitempty"`
	CompactSeconds float64  `json:"compact_seconds,omitempty"`
	// Skipped lists the stores that could not be cleaned because they are not
	// configured (streams, working memory) or do not exist yet (tables).
	Skipped []string `json:"skipped,omitempty"`
}

// DeleteUser deletes everything engram holds about one user of a tenant: memories with
// their versions, lineage, embeddings and ledger entries; turns; retrieval records and
// session summaries; working memory of the tasks the user's turns name; the user's
// messages in TURNS and CANDIDATES and their dead letters; and the user's rows in the
// consolidation registry. The audit log keeps a delete_user entry (and earlier
// entries: ids and content hashes, no content).
//
// Streams are purged before and after the database: a message still in flight when
// the first purge ran can be stored by a worker meanwhile, and the second purge
// removes what was published in between. A worker that already fetched a message
// before the first purge may still write it afterwards; deleting again removes it.
//
// Erasure reaches the disk. Stream messages are deleted one by one with JetStream's
// secure delete, which overwrites the record with random bytes in the block file (and
// rewrites the file), where a purge only marks records deleted and leaves their bytes
// in the block until a compaction happens to rewrite it. Secure deletion was chosen
// over crypto-shredding (a per-user key for payloads) because it needs no key store
// beside the data and no encryption on the ingest path, and it leaves nothing that a
// lost key could reopen. Then the compactor rewrites the tables (VACUUM FULL; see
// memory.Store.CompactErased), so the rows' bytes leave the table files. What remains
// until it is recycled: PostgreSQL's WAL (the segments that recorded the rows, until
// later checkpoints recycle them; and any WAL archive or replica), JetStream's
// replication log on a clustered stream until its next snapshot, the freed blocks of
// the rewritten files in the filesystem, which are not overwritten, and the working
// memory's earlier revisions in the KV bucket's files: the user's task states (and the
// tenant's tasks their turns name) are securely deleted like stream messages, but the
// bucket keeps one revision per key and drops an overwritten one without overwriting
// it, so an earlier revision's bytes leave the disk when its block is compacted or
// expires with the TTL (24 h by default). A bucket made by an earlier engram denies
// message deletes: there states are purged, and the report lists
// "task_states_secure_delete" as skipped.
func (l *Lifecycle) DeleteUser(ctx context.Context, tenant, userID, actor string) (UserDeletion, error) {
	rep := UserDeletion{Tenant: tenant, UserID: userID}
	if err := checkUser(tenant, userID); err != nil {
		return rep, err
	}
	if err := l.purgeStreams(ctx, tenant, userID, &rep); err != nil {
		return rep, err
	}
	var taskIDs []string
	err := l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		rep = UserDeletion{Tenant: tenant, UserID: userID, TurnMessages: rep.TurnMessages,
			CandidateMsgs: rep.CandidateMsgs, DeadLetters: rep.DeadLetters, Skipped: rep.Skipped}
		var err error
		taskIDs, err = deleteUserRows(ctx, tx, userID, &rep)
		if err != nil {
			return err
		}
		return tx.Audit(ctx, memory.AuditEntry{Action: "delete_user", Actor: actorOr(actor), Module: module,
			Subject: userID, Details: map[string]any{"memories": rep.Memories, "versions": rep.Versions,
				"turns": rep.Turns, "retrievals": rep.Retrievals, "session_summaries": rep.SessionSummaries}})
	})
	if err != nil {
		return rep, fmt.Errorf("deleting user %s: %w", userID, err)
	}
	if l.tasks == nil {
		rep.Skipped = append(rep.Skipped, "task_states")
	} else {
		for _, t := range taskIDs {
			if err := l.tasks.Delete(ctx, tenant, t); err != nil {
				return rep, fmt.Errorf("deleting user %s: working memory of task %s: %w", userID, t, err)
			}
			rep.TaskStates++
		}
		p, err := l.tasks.PurgeUser(ctx, tenant, userID)
		if err != nil {
			return rep, fmt.Errorf("deleting user %s: %w", userID, err)
		}
		rep.UserTaskStates = p.States
		if !p.Secure {
			rep.Skipped = append(rep.Skipped, "task_states_secure_delete")
		}
	}
	var again UserDeletion
	if err := l.purgeStreams(ctx, tenant, userID, &again); err != nil {
		return rep, err
	}
	rep.TurnMessages += again.TurnMessages
	rep.CandidateMsgs += again.CandidateMsgs
	rep.DeadLetters += again.DeadLetters
	switch {
	case l.compact == nil:
		rep.Skipped = append(rep.Skipped, "compaction")
	default:
		c, err := l.compact.CompactErased(ctx)
		if errors.Is(err, memory.ErrCannotCompact) {
			l.log.Warn("the deleted rows stay in the table files until a VACUUM (FULL) by the owner: "+
				"the database role may not vacuum (set ENGRAM_MIGRATE_DATABASE_URL, or grant MAINTAIN on PostgreSQL 17)",
				"tenant", tenant, "user", userID)
			rep.Skipped = append(rep.Skipped, "compaction")
		} else if err != nil {
			return rep, fmt.Errorf("deleting user %s: %w", userID, err)
		}
		rep.Compacted, rep.CompactSeconds = c.Tables, c.Seconds
		if len(c.Held) > 0 {
			// Never claim what did not happen: the report says compaction is incomplete.
			l.log.Warn("deleted rows stay in these table files until the next VACUUM (FULL): an older transaction could still see them",
				"tenant", tenant, "user", userID, "held_rows", c.Held)
			rep.Skipped = append(rep.Skipped, "compaction")
		}
	}
	l.log.Info("user deleted", "tenant", tenant, "user", userID, "memories", rep.Memories, "turns", rep.Turns,
		"compact_seconds", rep.CompactSeconds)
	return rep, nil
}

// deleteUserRows deletes the user's rows in the caller's transaction, under the
// owner's lock, and returns the task ids the user's turns named.
func deleteUserRows(ctx context.Context, tx *memory.Tx, userID string, rep *UserDeletion) ([]string, error) {
	if err := tx.LockOwner(ctx, userID); err != nil {
		return nil, err
	}
	n, err := tx.DeleteUserRows(ctx, userID)
	rep.Memories, rep.Versions, rep.Lineage, rep.ForeignLineage, rep.Embeddings = n.Memories, n.Versions, n.Lineage, n.ForeignLineage, n.Embeddings
	rep.Ledger, rep.Turns, rep.Retrievals, rep.SessionSummaries = n.Ledger, n.Turns, n.Retrievals, n.SessionSummaries
	rep.Skipped = append(rep.Skipped, n.MissingTables...)
	if err != nil {
		return nil, err
	}
	return n.TaskIDs, nil
}

// purgeStreams removes the user's messages from TURNS and CANDIDATES (purge by
// subject) and the dead letters whose original subject is one of those subjects.
func (l *Lifecycle) purgeStreams(ctx context.Context, tenant, userID string, rep *UserDeletion) error {
	if l.js == nil {
		rep.Skipped = append(rep.Skipped, "streams")
		return nil
	}
	turnSubj, err := streams.TurnSubject(tenant, userID)
	if err != nil {
		return fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	candSubj, err := streams.CandidateSubject(tenant, userID)
	if err != nil {
		return fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	for _, p := range []struct {
		stream, subject string
		n               *int
	}{{streams.TurnsStream, turnSubj, &rep.TurnMessages}, {streams.CandidatesStream, candSubj, &rep.CandidateMsgs}} {
		n, err := purgeSubject(ctx, l.js, p.stream, p.subject)
		if err != nil {
			return fmt.Errorf("deleting user %s: %w", userID, err)
		}
		*p.n += n
	}
	n, err := deleteDeadLetters(ctx, l.js, tenant, map[string]bool{turnSubj: true, candSubj: true})
	if err != nil {
		return fmt.Errorf("deleting user %s: %w", userID, err)
	}
	rep.DeadLetters += n
	return nil
}

// purgeSubject securely deletes every message of one subject of a stream (see
// DeleteUser: a purge would leave the payloads in the block files) and returns how
// many it deleted.
func purgeSubject(ctx context.Context, js jetstream.JetStream, stream, subject string) (int, error) {
	return secureDeleteSubject(ctx, js, stream, subject)
}

// secureDeleteSubject overwrites and deletes every message of subject in stream.
func secureDeleteSubject(ctx context.Context, js jetstream.JetStream, stream, subject string) (int, error) {
	s, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("opening stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", stream, err)
	}
	if info.State.Subjects[subject] == 0 {
		return 0, nil
	}
	seqs, err := sequences(ctx, js, stream, []string{subject}, nil)
	if err != nil {
		return 0, err
	}
	for _, seq := range seqs {
		if err := s.SecureDeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return 0, fmt.Errorf("deleting message %d of %s from stream %s: %w", seq, subject, stream, err)
		}
	}
	return len(seqs), nil
}

// sequences lists the stream sequences of the messages on filters that keep accepts
// (nil: all). It reads headers only, through an ordered consumer that consumes nothing.
func sequences(ctx context.Context, js jetstream.JetStream, stream string, filters []string, keep func(jetstream.Msg) bool) ([]uint64, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    filters,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		HeadersOnly:       true,
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", stream, err)
	}
	defer func() {
		if ci := cons.CachedInfo(); ci != nil {
			_ = js.DeleteConsumer(context.WithoutCancel(ctx), stream, ci.Name)
		}
	}()
	var seqs []uint64
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return nil, fmt.Errorf("reading stream %s: %w", stream, err)
		}
		n, done := 0, false
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("reading stream %s: %w", stream, err)
			}
			if keep == nil || keep(m) {
				seqs = append(seqs, meta.Sequence.Stream)
			}
			if meta.NumPending == 0 {
				done = true
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, fmt.Errorf("reading stream %s: %w", stream, err)
		}
		if done || n == 0 {
			break
		}
	}
	return seqs, nil
}

// deleteDeadLetters securely deletes the tenant's dead letters (and those whose tenant
// could not be told) whose original subject is in subjects. It reads headers only,
// through an ordered consumer that consumes nothing.
func deleteDeadLetters(ctx context.Context, js jetstream.JetStream, tenant string, subjects map[string]bool) (int, error) {
	s, err := js.Stream(ctx, streams.DLQStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("opening stream %s: %w", streams.DLQStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", streams.DLQStream, err)
	}
	if info.State.Msgs == 0 {
		return 0, nil
	}
	// "_" is where dead letters go when their tenant could not be determined.
	seqs, err := sequences(ctx, js, streams.DLQStream,
		[]string{streams.DLQSubjectPrefix + "*." + streams.EncodeToken(tenant), streams.DLQSubjectPrefix + "*._"},
		func(m jetstream.Msg) bool { return subjects[m.Headers().Get(streams.HeaderDLQSubject)] })
	if err != nil {
		return 0, err
	}
	for _, seq := range seqs {
		// Secure deletion overwrites the payload in the store, not just the index.
		if err := s.SecureDeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return 0, fmt.Errorf("deleting dead letter %d: %w", seq, err)
		}
	}
	return len(seqs), nil
}

// Export format: JSON Lines. The first line is a header, then one line per memory
// (with its versions, lineage and embeddings, so an import needs no re-embedding) and
// one per turn, and a closing "end" line with the counts: an export without it was
// cut short.
const (
	exportFormat  = "engram-export"
	exportVersion = 1
)

// ExportRecord is one line of an export.
type ExportRecord struct {
	Kind string `json:"kind"` // header | memory | turn | end

	// header
	Format     string    `json:"format,omitempty"`
	Version    int       `json:"version,omitempty"`
	Tenant     string    `json:"tenant,omitempty"`
	UserID     string    `json:"user_id,omitempty"`
	ExportedAt time.Time `json:"exported_at,omitzero"`

	// memory
	Memory     *memory.Memory    `json:"memory,omitempty"`
	Versions   []memory.Version  `json:"versions,omitempty"`
	Lineage    []memory.Lineage  `json:"lineage,omitempty"`
	Embeddings []ExportEmbedding `json:"embeddings,omitempty"`

	// turn
	Turn *ExportTurn `json:"turn,omitempty"`

	// end
	Memories *int `json:"memories,omitempty"`
	Turns    *int `json:"turns,omitempty"`
}

// ExportEmbedding is a stored vector.
type ExportEmbedding struct {
	Model  string    `json:"model"`
	Vector []float32 `json:"vector"`
}

// ExportTurn is a stored turn; Deleted turns (retention) carry no content, only the
// hash.
type ExportTurn struct {
	memory.Turn
	ContentHash      []byte     `json:"content_hash"`
	ContentDeletedAt *time.Time `json:"content_deleted_at,omitempty"`
	// Forgotten: a memory from this turn was deleted on request; the context never
	// offers the turn's words in its place.
	Forgotten bool `json:"forgotten,omitempty"`
}

// ExportReport counts what an export wrote.
type ExportReport struct {
	Memories int `json:"memories"`
	Turns    int `json:"turns"`
}

// exportBatch is how many memories or turns are read per query.
const exportBatch = 500

// Export writes the user's memories and turns to w as JSON Lines, from one consistent
// snapshot (a repeatable-read, read-only transaction with the tenant set), and
// records an "export" audit entry.
func (l *Lifecycle) Export(ctx context.Context, tenant, userID string, w io.Writer, actor string) (ExportReport, error) {
	var rep ExportReport
	if err := checkUser(tenant, userID); err != nil {
		return rep, err
	}
	// One consistent snapshot: repeatable read, read-only, tenant set by the store.
	snapshot := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := l.store.InTxWith(ctx, tenant, snapshot, func(tx *memory.Tx) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ExportRecord{Kind: "header", Format: exportFormat, Version: exportVersion, Tenant: tenant,
			UserID: userID, ExportedAt: time.Now().UTC()}); err != nil {
			return err
		}
		var err error
		if rep.Memories, err = exportMemories(ctx, tx, userID, enc); err != nil {
			return err
		}
		if rep.Turns, err = exportTurns(ctx, tx, userID, enc); err != nil {
			return err
		}
		if err := enc.Encode(ExportRecord{Kind: "end", Memories: &rep.Memories, Turns: &rep.Turns}); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return rep, fmt.Errorf("exporting user %s: %w", userID, err)
	}
	err = l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		return tx.Audit(ctx, memory.AuditEntry{Action: "export", Actor: actorOr(actor), Module: module, Subject: userID,
			Details: map[string]any{"memories": rep.Memories, "turns": rep.Turns}})
	})
	return rep, err
}

func exportMemories(ctx context.Context, tx *memory.Tx, userID string, enc *json.Encoder) (int, error) {
	n := 0
	last := uuid.Nil
	for {
		ms, err := tx.ExportMemories(ctx, userID, last, exportBatch)
		if err != nil {
			return n, err
		}
		if len(ms) == 0 {
			return n, nil
		}
		for i := range ms {
			rec := ExportRecord{Kind: "memory", Memory: &ms[i].Memory, Versions: ms[i].Versions, Lineage: ms[i].Lineage}
			for _, e := range ms[i].Embeddings {
				rec.Embeddings = append(rec.Embeddings, ExportEmbedding{Model: e.Model, Vector: e.Vector})
			}
			if err := enc.Encode(rec); err != nil {
				return n, err
			}
			n++
		}
		last = ms[len(ms)-1].Memory.ID
	}
}

func exportTurns(ctx context.Context, tx *memory.Tx, userID string, enc *json.Encoder) (int, error) {
	n := 0
	last := ""
	for {
		ts, err := tx.ExportTurns(ctx, userID, last, exportBatch)
		if err != nil {
			return n, err
		}
		if len(ts) == 0 {
			return n, nil
		}
		for _, t := range ts {
			rec := ExportRecord{Kind: "turn", Turn: &ExportTurn{Turn: t.Turn, ContentHash: t.ContentHash, ContentDeletedAt: t.ContentDeletedAt,
				Forgotten: t.Forgotten}}
			if err := enc.Encode(rec); err != nil {
				return n, err
			}
			n++
		}
		last = ts[len(ts)-1].Turn.TurnID
	}
}

// ImportReport counts what an import did. Skipped records already existed (an import
// is idempotent: ids are kept and existing rows are left alone).
type ImportReport struct {
	Memories        int `json:"memories"`
	MemoriesSkipped int `json:"memories_skipped"`
	Turns           int `json:"turns"`
	TurnsSkipped    int `json:"turns_skipped"`
}

// ErrBadExport marks input that is not an engram export, or a record of one that the
// store cannot hold; the error names the line and the field.
var ErrBadExport = errors.New("not a valid engram export")

// maxExportLine bounds one line of an import (a memory with its history and vectors).
const maxExportLine = 16 << 20

// importBatch is how many records one import transaction writes.
const importBatch = 200

// Import reads an export (see Export) into tenant under userID, whatever tenant and
// user it was exported from. Memory ids, versions, lineage, embeddings and turn ids
// are kept; a memory or turn that exists already is skipped, so importing twice
// changes nothing.
//
// The input is read twice. The first pass checks every line (framing, UTF-8, JSON,
// the end line's counts, and each record by the store's rules) and writes nothing, so
// bad input is refused with ErrBadExport before any row exists. The second pass
// writes in transactions of importBatch records, which keeps transactions short for
// large users; if the database fails midway, importing the same file again completes
// the import. A seekable r (a file) is read twice; anything else (a request body) is
// copied to a temporary file during the first pass, so memory use does not grow with
// the input.
func (l *Lifecycle) Import(ctx context.Context, tenant, userID string, r io.Reader, actor string) (ImportReport, error) {
	var rep ImportReport
	if err := checkUser(tenant, userID); err != nil {
		return rep, err
	}
	src, err := newReplay(r)
	if err != nil {
		return rep, fmt.Errorf("importing user %s: %w", userID, err)
	}
	defer src.close()
	if err := scanExport(ctx, src.first, userID, nil); err != nil {
		return rep, fmt.Errorf("importing user %s: %w", userID, err)
	}
	again, err := src.again()
	if err != nil {
		return rep, fmt.Errorf("importing user %s: %w", userID, err)
	}

	var batch []ExportRecord
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
			var b ImportReport
			for i := range batch {
				if err := importRecord(ctx, tx, userID, &batch[i], actorOr(actor), &b); err != nil {
					return err
				}
			}
			rep.Memories += b.Memories
			rep.MemoriesSkipped += b.MemoriesSkipped
			rep.Turns += b.Turns
			rep.TurnsSkipped += b.TurnsSkipped
			return nil
		})
		batch = batch[:0]
		return err
	}
	// The second pass checks again, so a file changed between the passes is refused from
	// the changed line on rather than stored unchecked.
	err = scanExport(ctx, again, userID, func(rec *ExportRecord) error {
		batch = append(batch, *rec)
		if len(batch) < importBatch {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return rep, fmt.Errorf("importing user %s (%d memories and %d turns written; importing the file again completes it): %w",
			userID, rep.Memories, rep.Turns, err)
	}
	err = l.store.InTx(ctx, tenant, func(tx *memory.Tx) error {
		return tx.Audit(ctx, memory.AuditEntry{Action: "import", Actor: actorOr(actor), Module: module, Subject: userID,
			Details: map[string]any{"memories": rep.Memories, "memories_skipped": rep.MemoriesSkipped,
				"turns": rep.Turns, "turns_skipped": rep.TurnsSkipped}})
	})
	return rep, err
}

// replay gives the bytes of an import twice: first while the first pass reads them,
// then again for the second.
type replay struct {
	first io.Reader
	again func() (io.Reader, error)
	close func()
}

// newReplay re-reads a seekable r from where it stands, and otherwise copies what the
// first pass reads to a temporary file (a request body cannot be read twice, and
// holding it in memory would let one import take as much as its size limit).
func newReplay(r io.Reader) (*replay, error) {
	if s, ok := r.(io.ReadSeeker); ok {
		if start, err := s.Seek(0, io.SeekCurrent); err == nil { // pipes and sockets fail here
			return &replay{first: s, close: func() {},
				again: func() (io.Reader, error) {
					if _, err := s.Seek(start, io.SeekStart); err != nil {
						return nil, fmt.Errorf("rewinding the input: %w", err)
					}
					return s, nil
				}}, nil
		}
	}
	f, err := os.CreateTemp("", "engram-import-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary copy of the input: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	return &replay{first: io.TeeReader(r, bw),
		close: func() {
			_ = f.Close()
			_ = os.Remove(f.Name())
		},
		again: func() (io.Reader, error) {
			if err := bw.Flush(); err != nil {
				return nil, fmt.Errorf("writing the temporary copy of the input: %w", err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("rewinding the temporary copy of the input: %w", err)
			}
			return f, nil
		}}, nil
}

// scanExport reads an export line by line and checks it: a header first, an end line
// last whose counts match the records, valid UTF-8 and JSON on every line, and every
// memory and turn by the store's rules as it would be imported under userID. It calls
// fn (when not nil) with each memory and turn record, in order, and stops at fn's
// first error. Bad input is an error wrapping ErrBadExport that names the line and,
// for a record, the field.
func scanExport(ctx context.Context, r io.Reader, userID string, fn func(*ExportRecord) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	line := 0
	sawHeader, sawEnd := false, false
	var endMem, endTurns, memories, turns int
	bad := func(format string, args ...any) error {
		return fmt.Errorf("line %d: %w: %s", line, ErrBadExport, fmt.Sprintf(format, args...))
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := readLine(br, maxExportLine)
		if errors.Is(err, io.EOF) && len(raw) == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: %w", line+1, err)
		}
		line++
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		// encoding/json would silently turn bad bytes and lone surrogates into U+FFFD,
		// and the stored text would differ from the export's.
		if !utf8.Valid(raw) {
			return bad("not valid UTF-8 (at byte %d)", invalidUTF8At(raw))
		}
		var rec ExportRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return bad("%v", err)
		}
		if i := loneSurrogate(raw); i >= 0 {
			return bad("%s at byte %d is a lone UTF-16 surrogate, not a character", raw[i:i+6], i)
		}
		switch {
		case !sawHeader:
			if rec.Kind != "header" || rec.Format != exportFormat {
				return fmt.Errorf("%w: the first line is not an %s header", ErrBadExport, exportFormat)
			}
			if rec.Version != exportVersion {
				return fmt.Errorf("%w: version %d (this engram reads %d)", ErrBadExport, rec.Version, exportVersion)
			}
			sawHeader = true
			continue
		case sawEnd:
			return bad("data after the end line")
		}
		switch rec.Kind {
		case "end":
			sawEnd = true
			if rec.Memories != nil {
				endMem = *rec.Memories
			}
			if rec.Turns != nil {
				endTurns = *rec.Turns
			}
			continue
		case "memory":
			if rec.Memory == nil {
				return bad("memory: missing")
			}
			if fe := memory.CheckMemoryExport(toMemoryExport(&rec, userID)); fe != nil {
				return bad("%s", fe.Reason())
			}
			memories++
		case "turn":
			if rec.Turn == nil {
				return bad("turn: missing")
			}
			if fe := memory.CheckTurnExport(toTurnExport(&rec, userID)); fe != nil {
				return bad("%s", fe.Reason())
			}
			turns++
		default:
			return bad("unknown record %q", rec.Kind)
		}
		if fn != nil {
			if err := fn(&rec); err != nil {
				return err
			}
		}
	}
	switch {
	case !sawHeader:
		return fmt.Errorf("%w: empty input", ErrBadExport)
	case !sawEnd:
		return fmt.Errorf("%w: no end line, the export was cut short (nothing was imported)", ErrBadExport)
	case memories != endMem:
		return fmt.Errorf("%w: %d memories read, the end line says %d", ErrBadExport, memories, endMem)
	case turns != endTurns:
		return fmt.Errorf("%w: %d turns read, the end line says %d", ErrBadExport, turns, endTurns)
	}
	return nil
}

// invalidUTF8At is the offset of the first byte of b that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate is the offset of the first \u escape in the JSON text raw that is a
// UTF-16 surrogate without its pair (-1 if none). raw must be valid JSON: a backslash
// then only occurs in strings.
func loneSurrogate(raw []byte) int {
	hex4 := func(i int) rune {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return -1
		}
		var v rune
		for _, c := range raw[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v<<4 | rune(c-'A'+10)
			default:
				return -1
			}
		}
		return v
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		switch v := hex4(i); {
		case v >= 0xD800 && v < 0xDC00:
			if low := hex4(i + 6); low < 0xDC00 || low >= 0xE000 {
				return i
			}
			i += 11
		case v >= 0xDC00 && v < 0xE000:
			return i
		case v >= 0:
			i += 5
		default:
			i++ // a one-character escape such as \\ or \"
		}
	}
	return -1
}

// readLine reads one line of at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > limit {
			return nil, fmt.Errorf("%w: a line is longer than %d bytes", ErrBadExport, limit)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

// toMemoryExport is a memory record as it is imported under userID.
func toMemoryExport(rec *ExportRecord, userID string) memory.MemoryExport {
	m := memory.MemoryExport{Memory: *rec.Memory, Versions: rec.Versions, Lineage: rec.Lineage}
	m.Memory.UserID = userID
	for _, e := range rec.Embeddings {
		m.Embeddings = append(m.Embeddings, memory.Embedding{Model: e.Model, Vector: e.Vector})
	}
	return m
}

// toTurnExport is a turn record as it is imported under userID.
func toTurnExport(rec *ExportRecord, userID string) memory.TurnExport {
	t := memory.TurnExport{Turn: rec.Turn.Turn, ContentHash: rec.Turn.ContentHash, ContentDeletedAt: rec.Turn.ContentDeletedAt,
		Forgotten: rec.Turn.Forgotten}
	t.Turn.UserID = userID
	return t
}

// importRecord writes one memory (with its versions, lineage and embeddings) or turn
// under userID, unless it exists already.
func importRecord(ctx context.Context, tx *memory.Tx, userID string, rec *ExportRecord, actor string, rep *ImportReport) error {
	if rec.Kind == "turn" {
		added, err := tx.ImportTurn(ctx, toTurnExport(rec, userID))
		if err != nil {
			return err
		}
		if added {
			rep.Turns++
		} else {
			rep.TurnsSkipped++
		}
		return nil
	}
	m := toMemoryExport(rec, userID)
	added, err := tx.ImportMemory(ctx, m)
	if err != nil {
		return err
	}
	if !added {
		rep.MemoriesSkipped++
		return nil
	}
	rep.Memories++
	return tx.Audit(ctx, memory.AuditEntry{Action: "import", Actor: actor, Module: module, MemoryID: m.Memory.ID,
		Subject: userID, Version: max(m.Memory.Version, 1), ContentHash: memory.ContentHash(m.Memory.Content)})
}

// checkUser validates the tenant and user id a user-wide operation names.
func checkUser(tenant, userID string) error {
	if err := memory.CheckTenant(tenant); err != nil {
		return err
	}
	if err := streams.ValidateID("user_id", userID); err != nil {
		return fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	return nil
}
