package retriever

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// DefaultTaskBucket is the KV bucket holding working memory.
const DefaultTaskBucket = "ENGRAM_TASKS"

// ErrTaskNotFound is returned when a task has no state (never set, deleted or expired).
var ErrTaskNotFound = errors.New("retriever: task state not found")

// TaskState is the working memory of one task: a JSON object the agent owns.
type TaskState struct {
	TaskID    string          `json:"task_id"`
	State     json.RawMessage `json:"state"`
	Revision  uint64          `json:"revision"`
	UpdatedAt time.Time       `json:"updated_at"`
	ExpiresAt time.Time       `json:"expires_at"`
}

// TaskStateReader reads working memory; context assembly uses it.
type TaskStateReader interface {
	Get(ctx context.Context, tenant, taskID string) (TaskState, error)
}

// TaskStoreConfig configures the working-memory bucket.
type TaskStoreConfig struct {
	Bucket   string        // default DefaultTaskBucket
	TTL      time.Duration // how long a task's state lives after its last write; default 24h
	MaxBytes int           // largest accepted state document; default 64 KiB
	Replicas int           // default 1; 3 on a cluster
	// Memory keeps the bucket in memory instead of on disk (tests, dev).
	Memory bool
}

// TaskStore keeps per-task state in a NATS KV bucket. Keys are the encoded tenant and
// task id, so one tenant can never read or overwrite another's task, whatever ids they
// choose.
type TaskStore struct {
	kv       jetstream.KeyValue
	ttl      time.Duration
	maxBytes int
}

// NewTaskStore creates (or updates) the bucket and returns a store on it.
func NewTaskStore(ctx context.Context, js jetstream.JetStream, cfg TaskStoreConfig) (*TaskStore, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultTaskBucket
	}
	if cfg.TTL == 0 {
		cfg.TTL = 24 * time.Hour
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 64 << 10
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.TTL < time.Second || cfg.MaxBytes < 2 {
		return nil, fmt.Errorf("task store: ttl %v and max bytes %d are too small", cfg.TTL, cfg.MaxBytes)
	}
	storage := jetstream.FileStorage
	if cfg.Memory {
		storage = jetstream.MemoryStorage
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      cfg.Bucket,
		Description: "engram working memory: per-task state, expiring after the TTL",
		History:     1,
		TTL:         cfg.TTL,
		// Room for the JSON plus NATS headers.
		MaxValueSize: int32(cfg.MaxBytes + 1024),
		Storage:      storage,
		Replicas:     cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the %s bucket: %w", cfg.Bucket, err)
	}
	return &TaskStore{kv: kv, ttl: cfg.TTL, maxBytes: cfg.MaxBytes}, nil
}

// MaxBytes is the largest state document accepted.
func (s *TaskStore) MaxBytes() int { return s.maxBytes }

func taskKey(tenant, taskID string) (string, error) {
	if err := memory.CheckTenant(tenant); err != nil {
		return "", err
	}
	if err := streams.ValidateID("task_id", taskID); err != nil {
		return "", memory.Invalid("task_id", "%s", err.Error())
	}
	return streams.EncodeToken(tenant) + "." + streams.EncodeToken(taskID), nil
}

// Put replaces a task's state with a JSON object.
func (s *TaskStore) Put(ctx context.Context, tenant, taskID string, state json.RawMessage) (TaskState, error) {
	key, err := taskKey(tenant, taskID)
	if err != nil {
		return TaskState{}, err
	}
	if len(state) > s.maxBytes {
		return TaskState{}, fieldErr("state", "larger than %d bytes", s.maxBytes)
	}
	trimmed := bytes.TrimSpace(state)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return TaskState{}, fieldErr("state", "must be a JSON object")
	}
	rev, err := s.kv.Put(ctx, key, trimmed)
	if err != nil {
		return TaskState{}, fmt.Errorf("storing the state of task %s: %w", taskID, err)
	}
	now := time.Now().UTC()
	return TaskState{TaskID: taskID, State: trimmed, Revision: rev, UpdatedAt: now, ExpiresAt: now.Add(s.ttl)}, nil
}

// Get reads a task's state; ErrTaskNotFound when there is none.
func (s *TaskStore) Get(ctx context.Context, tenant, taskID string) (TaskState, error) {
	key, err := taskKey(tenant, taskID)
	if err != nil {
		return TaskState{}, err
	}
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return TaskState{}, fmt.Errorf("task %s: %w", taskID, ErrTaskNotFound)
	}
	if err != nil {
		return TaskState{}, fmt.Errorf("reading the state of task %s: %w", taskID, err)
	}
	at := e.Created().UTC()
	return TaskState{TaskID: taskID, State: json.RawMessage(e.Value()), Revision: e.Revision(),
		UpdatedAt: at, ExpiresAt: at.Add(s.ttl)}, nil
}

// Delete removes a task's state; deleting a missing task is not an error.
func (s *TaskStore) Delete(ctx context.Context, tenant, taskID string) error {
	key, err := taskKey(tenant, taskID)
	if err != nil {
		return err
	}
	// Purge rather than Delete: no tombstone history of the state is kept.
	if err := s.kv.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("deleting the state of task %s: %w", taskID, err)
	}
	return nil
}
