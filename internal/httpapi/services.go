package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// What the edge needs of each service. Every method takes the tenant of the
// authenticated principal and, for writes, the actor to record.

// Turns is the write path (*ingest.Service).
type Turns interface {
	// IngestFrom validates, redacts and publishes a body of turns, decoding it as it
	// is read from r; mayActFor (nil: every user) refuses the whole body when a turn
	// is for another user.
	IngestFrom(ctx context.Context, tenant string, mayActFor func(userID string) bool, r io.Reader) (ingest.TurnsResult, error)
	// Remember publishes an explicit memory.
	Remember(ctx context.Context, tenant, actor string, req ingest.RememberRequest) (ingest.RememberResult, error)
	// MaxBodyBytes bounds a turns body.
	MaxBodyBytes() int64
}

// Memories is the manual operations on one memory (*lifecycle.Ops).
type Memories interface {
	Get(ctx context.Context, tenant string, id uuid.UUID) (memory.Detail, error)
	AsOf(ctx context.Context, tenant string, id uuid.UUID, at time.Time) (memory.Version, error)
	History(ctx context.Context, tenant string, id uuid.UUID) ([]memory.Version, error)
	Correct(ctx context.Context, tenant string, id uuid.UUID, c lifecycle.Correction, actor string) (memory.Memory, error)
	Deprecate(ctx context.Context, tenant string, id uuid.UUID, reason, actor string) (memory.Memory, error)
	Rollback(ctx context.Context, tenant string, id uuid.UUID, version int, reason, actor string) (memory.Memory, error)
	// List reads one page of the tenant's memories (GET /v1/memories).
	List(ctx context.Context, tenant string, q memory.ListQuery) (memory.MemoryPage, error)
}

// Lifecycle is deletion, restore, export and import (*lifecycle.Lifecycle).
type Lifecycle interface {
	DeleteMemory(ctx context.Context, tenant string, id uuid.UUID, actor string) (lifecycle.MemoryDeletion, error)
	Restore(ctx context.Context, tenant string, id uuid.UUID, actor string) (memory.Memory, error)
	DeleteUser(ctx context.Context, tenant, userID, actor string) (lifecycle.UserDeletion, error)
	// DeleteUserMemories forgets the user's memories, and with turns the user entirely.
	DeleteUserMemories(ctx context.Context, tenant, userID string, turns bool, actor string) (lifecycle.UserMemoriesDeletion, error)
	// Export writes the user's JSON Lines to w; once it has written, a failure can
	// only cut the body short.
	Export(ctx context.Context, tenant, userID string, w io.Writer, actor string) (lifecycle.ExportReport, error)
	Import(ctx context.Context, tenant, userID string, r io.Reader, actor string) (lifecycle.ImportReport, error)
}

// Retriever is the read path (*retriever.Retriever).
type Retriever interface {
	Search(ctx context.Context, tenant string, req retriever.SearchRequest) (retriever.SearchResponse, error)
	Context(ctx context.Context, tenant string, req retriever.ContextRequest) (retriever.ContextResponse, error)
	GetRetrieval(ctx context.Context, tenant string, id uuid.UUID) (retriever.Retrieval, error)
}

// Tasks is working memory (*retriever.TaskStore): a task of a user, or of the tenant
// when userID is "".
type Tasks interface {
	GetFor(ctx context.Context, tenant, userID, taskID string) (retriever.TaskState, error)
	PutFor(ctx context.Context, tenant, userID, taskID string, state json.RawMessage) (retriever.TaskState, error)
	DeleteFor(ctx context.Context, tenant, userID, taskID string) error
	// MaxBytes bounds a task state.
	MaxBytes() int
}

// Health checks what the node depends on.
type Health interface {
	// Check returns each dependency's state ("ok" when healthy) and whether all are.
	Check(ctx context.Context) (checks map[string]string, healthy bool)
}

// The services engram runs satisfy the interfaces.
var (
	_ Turns     = (*ingest.Service)(nil)
	_ Memories  = (*lifecycle.Ops)(nil)
	_ Lifecycle = (*lifecycle.Lifecycle)(nil)
	_ Retriever = (*retriever.Retriever)(nil)
	_ Tasks     = (*retriever.TaskStore)(nil)
)
