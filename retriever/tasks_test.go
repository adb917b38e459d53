package retriever_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams/natstest"
)

// storeHolds reports whether any file under dir holds s.
func storeHolds(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) { // a block rewritten meanwhile
			return nil
		}
		found = found || bytes.Contains(b, []byte(s))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestTaskStoreUsers: a user's task and the tenant's task of one id are two tasks; a
// context for a user shows the user's, else the tenant's, never another user's; and
// PurgeUser deletes only the user's, overwriting their bytes in the bucket's files.
func TestTaskStoreUsers(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	_, js := ns.Connect(t)
	ctx := testCtx(t)
	tasks, err := retriever.NewTaskStore(ctx, js, retriever.TaskStoreConfig{TTL: time.Hour, MaxBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	put := func(user, task, state string) {
		t.Helper()
		st, err := tasks.PutFor(ctx, "acme", user, task, json.RawMessage(state))
		if err != nil || st.UserID != user {
			t.Fatalf("put %s/%s: %+v %v", user, task, st, err)
		}
	}
	put("", "trip", `{"who":"the tenant"}`)
	put("alice", "trip", `{"who":"alice","code":"QX-ALICE-7731"}`)
	put("alice", "plan", `{"who":"alice","code":"QX-ALICE-PLAN"}`)
	put("bob", "trip", `{"who":"bob"}`)

	tests := []struct {
		name, user, task string
		context          bool
		want             string // "" for not found
	}{
		{name: "the user's own", user: "alice", task: "trip", want: `{"who":"alice","code":"QX-ALICE-7731"}`},
		{name: "the tenant's", user: "", task: "trip", want: `{"who":"the tenant"}`},
		{name: "another user's is not carol's", user: "carol", task: "trip", want: ""},
		{name: "context: the user's first", user: "bob", task: "trip", context: true, want: `{"who":"bob"}`},
		{name: "context: else the tenant's", user: "carol", task: "trip", context: true, want: `{"who":"the tenant"}`},
		{name: "context: never another user's", user: "carol", task: "plan", context: true, want: ""},
	}
	for _, tt := range tests {
		var st retriever.TaskState
		var err error
		if tt.context {
			st, err = tasks.ContextTask(ctx, "acme", tt.user, tt.task)
		} else {
			st, err = tasks.GetFor(ctx, "acme", tt.user, tt.task)
		}
		switch {
		case tt.want == "" && !errors.Is(err, retriever.ErrTaskNotFound):
			t.Errorf("%s: got %s, %v; want not found", tt.name, st.State, err)
		case tt.want != "" && (err != nil || string(st.State) != tt.want):
			t.Errorf("%s: got %s, %v; want %s", tt.name, st.State, err, tt.want)
		}
	}
	if _, err := tasks.PutFor(ctx, "acme", "a b", "trip", json.RawMessage(`{}`)); err == nil {
		t.Error("a user id with a space was accepted")
	}

	if !storeHolds(t, ns.StoreDir(), "QX-ALICE-7731") {
		t.Fatal("the state is not in the store files before the purge: the scan cannot tell")
	}
	p, err := tasks.PurgeUser(ctx, "acme", "alice")
	if err != nil || p.States != 2 || !p.Secure {
		t.Fatalf("purge: %+v %v; want 2 states, securely", p, err)
	}
	for _, task := range []string{"trip", "plan"} {
		if _, err := tasks.GetFor(ctx, "acme", "alice", task); !errors.Is(err, retriever.ErrTaskNotFound) {
			t.Errorf("alice's %s after the purge: %v", task, err)
		}
	}
	for _, user := range []string{"", "bob"} {
		if _, err := tasks.GetFor(ctx, "acme", user, "trip"); err != nil {
			t.Errorf("%q's trip after alice's purge: %v", user, err)
		}
	}
	for _, s := range []string{"QX-ALICE-7731", "QX-ALICE-PLAN"} {
		if storeHolds(t, ns.StoreDir(), s) {
			t.Errorf("%s is still in the bucket's files after the purge", s)
		}
	}
}

// TestTaskStoreLegacyBucket: a bucket made by nats.go's CreateKeyValue (an earlier
// engram) denies message deletes; the store keeps working on it and says the purge
// was not secure.
func TestTaskStoreLegacyBucket(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	_, js := ns.Connect(t)
	ctx := testCtx(t)
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "LEGACY", History: 1, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	tasks, err := retriever.NewTaskStore(ctx, js, retriever.TaskStoreConfig{Bucket: "LEGACY", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.PutFor(ctx, "acme", "alice", "trip", json.RawMessage(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	p, err := tasks.PurgeUser(ctx, "acme", "alice")
	if err != nil || p.States != 1 || p.Secure {
		t.Fatalf("purge: %+v %v; want 1 state, not secure", p, err)
	}
	if _, err := tasks.GetFor(ctx, "acme", "alice", "trip"); !errors.Is(err, retriever.ErrTaskNotFound) {
		t.Errorf("after the purge: %v", err)
	}
}
