package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams/natstest"
)

// TestTaskRoutesScopedToken: a token limited to users reaches only its users' tasks
// (user_id in the query); a task of the tenant (no user_id) and other users' tasks
// answer 403 naming user_id, and nothing of them changes.
func TestTaskRoutesScopedToken(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	tasks, err := retriever.NewTaskStore(testCtx(t), js, retriever.TaskStoreConfig{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{
		{Tenant: scopeTenant, Name: "full", SHA256: httpapi.HashToken(fullTok)},
		{Tenant: scopeTenant, Name: "scoped", SHA256: httpapi.HashToken(scopedTok), Users: []string{"alice", "bob"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Tokens: tokens, Tasks: tasks, Logger: quietLogger()})
	do := func(token, method, path, body string) (int, httpapi.ErrorBody, retriever.TaskState) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var eb httpapi.ErrorBody
		var st retriever.TaskState
		_ = json.Unmarshal(rec.Body.Bytes(), &eb)
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		return rec.Code, eb, st
	}
	// The full token writes a task of the tenant and one of carol, under one id.
	for _, c := range []struct{ path, body string }{
		{"/v1/tasks/trip/state", `{"who":"tenant"}`},
		{"/v1/tasks/trip/state?user_id=carol", `{"who":"carol"}`},
	} {
		if code, eb, _ := do(fullTok, "PUT", c.path, c.body); code != http.StatusOK {
			t.Fatalf("full PUT %s: %d %+v", c.path, code, eb)
		}
	}

	tests := []struct {
		name, token, method, path, body string
		status                          int
		field                           string // of the error
		state                           string // of a 200
	}{
		{"scoped writes alice's task", scopedTok, "PUT", "/v1/tasks/trip/state?user_id=alice", `{"who":"alice"}`, 200, "", `{"who":"alice"}`},
		{"scoped reads alice's task, not the tenant's", scopedTok, "GET", "/v1/tasks/trip/state?user_id=alice", "", 200, "", `{"who":"alice"}`},
		{"scoped may not read the tenant's task", scopedTok, "GET", "/v1/tasks/trip/state", "", 403, "user_id", ""},
		{"scoped may not write the tenant's task", scopedTok, "PUT", "/v1/tasks/trip/state", `{"who":"evil"}`, 403, "user_id", ""},
		{"scoped may not delete the tenant's task", scopedTok, "DELETE", "/v1/tasks/trip/state", "", 403, "user_id", ""},
		{"scoped may not read carol's task", scopedTok, "GET", "/v1/tasks/trip/state?user_id=carol", "", 403, "user_id", ""},
		{"scoped may not write carol's task", scopedTok, "PUT", "/v1/tasks/trip/state?user_id=carol", `{"who":"evil"}`, 403, "user_id", ""},
		{"scoped may not delete carol's task", scopedTok, "DELETE", "/v1/tasks/trip/state?user_id=carol", "", 403, "user_id", ""},
		{"a bad user id is a 400", fullTok, "GET", "/v1/tasks/trip/state?user_id=a%20b", "", 400, "user_id", ""},
		{"bob has no trip", scopedTok, "GET", "/v1/tasks/trip/state?user_id=bob", "", 404, "", ""},
		{"the full token reads the tenant's task unchanged", fullTok, "GET", "/v1/tasks/trip/state", "", 200, "", `{"who":"tenant"}`},
		{"the full token reads carol's task unchanged", fullTok, "GET", "/v1/tasks/trip/state?user_id=carol", "", 200, "", `{"who":"carol"}`},
		{"scoped deletes alice's task", scopedTok, "DELETE", "/v1/tasks/trip/state?user_id=alice", "", 204, "", ""},
		{"alice's task is gone", fullTok, "GET", "/v1/tasks/trip/state?user_id=alice", "", 404, "", ""},
		{"the tenant's task stays", fullTok, "GET", "/v1/tasks/trip/state", "", 200, "", `{"who":"tenant"}`},
	}
	for _, tt := range tests { // in order: later cases read what earlier ones wrote
		code, eb, st := do(tt.token, tt.method, tt.path, tt.body)
		if code != tt.status {
			t.Errorf("%s: status %d %+v, want %d", tt.name, code, eb, tt.status)
			continue
		}
		if tt.field != "" && eb.Error.Field != tt.field {
			t.Errorf("%s: error field %q (%s), want %q", tt.name, eb.Error.Field, eb.Error.Message, tt.field)
		}
		if tt.state != "" && string(st.State) != tt.state {
			t.Errorf("%s: state %s, want %s", tt.name, st.State, tt.state)
		}
	}
}
