package client_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// pinned pairs a server type with the client type that reads (or writes) the same
// JSON. request: the client produces it and the server reads it; otherwise the
// server produces it.
var pinned = []struct {
	name           string
	server, client any
	request        bool
}{
	{"memory", memory.Memory{}, client.Memory{}, false},
	{"memory detail", memory.Detail{}, client.MemoryDetail{}, false},
	{"version", memory.Version{}, client.Version{}, false},
	{"lineage", memory.Lineage{}, client.Lineage{}, false},
	{"history", httpapi.HistoryResponse{}, struct {
		MemoryID string           `json:"memory_id"`
		Versions []client.Version `json:"versions"`
	}{}, false}, // History returns the versions of this envelope
	{"as-of", httpapi.AsOfResponse{}, client.AsOfVersion{}, false},
	{"changed memory", httpapi.MemoryResponse{}, struct {
		Memory client.Memory `json:"memory"`
	}{}, false}, // Update, Deprecate, Rollback and Restore return the memory of this envelope
	{"listing", httpapi.ListResponse{}, client.MemoryPage{}, false},
	{"correction", httpapi.CorrectRequest{}, client.UpdateRequest{}, true},
	{"rollback", httpapi.RollbackRequest{}, struct {
		Version int    `json:"version"`
		Reason  string `json:"reason,omitempty"`
	}{}, true},
	{"deprecation", httpapi.DeprecateRequest{}, struct {
		Reason string `json:"reason,omitempty"`
	}{}, true},
	{"search request", retriever.SearchRequest{}, client.SearchRequest{}, true},
	{"search response", retriever.SearchResponse{}, client.SearchResponse{}, false},
	{"context request", retriever.ContextRequest{}, client.ContextRequest{}, true},
	{"context response", retriever.ContextResponse{}, client.ContextResponse{}, false},
	{"retrieval", retriever.Retrieval{}, client.Retrieval{}, false},
	{"remember request", ingest.RememberRequest{}, client.RememberRequest{}, true},
	{"remember response", ingest.RememberResult{}, client.RememberResponse{}, false},
	{"turns response", ingest.TurnsResult{}, client.AddResult{}, false},
	{"task state", retriever.TaskState{}, client.TaskState{}, false},
	{"memory deletion", lifecycle.MemoryDeletion{}, client.MemoryDeletion{}, false},
	{"user deletion", lifecycle.UserDeletion{}, client.UserDeletion{}, false},
	{"user memories deletion", lifecycle.UserMemoriesDeletion{}, client.UserMemoriesDeletion{}, false},
	{"export report", lifecycle.ExportReport{}, client.ExportReport{}, false},
	{"import report", lifecycle.ImportReport{}, client.ImportReport{}, false},
	{"error", httpapi.Error{}, client.TurnError{}, false},
}

// TestTypesPinnedToServer: the client's types have exactly the server's JSON fields,
// nested types included, and a fully populated value survives the trip through the
// other side unchanged. Adding a field on one side only fails here.
func TestTypesPinnedToServer(t *testing.T) {
	t.Parallel()
	for _, p := range pinned {
		t.Run(p.name, func(t *testing.T) {
			compareFields(t, "", reflect.TypeOf(p.server), reflect.TypeOf(p.client))
			from, to := reflect.TypeOf(p.server), reflect.TypeOf(p.client)
			if p.request {
				from, to = to, from
			}
			orig := reflect.New(from)
			fill(orig.Elem(), 0)
			b, err := json.Marshal(orig.Interface())
			if err != nil {
				t.Fatal(err)
			}
			other := reflect.New(to)
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(other.Interface()); err != nil {
				t.Fatalf("%s into %s: %v", b, to, err)
			}
			b2, err := json.Marshal(other.Interface())
			if err != nil {
				t.Fatal(err)
			}
			back := reflect.New(from)
			if err := json.Unmarshal(b2, back.Interface()); err != nil {
				t.Fatalf("%s back into %s: %v", b2, from, err)
			}
			b3, _ := json.Marshal(back.Interface())
			var want, got any
			_ = json.Unmarshal(b, &want)
			_ = json.Unmarshal(b3, &got)
			if !reflect.DeepEqual(want, got) {
				t.Errorf("changed on the way through %s:\n sent %s\n back %s", to, b, b3)
			}
		})
	}
}

// jsonFields maps a struct's JSON names to their field types (embedded structs
// flattened, as encoding/json does).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

var timeType = reflect.TypeOf(time.Time{})

// elem strips pointers, slices and maps down to the type they hold.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

func compareFields(t *testing.T, path string, server, cl reflect.Type) {
	t.Helper()
	sf, cf := jsonFields(server), jsonFields(cl)
	var names []string
	for k := range sf {
		names = append(names, k)
	}
	for k := range cf {
		if _, ok := sf[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		st, sok := sf[n]
		ct, cok := cf[n]
		switch {
		case !cok:
			t.Errorf("%s%s: the server (%s) has it, the client (%s) does not", path, n, server, cl)
		case !sok:
			t.Errorf("%s%s: the client (%s) has it, the server (%s) does not", path, n, cl, server)
		default:
			se, ce := elem(st), elem(ct)
			if se.Kind() == reflect.Struct && ce.Kind() == reflect.Struct && se != timeType && ce != timeType {
				compareFields(t, path+n+".", se, ce)
			}
		}
	}
}

var (
	fixedTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	fixedID   = uuid.MustParse("01a2315b-43ee-7b63-b448-b23200d1a7ab")
	rawType   = reflect.TypeOf(json.RawMessage(nil))
)

// fill sets every field of v to a value that is not its zero.
func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(fixedTime))
		return
	case v.Type() == reflect.TypeOf(uuid.UUID{}):
		v.Set(reflect.ValueOf(fixedID))
		return
	case v.Type() == rawType:
		v.Set(reflect.ValueOf(json.RawMessage(`{"k":"v"}`)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf("v"))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// TestTurnPinnedToServer: a client.Turn with every field set is accepted whole by the
// server's decoder (which refuses unknown fields) and arrives unchanged.
func TestTurnPinnedToServer(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	turns := []client.Turn{
		{TurnID: "t1", UserID: "u1", AgentID: "a1", SessionID: "s1", TaskID: "k1", Role: client.RoleUser,
			Content: "I moved to Porto", Name: "Ana", OccurredAt: at, Metadata: map[string]any{"lang": "en"}},
		{TurnID: "t2", UserID: "u1", SessionID: "s1", Role: client.RoleTool, Content: "exit 1", OccurredAt: at,
			Tool: &client.ToolCall{Name: "deploy", Status: "failure", Error: "timeout"}},
	}
	// Every JSON field of client.Turn is set in one of the turns above.
	set := map[string]bool{}
	for _, tr := range turns {
		b, _ := json.Marshal(tr)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for k := range m {
			set[k] = true
		}
	}
	for name := range jsonFields(reflect.TypeOf(client.Turn{})) {
		if !set[name] {
			t.Errorf("the test sets no %s: add it", name)
		}
	}
	body, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	res, ferr := ingest.DecodeTurns(body, ingest.DefaultLimits(), at.Add(time.Minute))
	if ferr != nil {
		t.Fatalf("the server refuses the client's turns: %v", ferr)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("turn %d refused: %v", i, r.Err)
		}
		c, s := turns[i], r.Turn
		if s.TurnID != c.TurnID || s.UserID != c.UserID || s.AgentID != or(c.AgentID, "default") || s.SessionID != c.SessionID ||
			s.TaskID != c.TaskID || string(s.Role) != string(c.Role) || s.Content != c.Content || !s.OccurredAt.Equal(c.OccurredAt) {
			t.Errorf("turn %d: sent %+v, the server read %+v", i, c, s)
		}
		if c.Name != "" && s.Metadata[ingest.MetadataName] != c.Name {
			t.Errorf("turn %d: name %q not kept in the metadata %v", i, c.Name, s.Metadata)
		}
		if c.Tool != nil && (s.Tool == nil || *s.Tool != memory.ToolCall(*c.Tool)) {
			t.Errorf("turn %d: tool %+v read as %+v", i, c.Tool, s.Tool)
		}
	}
}

func or(a, b string) string {
	if a == "" {
		return b
	}
	return a
}
