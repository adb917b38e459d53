package retriever

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// DefaultTaskBucket is the KV bucket holding working memory.
const DefaultTaskBucket = "ENGRAM_TASKS"

// ErrTaskNotFound is returned when a task has no state (never set, deleted or expired).
var ErrTaskNotFound = errors.New("retriever: task state not found")

// TaskState is the working memory of one task: a JSON object the agent owns. A task
// belongs to a user when it was written with one (TaskStore.PutFor), else to the
// tenant; the two are different tasks even under one task id.
type TaskState struct {
	TaskID    string          `json:"task_id"`
	UserID    string          `json:"user_id,omitempty"`
	State     json.RawMessage `json:"state"`
	Revision  uint64          `json:"revision"`
	UpdatedAt time.Time       `json:"updated_at"`
	ExpiresAt time.Time       `json:"expires_at"`
}

// TaskStateReader reads working memory; context assembly uses it.
type TaskStateReader interface {
	// ContextTask reads the state a context for userID shows for taskID: the user's
	// own task, else the tenant's task of that id (shared state, as global memories
	// are), never another user's.
	ContextTask(ctx context.Context, tenant, userID, taskID string) (TaskState, error)
}

// TaskStoreConfig configures the working-memory bucket.
type TaskStoreConfig struct {
	Bucket   string        // default DefaultTaskBucket
	TTL      time.Duration // how long a task's state lives after its last write; default 24h
	MaxBytes int           // largest accepted state document; default 64 KiB
	Replicas int           // default 1; 3 on a cluster
	// Memory keeps the bucket in memory instead of on disk (tests, dev).
	Memory bool
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// TaskStore keeps per-task state in a NATS KV bucket. Keys are the encoded tenant,
// user (for a user's task) and task id: "<tenant>.<task>" for the tenant's tasks,
// "<tenant>.<user>.<task>" for a user's, so one tenant can never read or overwrite
// another's task, nor one user another's, whatever ids they choose, and a user's tasks
// are found by one key filter when the user is erased.
type TaskStore struct {
	kv       jetstream.KeyValue
	bucket   string
	stream   jetstream.Stream // the bucket's stream, for secure deletes
	secure   bool             // the stream allows message deletes (see NewTaskStore)
	ttl      time.Duration
	maxBytes int
	log      *slog.Logger
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
	// The bucket's stream is made here, as nats.go's CreateKeyValue would make it but
	// for DenyDelete: a KV stream denies message deletes, and erasure must delete a
	// user's states with JetStream's secure delete (overwriting their bytes in the
	// block files), not only purge them, which leaves the bytes until the block expires.
	dup := min(2*time.Minute, cfg.TTL)
	scfg := jetstream.StreamConfig{
		Name:              "KV_" + cfg.Bucket,
		Description:       "engram working memory: per-task state, expiring after the TTL",
		Subjects:          []string{"$KV." + cfg.Bucket + ".>"},
		MaxMsgsPerSubject: 1,
		MaxBytes:          -1,
		MaxAge:            cfg.TTL,
		// Room for the JSON plus NATS headers.
		MaxMsgSize:   int32(cfg.MaxBytes + 1024),
		Storage:      storage,
		Replicas:     cfg.Replicas,
		AllowRollup:  true,
		Duplicates:   dup,
		MaxMsgs:      -1,
		MaxConsumers: -1,
		AllowDirect:  true,
		Discard:      jetstream.DiscardNew,
	}
	// Two revisions per key: a put keeps the one it replaces, so PutFor can delete that
	// one securely instead of leaving JetStream to drop it (a drop leaves its bytes in
	// the block files until the block is compacted or expires).
	scfg.MaxMsgsPerSubject = 2
	secure := true
	stream, err := js.CreateOrUpdateStream(ctx, scfg)
	if err != nil {
		// A bucket made by an earlier engram denies deletes, and JetStream cannot
		// lift that: keep using it, purging on erasure (NewTaskStore's caller is told
		// through PurgeUser's report), until it is deleted and made again.
		old, serr := js.Stream(ctx, scfg.Name)
		if serr != nil || !old.CachedInfo().Config.DenyDelete {
			return nil, fmt.Errorf("creating the %s bucket: %w", cfg.Bucket, err)
		}
		scfg.DenyDelete, secure, scfg.MaxMsgsPerSubject = true, false, 1
		if stream, err = js.CreateOrUpdateStream(ctx, scfg); err != nil {
			return nil, fmt.Errorf("updating the %s bucket: %w", cfg.Bucket, err)
		}
	}
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("opening the %s bucket: %w", cfg.Bucket, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !secure {
		log.Warn("the working-memory bucket was made by an earlier engram and denies message deletes: erasing a user "+
			"purges their task states, whose bytes stay in the bucket's files until they expire; delete the bucket to make it again",
			"bucket", cfg.Bucket)
	}
	return &TaskStore{kv: kv, bucket: cfg.Bucket, stream: stream, secure: secure, ttl: cfg.TTL, maxBytes: cfg.MaxBytes, log: log}, nil
}

// MaxBytes is the largest state document accepted.
func (s *TaskStore) MaxBytes() int { return s.maxBytes }

func taskKey(tenant, userID, taskID string) (string, error) {
	if err := memory.CheckTenant(tenant); err != nil {
		return "", err
	}
	if err := streams.ValidateID("task_id", taskID); err != nil {
		return "", memory.Invalid("task_id", "%s", err.Error())
	}
	if userID == "" {
		return streams.EncodeToken(tenant) + "." + streams.EncodeToken(taskID), nil
	}
	if err := streams.ValidateID("user_id", userID); err != nil {
		return "", memory.Invalid("user_id", "%s", err.Error())
	}
	return streams.EncodeToken(tenant) + "." + streams.EncodeToken(userID) + "." + streams.EncodeToken(taskID), nil
}

// Put replaces the state of a task of the tenant with a JSON object.
func (s *TaskStore) Put(ctx context.Context, tenant, taskID string, state json.RawMessage) (TaskState, error) {
	return s.PutFor(ctx, tenant, "", taskID, state)
}

// PutFor replaces the state of a task of userID ("": of the tenant).
func (s *TaskStore) PutFor(ctx context.Context, tenant, userID, taskID string, state json.RawMessage) (TaskState, error) {
	key, err := taskKey(tenant, userID, taskID)
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
	var prev uint64
	if s.secure {
		switch e, err := s.kv.Get(ctx, key); {
		case err == nil:
			prev = e.Revision()
		case !errors.Is(err, jetstream.ErrKeyNotFound):
			return TaskState{}, fmt.Errorf("reading the state of task %s before replacing it: %w", taskID, err)
		}
	}
	rev, err := s.kv.Put(ctx, key, trimmed)
	if err != nil {
		return TaskState{}, fmt.Errorf("storing the state of task %s: %w", taskID, err)
	}
	if prev != 0 {
		// The replaced state is overwritten on disk now, not left to the TTL. Should this
		// fail, the new state is still stored; the old one goes with the key's next put
		// or its deletion (remove deletes every revision it finds).
		if err := s.stream.SecureDeleteMsg(ctx, prev); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			s.log.Warn("the replaced task state was not securely deleted", "task", taskID, "revision", prev, "err", err)
		}
	}
	now := time.Now().UTC()
	return TaskState{TaskID: taskID, UserID: userID, State: trimmed, Revision: rev, UpdatedAt: now, ExpiresAt: now.Add(s.ttl)}, nil
}

// Get reads the state of a task of the tenant; ErrTaskNotFound when there is none.
func (s *TaskStore) Get(ctx context.Context, tenant, taskID string) (TaskState, error) {
	return s.GetFor(ctx, tenant, "", taskID)
}

// ContextTask is the user's task, else the tenant's (TaskStateReader).
func (s *TaskStore) ContextTask(ctx context.Context, tenant, userID, taskID string) (TaskState, error) {
	if userID != "" {
		st, err := s.GetFor(ctx, tenant, userID, taskID)
		if !errors.Is(err, ErrTaskNotFound) {
			return st, err
		}
	}
	return s.GetFor(ctx, tenant, "", taskID)
}

// GetFor reads the state of a task of userID ("": of the tenant); ErrTaskNotFound
// when there is none.
func (s *TaskStore) GetFor(ctx context.Context, tenant, userID, taskID string) (TaskState, error) {
	key, err := taskKey(tenant, userID, taskID)
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
	return TaskState{TaskID: taskID, UserID: userID, State: json.RawMessage(e.Value()), Revision: e.Revision(),
		UpdatedAt: at, ExpiresAt: at.Add(s.ttl)}, nil
}

// Delete removes the state of a task of the tenant; deleting a missing task is not an
// error.
func (s *TaskStore) Delete(ctx context.Context, tenant, taskID string) error {
	return s.DeleteFor(ctx, tenant, "", taskID)
}

// DeleteFor removes the state of a task of userID ("": of the tenant).
func (s *TaskStore) DeleteFor(ctx context.Context, tenant, userID, taskID string) error {
	key, err := taskKey(tenant, userID, taskID)
	if err != nil {
		return err
	}
	if err := s.remove(ctx, key); err != nil {
		return fmt.Errorf("deleting the state of task %s: %w", taskID, err)
	}
	return nil
}

// remove deletes key's state: with a secure delete of its message where the bucket
// allows it, else with a purge (no tombstone history of the state is kept either way).
func (s *TaskStore) remove(ctx context.Context, key string) error {
	if !s.secure {
		if err := s.kv.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
		return nil
	}
	// Every revision the key still has (two at most, see NewTaskStore), newest first.
	subject := "$KV." + s.bucket + "." + key
	for range 3 {
		m, err := s.stream.GetLastMsgForSubject(ctx, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.stream.SecureDeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return err
		}
	}
	return nil
}

// TaskPurge reports what PurgeUser removed.
type TaskPurge struct {
	States int // task states deleted
	// Secure is false when the bucket denies message deletes (made by an earlier
	// engram): the states were purged and their bytes stay in the bucket's files until
	// they expire.
	Secure bool
}

// PurgeUser deletes the state of every task of userID (the user's erasure), with a
// secure delete that overwrites its bytes in the bucket's files. A state replaced
// earlier was securely deleted by the put that replaced it (PutFor).
func (s *TaskStore) PurgeUser(ctx context.Context, tenant, userID string) (TaskPurge, error) {
	rep := TaskPurge{Secure: s.secure}
	if err := memory.CheckTenant(tenant); err != nil {
		return rep, err
	}
	if err := streams.ValidateID("user_id", userID); err != nil {
		return rep, memory.Invalid("user_id", "%s", err.Error())
	}
	filter := streams.EncodeToken(tenant) + "." + streams.EncodeToken(userID) + ".>"
	// A state written while the keys were listed is caught by the next round.
	for range 3 {
		lister, err := s.kv.ListKeysFiltered(ctx, filter)
		if err != nil {
			return rep, fmt.Errorf("listing the task states of user %s: %w", userID, err)
		}
		var keys []string
		for k := range lister.Keys() {
			keys = append(keys, k)
		}
		_ = lister.Stop() // the lister stops itself once every key is listed; this only frees it
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			if err := s.remove(ctx, k); err != nil {
				return rep, fmt.Errorf("deleting the task states of user %s: %w", userID, err)
			}
			rep.States++
		}
	}
	return rep, nil
}
