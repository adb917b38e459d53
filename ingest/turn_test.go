package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// turnJSON returns a valid turn with the given fields changed; a nil value
// removes the field.
func turnJSON(t testing.TB, changes map[string]any) string {
	t.Helper()
	m := map[string]any{
		"turn_id":     "t-1",
		"user_id":     "u_42",
		"agent_id":    "support-bot",
		"session_id":  "s:2025-06-01",
		"role":        "user",
		"content":     "I prefer meetings after 10am.",
		"occurred_at": "2025-06-01T11:59:00Z",
	}
	for k, v := range changes {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal turn: %v", err)
	}
	return string(b)
}

func TestDecodeSingleTurn(t *testing.T) {
	t.Parallel()
	ts := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339Nano) }
	tests := []struct {
		name      string
		body      string
		limits    Limits
		wantCode  string // "" means a valid turn
		wantField string
		check     func(t *testing.T, got memory.Turn)
	}{
		{name: "good turn", body: turnJSON(t, map[string]any{"task_id": "task-9", "metadata": map[string]any{"lang": "en", "n": json.Number("12345678901234567890")}}),
			check: func(t *testing.T, got memory.Turn) {
				want := memory.Turn{TurnID: "t-1", UserID: "u_42", AgentID: "support-bot", SessionID: "s:2025-06-01",
					TaskID: "task-9", Role: memory.RoleUser, Content: "I prefer meetings after 10am.",
					OccurredAt: time.Date(2025, 6, 1, 11, 59, 0, 0, time.UTC), ReceivedAt: testNow}
				md := got.Metadata
				got.Metadata = nil
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("got  %+v\nwant %+v", got, want)
				}
				if md["lang"] != "en" || md["n"] != json.Number("12345678901234567890") {
					t.Errorf("metadata %#v: want lang and an exact big number", md)
				}
			}},
		{name: "speaker name into metadata", body: turnJSON(t, map[string]any{"name": "Ana Sousa", "metadata": map[string]any{"lang": "pt"}}),
			check: func(t *testing.T, got memory.Turn) {
				if got.Metadata[MetadataName] != "Ana Sousa" || got.Metadata["lang"] != "pt" {
					t.Errorf("metadata %#v: want the name beside lang", got.Metadata)
				}
			}},
		{name: "name too long", body: turnJSON(t, map[string]any{"name": strings.Repeat("n", 65)}), wantCode: memory.CodeInvalidField, wantField: "name"},
		{name: "name with a control character", body: turnJSON(t, map[string]any{"name": "Ana\nSousa"}), wantCode: memory.CodeInvalidField, wantField: "name"},
		{name: "name not a string", body: turnJSON(t, map[string]any{"name": 7}), wantCode: memory.CodeInvalidField, wantField: "name"},
		{name: "defaults", body: turnJSON(t, map[string]any{"turn_id": nil, "agent_id": nil, "occurred_at": nil}),
			check: func(t *testing.T, got memory.Turn) {
				id, err := uuid.Parse(got.TurnID)
				if err != nil || id.Version() != 7 {
					t.Errorf("turn id %q: want a UUIDv7 (%v)", got.TurnID, err)
				}
				if !got.OccurredAt.Equal(testNow) || got.AgentID != defaultAgentID {
					t.Errorf("occurred_at %v agent %q: want now and %q", got.OccurredAt, got.AgentID, defaultAgentID)
				}
			}},
		{name: "empty strings mean absent", body: turnJSON(t, map[string]any{"turn_id": "", "agent_id": "", "task_id": "", "occurred_at": ""}),
			check: func(t *testing.T, got memory.Turn) {
				if got.TurnID == "" || got.AgentID != defaultAgentID || got.TaskID != "" || !got.OccurredAt.Equal(testNow) {
					t.Errorf("got %+v", got)
				}
			}},
		{name: "nulls mean absent", body: turnJSON(t, map[string]any{"task_id": json.RawMessage("null"), "tool": json.RawMessage("null"), "metadata": json.RawMessage("null")})},
		{name: "offset converted to UTC", body: turnJSON(t, map[string]any{"occurred_at": "2025-06-01T19:30:00.5+08:00"}),
			check: func(t *testing.T, got memory.Turn) {
				if want := time.Date(2025, 6, 1, 11, 30, 0, 5e8, time.UTC); !got.OccurredAt.Equal(want) || got.OccurredAt.Location() != time.UTC {
					t.Errorf("occurred_at %v, want %v", got.OccurredAt, want)
				}
			}},
		{name: "backfilled history", body: turnJSON(t, map[string]any{"occurred_at": "2019-03-04T05:06:07Z"})},
		{name: "future within skew", body: turnJSON(t, map[string]any{"occurred_at": ts(4 * time.Minute)})},
		{name: "future beyond skew", body: turnJSON(t, map[string]any{"occurred_at": ts(6 * time.Minute)}), wantCode: memory.CodeInvalidField, wantField: "occurred_at"},
		{name: "custom skew", body: turnJSON(t, map[string]any{"occurred_at": ts(4 * time.Minute)}), limits: Limits{MaxFutureSkew: time.Minute}, wantCode: memory.CodeInvalidField, wantField: "occurred_at"},
		{name: "before 1970", body: turnJSON(t, map[string]any{"occurred_at": "1969-12-31T23:59:59Z"}), wantCode: memory.CodeInvalidField, wantField: "occurred_at"},
		{name: "not RFC 3339", body: turnJSON(t, map[string]any{"occurred_at": "yesterday"}), wantCode: memory.CodeInvalidField, wantField: "occurred_at"},
		{name: "occurred_at number", body: turnJSON(t, map[string]any{"occurred_at": 1717243200}), wantCode: memory.CodeInvalidField, wantField: "occurred_at"},
		{name: "missing user_id", body: turnJSON(t, map[string]any{"user_id": nil}), wantCode: memory.CodeMissingField, wantField: "user_id"},
		{name: "empty user_id", body: turnJSON(t, map[string]any{"user_id": ""}), wantCode: memory.CodeMissingField, wantField: "user_id"},
		{name: "user_id not a string", body: turnJSON(t, map[string]any{"user_id": 42}), wantCode: memory.CodeInvalidField, wantField: "user_id"},
		{name: "missing session_id", body: turnJSON(t, map[string]any{"session_id": nil}), wantCode: memory.CodeMissingField, wantField: "session_id"},
		{name: "bad id chars", body: turnJSON(t, map[string]any{"user_id": "bob smith"}), wantCode: memory.CodeInvalidField, wantField: "user_id"},
		{name: "slash in agent_id", body: turnJSON(t, map[string]any{"agent_id": "a/b"}), wantCode: memory.CodeInvalidField, wantField: "agent_id"},
		{name: "unicode in session_id", body: turnJSON(t, map[string]any{"session_id": "会话1"}), wantCode: memory.CodeInvalidField, wantField: "session_id"},
		{name: "bad turn_id", body: turnJSON(t, map[string]any{"turn_id": "t*1"}), wantCode: memory.CodeInvalidField, wantField: "turn_id"},
		{name: "bad task_id", body: turnJSON(t, map[string]any{"task_id": "x y"}), wantCode: memory.CodeInvalidField, wantField: "task_id"},
		{name: "id of 128 chars", body: turnJSON(t, map[string]any{"user_id": strings.Repeat("a", 128)})},
		{name: "id of 129 chars", body: turnJSON(t, map[string]any{"user_id": strings.Repeat("a", 129)}), wantCode: memory.CodeInvalidField, wantField: "user_id"},
		{name: "content at limit", body: turnJSON(t, map[string]any{"content": strings.Repeat("x", 32<<10)})},
		{name: "content over limit", body: turnJSON(t, map[string]any{"content": strings.Repeat("x", 32<<10+1)}), wantCode: memory.CodeTooLarge, wantField: "content"},
		{name: "custom content limit", body: turnJSON(t, map[string]any{"content": "eleven char"}), limits: Limits{MaxContentBytes: 10}, wantCode: memory.CodeTooLarge, wantField: "content"},
		{name: "invalid UTF-8", body: strings.Replace(turnJSON(t, nil), "10am", "10\xffam", 1), wantCode: memory.CodeInvalidField, wantField: "content"},
		{name: "NUL in content", body: turnJSON(t, map[string]any{"content": "a\x00b"}), wantCode: memory.CodeInvalidField, wantField: "content"},
		{name: "blank content", body: turnJSON(t, map[string]any{"content": " \n\t "}), wantCode: memory.CodeMissingField, wantField: "content"},
		{name: "missing content", body: turnJSON(t, map[string]any{"content": nil}), wantCode: memory.CodeMissingField, wantField: "content"},
		{name: "unknown field tenant", body: turnJSON(t, map[string]any{"tenant": "acme"}), wantCode: memory.CodeUnknownField, wantField: "tenant"},
		{name: "field names are exact", body: turnJSON(t, map[string]any{"user_id": nil, "User_ID": "u1"}), wantCode: memory.CodeUnknownField, wantField: "User_ID"},
		{name: "duplicate field", body: `{"user_id":"a","user_id":"b","session_id":"s","role":"user","content":"hi"}`, wantCode: memory.CodeInvalidField, wantField: "user_id"},
		{name: "bad role", body: turnJSON(t, map[string]any{"role": "bot"}), wantCode: memory.CodeInvalidField, wantField: "role"},
		{name: "missing role", body: turnJSON(t, map[string]any{"role": nil}), wantCode: memory.CodeMissingField, wantField: "role"},
		{name: "system role", body: turnJSON(t, map[string]any{"role": "system"})},
		{name: "tool turn without content", body: turnJSON(t, map[string]any{"role": "tool", "content": "", "tool": map[string]any{"name": "calendar.create", "status": "failure", "error": "409 conflict"}}),
			check: func(t *testing.T, got memory.Turn) {
				if got.Tool == nil || *got.Tool != (memory.ToolCall{Name: "calendar.create", Status: "failure", Error: "409 conflict"}) {
					t.Errorf("tool %+v", got.Tool)
				}
			}},
		{name: "tool role needs content or tool", body: turnJSON(t, map[string]any{"role": "tool", "content": ""}), wantCode: memory.CodeMissingField, wantField: "content"},
		{name: "bad tool status", body: turnJSON(t, map[string]any{"role": "tool", "tool": map[string]any{"name": "search", "status": "ok"}}), wantCode: memory.CodeInvalidField, wantField: "tool.status"},
		{name: "missing tool status", body: turnJSON(t, map[string]any{"role": "tool", "tool": map[string]any{"name": "search"}}), wantCode: memory.CodeMissingField, wantField: "tool.status"},
		{name: "missing tool name", body: turnJSON(t, map[string]any{"role": "tool", "tool": map[string]any{"status": "success"}}), wantCode: memory.CodeMissingField, wantField: "tool.name"},
		{name: "unknown tool field", body: turnJSON(t, map[string]any{"role": "tool", "tool": map[string]any{"name": "x", "status": "success", "code": 1}}), wantCode: memory.CodeUnknownField, wantField: "tool.code"},
		{name: "tool not an object", body: turnJSON(t, map[string]any{"tool": "search"}), wantCode: memory.CodeInvalidField, wantField: "tool"},
		{name: "metadata not an object", body: turnJSON(t, map[string]any{"metadata": []int{1}}), wantCode: memory.CodeInvalidField, wantField: "metadata"},
		{name: "metadata too large", body: turnJSON(t, map[string]any{"metadata": map[string]any{"x": strings.Repeat("y", 8<<10)}}), wantCode: memory.CodeTooLarge, wantField: "metadata"},
		{name: "NUL in metadata", body: turnJSON(t, map[string]any{"metadata": map[string]any{"a": []any{"b\x00"}}}), wantCode: memory.CodeInvalidField, wantField: "metadata.a[0]"},
		{name: "NUL in a metadata key", body: `{"user_id":"u","session_id":"s","role":"user","content":"hi","metadata":{"a\u0000":1}}`, wantCode: memory.CodeInvalidField, wantField: "metadata.a\x00"},
		{name: "metadata number out of range", body: `{"user_id":"u","session_id":"s","role":"user","content":"hi","metadata":{"score":1e999999}}`, wantCode: memory.CodeInvalidField, wantField: "metadata.score"},
		{name: "metadata negative number out of range", body: `{"user_id":"u","session_id":"s","role":"user","content":"hi","metadata":{"x":{"y":[-2e308]}}}`, wantCode: memory.CodeInvalidField, wantField: "metadata.x.y[0]"},
		{name: "metadata large integer kept", body: `{"user_id":"u","session_id":"s","role":"user","content":"hi","metadata":{"id":123456789012345678901234567890}}`},
		{name: "metadata too deep", body: `{"user_id":"u","session_id":"s","role":"user","content":"hi","metadata":{"a":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}}`, wantCode: memory.CodeInvalidField, wantField: "metadata.a" + strings.Repeat("[0]", memory.MaxMetadataDepth-1)},
		{name: "escaped NUL in content", body: `{"user_id":"u","session_id":"s","role":"user","content":"a\u0000b"}`, wantCode: memory.CodeInvalidField, wantField: "content"},
		{name: "NUL in tool error", body: turnJSON(t, map[string]any{"role": "tool", "tool": map[string]any{"name": "s", "status": "failure", "error": "e\x00"}}), wantCode: memory.CodeInvalidField, wantField: "tool.error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			limits := tt.limits
			if limits == (Limits{}) {
				limits = DefaultLimits()
			}
			res, err := DecodeTurns([]byte(tt.body), limits, testNow)
			if err != nil {
				t.Fatalf("whole-request error %v", err)
			}
			if len(res) != 1 || res[0].Index != 0 {
				t.Fatalf("want one result at index 0, got %+v", res)
			}
			r := res[0]
			if tt.wantCode == "" {
				if r.Err != nil {
					t.Fatalf("unexpected error %v", r.Err)
				}
				assertValidTurn(t, r.Turn, limits.withDefaults(), testNow)
				if tt.check != nil {
					tt.check(t, r.Turn)
				}
				return
			}
			if r.Err == nil || r.Err.Code != tt.wantCode || r.Err.Field != tt.wantField {
				t.Fatalf("error %v, want %s at %q", r.Err, tt.wantCode, tt.wantField)
			}
			if r.Turn.UserID != "" || r.Turn.TurnID != "" {
				t.Fatalf("failed turn carries data: %+v", r.Turn)
			}
		})
	}
}

func TestDecodeBatch(t *testing.T) {
	t.Parallel()
	good := turnJSON(t, nil)
	many := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(good+",", n), ",") + "]" }
	type perTurn struct {
		code, field string // "" for a valid turn
	}
	tests := []struct {
		name      string
		body      string
		limits    Limits
		wantCode  string // whole-request error
		wantField string
		want      []perTurn
	}{
		{name: "envelope", body: `{"turns":[` + good + `,` + good + `]}`, want: []perTurn{{}, {}}},
		{name: "one bad turn among good ones", body: `{"turns":[` + good + `,` + turnJSON(t, map[string]any{"tenant": "evil"}) + `,` + good + `,` + turnJSON(t, map[string]any{"user_id": nil}) + `]}`,
			want: []perTurn{{}, {memory.CodeUnknownField, "turns[1].tenant"}, {}, {memory.CodeMissingField, "turns[3].user_id"}}},
		{name: "array form", body: "[" + good + "," + turnJSON(t, map[string]any{"role": "robot"}) + "]",
			want: []perTurn{{}, {memory.CodeInvalidField, "[1].role"}}},
		{name: "element not an object", body: `{"turns":[` + good + `,42,null]}`,
			want: []perTurn{{}, {memory.CodeInvalidField, "turns[1]"}, {memory.CodeInvalidField, "turns[2]"}}},
		{name: "nested tool path", body: `{"turns":[` + turnJSON(t, map[string]any{"tool": map[string]any{"name": "x", "status": "maybe"}}) + `]}`,
			want: []perTurn{{memory.CodeInvalidField, "turns[0].tool.status"}}},
		{name: "batch of 1000", body: many(1000), want: make([]perTurn, 1000)},
		{name: "batch over 1000", body: many(1001), wantCode: memory.CodeTooLarge},
		{name: "batch over custom limit", body: `{"turns":` + many(3) + `}`, limits: Limits{MaxBatch: 2}, wantCode: memory.CodeTooLarge, wantField: "turns"},
		{name: "empty batch", body: `{"turns":[]}`, wantCode: memory.CodeInvalidField, wantField: "turns"},
		{name: "empty array", body: `[]`, wantCode: memory.CodeInvalidField},
		{name: "turns not an array", body: `{"turns":{}}`, wantCode: memory.CodeInvalidField, wantField: "turns"},
		{name: "envelope with tenant", body: `{"tenant":"acme","turns":[` + good + `]}`, wantCode: memory.CodeUnknownField, wantField: "tenant"},
		{name: "duplicate turns", body: `{"turns":[` + good + `],"turns":[]}`, wantCode: memory.CodeInvalidField, wantField: "turns"},
		{name: "malformed JSON", body: `{"turns":[{"user_id":"a",}]}`, wantCode: memory.CodeMalformedJSON},
		{name: "truncated", body: good[:len(good)/2], wantCode: memory.CodeMalformedJSON},
		{name: "trailing data", body: good + ` {}`, wantCode: memory.CodeMalformedJSON},
		{name: "empty body", body: " \n", wantCode: memory.CodeMalformedJSON},
		{name: "scalar body", body: `"hello"`, wantCode: memory.CodeMalformedJSON},
		{name: "body too large", body: good, limits: Limits{MaxBodyBytes: 64}, wantCode: memory.CodeTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := DecodeTurns([]byte(tt.body), tt.limits, testNow)
			if tt.wantCode != "" {
				if err == nil || err.Code != tt.wantCode || err.Field != tt.wantField || res != nil {
					t.Fatalf("got %v (%d results), want whole-request %s at %q", err, len(res), tt.wantCode, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatalf("whole-request error %v", err)
			}
			if len(res) != len(tt.want) {
				t.Fatalf("%d results, want %d", len(res), len(tt.want))
			}
			ids := map[string]bool{}
			for i, r := range res {
				w := tt.want[i]
				if r.Index != i {
					t.Fatalf("result %d has index %d", i, r.Index)
				}
				if w.code == "" {
					if r.Err != nil {
						t.Fatalf("turn %d: unexpected %v", i, r.Err)
					}
					ids[r.Turn.TurnID] = true
					continue
				}
				if r.Err == nil || r.Err.Code != w.code || r.Err.Field != w.field {
					t.Fatalf("turn %d: error %v, want %s at %q", i, r.Err, w.code, w.field)
				}
			}
		})
	}
}

func TestGeneratedIDsAreUnique(t *testing.T) {
	t.Parallel()
	noID := turnJSON(t, map[string]any{"turn_id": nil})
	res, err := DecodeTurns([]byte("["+noID+","+noID+","+noID+"]"), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range res {
		if r.Err != nil || seen[r.Turn.TurnID] {
			t.Fatalf("result %+v: want a fresh id", r)
		}
		seen[r.Turn.TurnID] = true
	}
}

func TestFieldErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  *memory.FieldError
		want string
	}{
		{&memory.FieldError{Code: memory.CodeMissingField, Field: "turns[3].user_id", Message: "user_id is required"}, "missing_field: turns[3].user_id: user_id is required"},
		{&memory.FieldError{Code: memory.CodeMalformedJSON, Message: "body is empty"}, "malformed_json: body is empty"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"u_42", true}, {"alice@example.com", true}, {"ns:user.1-2", true},
		{"0190a8a0-7b9c-7def-8abc-0123456789ab", true},
		{"", false}, {"a b", false}, {"a/b", false}, {"ä", false}, {"a\x00", false},
		{strings.Repeat("z", 128), true}, {strings.Repeat("z", 129), false},
	} {
		if got := memory.ValidID(tt.id, 128); got != tt.want {
			t.Errorf("memory.ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

// assertValidTurn checks, independently of the decoder, every rule a turn that
// DecodeTurns accepted must satisfy.
func assertValidTurn(t *testing.T, turn memory.Turn, l Limits, now time.Time) {
	t.Helper()
	// A generated turn id is a 36-character UUID whatever MaxIDLen says.
	if !memory.ValidID(turn.TurnID, max(l.MaxIDLen, 36)) {
		t.Fatalf("turn_id %q invalid", turn.TurnID)
	}
	for name, id := range map[string]string{"user_id": turn.UserID,
		"agent_id": turn.AgentID, "session_id": turn.SessionID} {
		if !memory.ValidID(id, l.MaxIDLen) {
			t.Fatalf("%s %q invalid", name, id)
		}
	}
	if turn.TaskID != "" && !memory.ValidID(turn.TaskID, l.MaxIDLen) {
		t.Fatalf("task_id %q invalid", turn.TaskID)
	}
	if turn.Tenant != "" {
		t.Fatalf("tenant %q set from the body", turn.Tenant)
	}
	if !turn.Role.Valid() {
		t.Fatalf("role %q invalid", turn.Role)
	}
	if !utf8.ValidString(turn.Content) || len(turn.Content) > l.MaxContentBytes || strings.ContainsRune(turn.Content, 0) {
		t.Fatalf("content invalid (%d bytes)", len(turn.Content))
	}
	if strings.TrimSpace(turn.Content) == "" && (turn.Role != memory.RoleTool || turn.Tool == nil) {
		t.Fatalf("empty content for a %s turn", turn.Role)
	}
	if turn.Tool != nil && (strings.TrimSpace(turn.Tool.Name) == "" ||
		(turn.Tool.Status != "success" && turn.Tool.Status != "failure") ||
		!utf8.ValidString(turn.Tool.Name+turn.Tool.Error)) {
		t.Fatalf("tool invalid: %+v", turn.Tool)
	}
	if turn.OccurredAt.After(now.Add(l.MaxFutureSkew)) || turn.OccurredAt.Unix() < 0 || turn.OccurredAt.Location() != time.UTC {
		t.Fatalf("occurred_at %v out of range", turn.OccurredAt)
	}
	if !turn.ReceivedAt.Equal(now) {
		t.Fatalf("received_at %v, want %v", turn.ReceivedAt, now)
	}
	if turn.Metadata != nil {
		b, err := json.Marshal(turn.Metadata)
		if err != nil || len(b) > l.MaxMetadataBytes {
			t.Fatalf("metadata does not re-encode within the limit: %v (%d bytes)", err, len(b))
		}
	}
}

func FuzzDecodeTurns(f *testing.F) {
	f.Add(turnJSON(f, nil))
	f.Add(turnJSON(f, map[string]any{"turn_id": nil, "occurred_at": nil, "metadata": map[string]any{"k": []any{1, "x", nil}}}))
	f.Add(`{"turns":[` + turnJSON(f, map[string]any{"role": "tool", "content": "", "tool": map[string]any{"name": "s", "status": "failure", "error": "e"}}) + `,{"tenant":"x"}]}`)
	f.Add(`[` + turnJSON(f, map[string]any{"occurred_at": "2025-06-01T12:04:59+00:00"}) + `,42,null,[]]`)
	f.Add(`{"user_id":"a","user_id":"b"}`)
	f.Add(`{"turns":[]}`)
	f.Add(`{"user_id":"u","session_id":"s","role":"user","content":"\ud800 \u0000"}`)
	f.Add("[{\"content\":\"\xff\"}]")
	f.Add(`not json`)
	// Small limits let the fuzzer reach every boundary with short inputs.
	limits := Limits{MaxContentBytes: 64, MaxIDLen: 16, MaxFutureSkew: time.Minute, MaxBatch: 4,
		MaxMetadataBytes: 64, MaxBodyBytes: 4096}
	f.Fuzz(func(t *testing.T, body string) {
		res, err := DecodeTurns([]byte(body), limits, testNow)
		if err != nil {
			if res != nil || err.Code == "" || err.Message == "" {
				t.Fatalf("whole-request error %v with %d results", err, len(res))
			}
			return
		}
		// Decoding streams the body: it must still refuse whatever is not one JSON value.
		if !json.Valid([]byte(body)) {
			t.Fatalf("accepted a body that is not valid JSON: %q", body)
		}
		if len(res) == 0 || len(res) > limits.MaxBatch {
			t.Fatalf("%d results", len(res))
		}
		for i, r := range res {
			if r.Index != i {
				t.Fatalf("result %d has index %d", i, r.Index)
			}
			if r.Err != nil {
				if r.Err.Code == "" || r.Err.Message == "" {
					t.Fatalf("empty error %+v", r.Err)
				}
				continue
			}
			assertValidTurn(t, r.Turn, limits, testNow)
		}
	})
}
