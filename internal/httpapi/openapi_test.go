package httpapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

var update = flag.Bool("update", false, "rewrite openapi.json from the types of openapi_spec_test.go and from real calls")

const openAPIFile = "openapi.json"

// example is one recorded exchange of an operation: a real call in
// TestOpenAPIDocument.
type example struct {
	Status      int
	Request     any // decoded JSON, or a string for a non-JSON body; nil without a body
	Response    any
	RequestType string // content type of the request; "" for JSON
}

// errorStatuses are the shared error answers, in components/responses.
var errorStatuses = map[int]struct{ name, description string }{
	400: {"BadRequest", "the request is invalid; error.field names the field at fault"},
	401: {"Unauthorized", "no valid bearer token (WWW-Authenticate: Bearer)"},
	404: {"NotFound", "no such resource in the token's tenant"},
	405: {"MethodNotAllowed", "the method is not allowed on this route (Allow lists the allowed ones)"},
	409: {"Conflict", "the resource changed (expect_version) or is not in the state the operation needs"},
	413: {"TooLarge", "the body exceeds its limit"},
	503: {"Unavailable", "a dependency is unavailable (Retry-After) or the service is not configured on this node"},
}

// schemaBuilder turns Go types into JSON schemas with $refs to the named components.
type schemaBuilder struct {
	names map[reflect.Type]string // type → component name
	refs  map[reflect.Type]*jsonschema.Schema
}

func newSchemaBuilder() *schemaBuilder {
	b := &schemaBuilder{names: map[reflect.Type]string{}, refs: map[reflect.Type]*jsonschema.Schema{}}
	for _, set := range []map[string]any{requestSchemas, responseSchemas} {
		for name, v := range set {
			t := reflect.TypeOf(v)
			b.names[t] = name
			b.refs[t] = &jsonschema.Schema{Ref: "#/components/schemas/" + name}
		}
	}
	return b
}

// schema is v's schema: v itself when it is one (a map), a $ref when its type is a
// named component (unless inline), otherwise the schema inferred from its type.
// request schemas keep additionalProperties: false; response schemas drop it.
func (b *schemaBuilder) schema(v any, request, inline bool) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	t := reflect.TypeOf(v)
	if name, ok := b.names[t]; ok && !inline {
		return ref(name), nil
	}
	types := maps.Clone(extraTypeSchemas)
	for rt, s := range b.refs {
		if rt != t {
			types[rt] = s
		}
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if !request {
		dropClosed(m)
	}
	return m, nil
}

// dropClosed removes additionalProperties: false everywhere in a schema.
func dropClosed(v any) {
	switch x := v.(type) {
	case map[string]any:
		if x["additionalProperties"] == false {
			delete(x, "additionalProperties")
		}
		for _, c := range x {
			dropClosed(c)
		}
	case []any:
		for _, c := range x {
			dropClosed(c)
		}
	}
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

var pathParamDescriptions = map[string]string{
	"id":      "the id (UUID)",
	"user_id": "the user's id (1-128 characters of [A-Za-z0-9._:@-])",
	"task_id": "the task's id",
}

func jsonContent(ct string) string {
	if ct == "" {
		return "application/json"
	}
	return ct
}

// buildDocument is the OpenAPI document of operations() with the examples ex (by
// operation id; ex["errors:<status>"] are the shared error answers').
func buildDocument(ex map[string]example) ([]byte, error) {
	b := newSchemaBuilder()
	schemas := map[string]any{}
	for _, set := range []struct {
		m       map[string]any
		request bool
	}{{requestSchemas, true}, {responseSchemas, false}} {
		for name, v := range set.m {
			s, err := b.schema(v, set.request, true)
			if err != nil {
				return nil, err
			}
			schemas[name] = s
		}
	}
	responses := map[string]any{}
	for status, e := range errorStatuses {
		r := map[string]any{"description": e.description,
			"content": map[string]any{"application/json": map[string]any{"schema": ref("ErrorBody")}}}
		if x, ok := ex["errors:"+strconv.Itoa(status)]; ok {
			r["content"].(map[string]any)["application/json"].(map[string]any)["example"] = x.Response
		}
		switch status {
		case 401:
			r["headers"] = map[string]any{"WWW-Authenticate": map[string]any{"schema": schemaStr, "description": `Bearer realm="engram"`}}
		case 405:
			r["headers"] = map[string]any{"Allow": map[string]any{"schema": schemaStr, "description": "the allowed methods"}}
		case 503:
			r["headers"] = map[string]any{"Retry-After": map[string]any{"schema": schemaInt, "description": "seconds to wait before retrying"}}
		}
		responses[e.name] = r
	}

	paths := map[string]any{}
	for _, op := range operations() {
		o := map[string]any{"operationId": op.id, "summary": op.summary, "tags": []any{op.tag}}
		if op.description != "" {
			o["description"] = op.description
		}
		if op.public {
			o["security"] = []any{}
		}
		if op.pending != "" {
			o["x-engram-pending"] = "added by the " + op.pending + " branch; its shapes are reconciled at merge"
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(op.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": pathParamDescriptions[m[1]], "schema": pathSchema(m[1])})
		}
		for _, q := range op.query {
			p := map[string]any{"name": q.name, "in": "query", "schema": q.schema}
			if q.description != "" {
				p["description"] = q.description
			}
			if q.deepObject { // name[key]=value, one per key
				p["style"], p["explode"] = "deepObject", true
			}
			params = append(params, p)
		}
		if params != nil {
			o["parameters"] = params
		}
		x, hasExample := ex[op.id]
		if op.body != nil {
			s, err := b.schema(op.body, true, false)
			if err != nil {
				return nil, err
			}
			if op.required != nil {
				s["required"] = toAny(op.required)
			}
			for name, ps := range op.props {
				s["properties"].(map[string]any)[name] = ps
			}
			media := map[string]any{"schema": s}
			if hasExample && x.Request != nil {
				media["example"] = x.Request
			}
			o["requestBody"] = map[string]any{"required": !op.bodyOptional,
				"content": map[string]any{jsonContent(op.bodyContent): media}}
		}
		rs := map[string]any{}
		for _, r := range op.responses {
			resp := map[string]any{"description": r.description}
			if r.body != nil {
				s, err := b.schema(r.body, false, false)
				if err != nil {
					return nil, err
				}
				media := map[string]any{"schema": s}
				if hasExample && x.Status == r.status && x.Response != nil {
					media["example"] = x.Response
				}
				resp["content"] = map[string]any{jsonContent(r.content): media}
			}
			rs[strconv.Itoa(r.status)] = resp
		}
		errs := slices.Clone(op.errors)
		if !op.public {
			errs = append(errs, 401, 503)
		}
		if op.id != "console" && op.id != "mcp" && !slices.Contains(errs, 405) {
			errs = append(errs, 405) // the edge answers a wrong method on any route so
		}
		for _, status := range errs {
			if op.id == "mcp" && (status == 400 || status == 405) {
				// The MCP SDK answers these itself, in plain text.
				rs[strconv.Itoa(status)] = map[string]any{"description": "refused by the MCP transport (wrong method, " +
					"content type or Accept header)", "content": map[string]any{"text/plain": map[string]any{"schema": schemaStr}}}
				continue
			}
			rs[strconv.Itoa(status)] = map[string]any{"$ref": "#/components/responses/" + errorStatuses[status].name}
		}
		o["responses"] = rs
		item, _ := paths[op.path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.path] = item
		}
		item[strings.ToLower(op.method)] = o
	}

	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "engram",
			"version": "1",
			"summary": "Long-term memory for LLM agents",
			"description": "Agents send conversation turns; engram turns them, asynchronously, into structured, " +
				"deduplicated and versioned memories, and serves them back as ranked search results or as a " +
				"token-budgeted context block in which every line cites its memory. Every /v1 route takes " +
				"Authorization: Bearer <token>; the tenant comes from the token, never from the request. Errors " +
				"are {\"error\":{\"code\",\"message\",\"field\"}}. Generated from the server's types " +
				"(internal/httpapi/openapi_spec_test.go); the examples are recorded from real calls.",
			"contact": map[string]any{"name": "engram", "url": "https://github.com/engramhq/engram"},
		},
		"servers":  []any{map[string]any{"url": "http://localhost:8080", "description": "engram dev (make dev)"}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"tags": []any{
			map[string]any{"name": "write", "description": "Turns and explicit memories, published to JetStream"},
			map[string]any{"name": "read", "description": "Search, context and the retrieval log"},
			map[string]any{"name": "memories", "description": "One memory: read, history, manual correction"},
			map[string]any{"name": "lifecycle", "description": "Deletion, restore, export and import"},
			map[string]any{"name": "working memory", "description": "Per-task state with a TTL"},
			map[string]any{"name": "mcp", "description": "The Model Context Protocol endpoint"},
			map[string]any{"name": "operations", "description": "Probes, metrics, the console and this document"},
		},
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
				"description": "an API token (engram token --tenant NAME); its tenant scopes every request"}},
			"schemas":   schemas,
			"responses": responses,
		},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func pathSchema(name string) map[string]any {
	if name == "id" {
		return map[string]any{"type": "string", "format": "uuid"}
	}
	return map[string]any{"type": "string", "minLength": 1, "maxLength": 128}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// committedExamples reads the examples of the committed document back, keyed as
// buildDocument takes them.
func committedExamples(t *testing.T, doc map[string]any) map[string]example {
	t.Helper()
	out := map[string]example{}
	for _, item := range doc["paths"].(map[string]any) {
		for _, raw := range item.(map[string]any) {
			o := raw.(map[string]any)
			var x example
			if rb, ok := o["requestBody"].(map[string]any); ok {
				for _, m := range rb["content"].(map[string]any) {
					x.Request = m.(map[string]any)["example"]
				}
			}
			for status, r := range o["responses"].(map[string]any) {
				content, _ := r.(map[string]any)["content"].(map[string]any)
				for _, m := range content {
					if e, ok := m.(map[string]any)["example"]; ok {
						x.Status, _ = strconv.Atoi(status)
						x.Response = e
					}
				}
			}
			if x.Request != nil || x.Response != nil {
				out[o["operationId"].(string)] = x
			}
		}
	}
	for status, e := range errorStatuses {
		r := doc["components"].(map[string]any)["responses"].(map[string]any)[e.name].(map[string]any)
		if ex, ok := r["content"].(map[string]any)["application/json"].(map[string]any)["example"]; ok {
			out["errors:"+strconv.Itoa(status)] = example{Status: status, Response: ex}
		}
	}
	return out
}

func readDocument(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	return doc
}

// TestOpenAPIRoutes: every route of the table is in the document with its method,
// and the document names no route the table lacks (except those marked pending,
// which another branch adds).
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	doc := readDocument(t)
	e, _ := stubEdge(t)
	documented := map[string]bool{} // "METHOD path"
	pending := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			key := strings.ToUpper(method) + " " + path
			documented[key] = true
			if _, ok := o.(map[string]any)["x-engram-pending"]; ok {
				pending[key] = true
			}
		}
	}
	routed := map[string]bool{}
	for _, rt := range e.routes() {
		if rt.method == "" {
			// A route of every method (the console, MCP): the document names the ones it serves.
			found := false
			for key := range documented {
				if strings.HasSuffix(key, " "+rt.pattern) {
					routed[key], found = true, true
				}
			}
			if !found {
				t.Errorf("route %s (every method) is not in %s", rt.pattern, openAPIFile)
			}
			continue
		}
		key := rt.method + " " + rt.pattern
		routed[key] = true
		if !documented[key] {
			t.Errorf("route %s is not in %s (add it to openapi_spec_test.go, then make openapi)", key, openAPIFile)
		}
	}
	for key := range documented {
		if routed[key] {
			continue
		}
		if pending[key] {
			t.Logf("%s is documented ahead of its route (x-engram-pending)", key)
			continue
		}
		t.Errorf("%s names %s, which no route serves", openAPIFile, key)
	}
}

// TestOpenAPIServed: GET /openapi.json answers the committed document, without a token.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	e, _ := stubEdge(t)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	want, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Body.Bytes(), want) {
		t.Fatal("GET /openapi.json differs from openapi.json")
	}
}

// shape is v with every value replaced by its JSON kind, and an array by the union
// of its elements' shapes (so that the order of results does not matter): two
// answers of one operation have one shape.
func shape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			out[k] = shape(c)
		}
		return out
	case []any:
		var merged any
		for _, c := range x {
			merged = mergeShapes(merged, shape(c))
		}
		if merged == nil {
			return []any{}
		}
		return []any{merged}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// mergeShapes unites two shapes: the keys of both objects, and "a|b" for kinds
// that differ.
func mergeShapes(a, b any) any {
	if a == nil {
		return b
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		out := maps.Clone(am)
		for k, v := range bm {
			out[k] = mergeShapes(out[k], v)
		}
		return out
	}
	as, bs := fmt.Sprint(a), fmt.Sprint(b)
	if as == bs {
		return a
	}
	kinds := strings.Split(as+"|"+bs, "|")
	slices.Sort(kinds)
	return strings.Join(slices.Compact(kinds), "|")
}

// validator checks instances against the schemas of the document.
type validator struct{ defs map[string]any }

func newValidator(t *testing.T, doc []byte) validator {
	t.Helper()
	// jsonschema-go resolves refs within one schema: the components become $defs.
	doc = bytes.ReplaceAll(doc, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return validator{defs: d["components"].(map[string]any)["schemas"].(map[string]any)}
}

func (v validator) validate(schema map[string]any, instance any) error {
	root := maps.Clone(schema)
	root["$defs"] = v.defs
	raw, err := json.Marshal(root)
	if err != nil {
		return err
	}
	raw = bytes.ReplaceAll(raw, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("reading the schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("resolving the schema: %w", err)
	}
	return rs.Validate(instance)
}

// TestOpenAPIDocument calls every route against real services (PostgreSQL,
// JetStream) and checks that openapi.json is what the types and these calls make:
// its schemas and operations are regenerated and compared byte for byte (with the
// committed examples), and every recorded request and answer must validate against
// its schema and have the committed example's shape. -update rewrites the document
// with the new examples.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	ex := normalizeExamples(t, recordExamples(t), time.Now())
	if *update {
		out, err := buildDocument(ex)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(openAPIFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes, %d examples)", openAPIFile, len(out), len(ex))
		return
	}
	committed := committedExamples(t, readDocument(t))
	regenerated, err := buildDocument(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(regenerated, openAPIDocument) {
		t.Errorf("%s is not what openapi_spec_test.go and the server's types make: run `make openapi`", openAPIFile)
	}

	var doc map[string]any
	if err := json.Unmarshal(regenerated, &doc); err != nil {
		t.Fatal(err)
	}
	v := newValidator(t, regenerated)
	ops := map[string]map[string]any{}
	for _, item := range doc["paths"].(map[string]any) {
		for _, o := range item.(map[string]any) {
			ops[o.(map[string]any)["operationId"].(string)] = o.(map[string]any)
		}
	}
	for _, op := range operations() {
		if !op.noExample {
			if _, ok := ex[op.id]; !ok {
				t.Errorf("operation %s: no call recorded", op.id)
			}
		}
	}
	ids := slices.Sorted(maps.Keys(ex))
	sort.Strings(ids)
	for _, id := range ids {
		x := ex[id]
		if x.Request == nil && x.Response == nil {
			continue // nothing was sent or answered (a 204)
		}
		old, ok := committed[id]
		if !ok {
			t.Errorf("%s: no committed example: run `make openapi`", id)
			continue
		}
		if !reflect.DeepEqual(shape(x.Response), shape(old.Response)) || !reflect.DeepEqual(shape(x.Request), shape(old.Request)) {
			t.Errorf("%s: the answer's shape changed from the committed example: run `make openapi`\n got %v\nwant %v",
				id, shape(x.Response), shape(old.Response))
		}
		if strings.HasPrefix(id, "errors:") {
			if err := v.validate(ref("ErrorBody"), x.Response); err != nil {
				t.Errorf("%s: %v", id, err)
			}
			continue
		}
		o := ops[id]
		if rb, ok := o["requestBody"].(map[string]any); ok && x.RequestType == "" && x.Request != nil {
			s := rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			if err := v.validate(s, x.Request); err != nil {
				t.Errorf("%s: the request does not match its schema: %v", id, err)
			}
		}
		r, ok := o["responses"].(map[string]any)[strconv.Itoa(x.Status)].(map[string]any)
		if !ok {
			t.Errorf("%s: status %d is not documented", id, x.Status)
			continue
		}
		if m, ok := r["content"].(map[string]any)["application/json"].(map[string]any); ok {
			if err := v.validate(m["schema"].(map[string]any), x.Response); err != nil {
				t.Errorf("%s: the answer does not match its schema: %v", id, err)
			}
		}
	}
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	longFloat   = regexp.MustCompile(`\d\.\d{5,}`)
)

// normalizeExamples makes recorded examples the same from run to run, so that
// `make openapi` changes the document only where the API changed: ids become
// 01a20000-…-<n> in order of appearance, the times of this run move to a fixed day
// (to the second, keeping their distances), and long decimals keep four places.
func normalizeExamples(t *testing.T, ex map[string]example, now time.Time) map[string]example {
	t.Helper()
	raw, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	ids := map[string]string{}
	text = uuidPattern.ReplaceAllStringFunc(text, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("01a20000-0000-7000-8000-%012d", len(ids)+1)
		}
		return ids[id]
	})
	// The times of this run, in order, move to a fixed day: whole hours from the
	// earliest are kept (an expiry a day later stays a day later), and within an hour
	// the n-th distinct time becomes second n, since their milliseconds vary by run.
	var run []time.Time
	for _, m := range timePattern.FindAllString(text, -1) {
		if at, err := time.Parse(time.RFC3339Nano, m); err == nil && at.Sub(now).Abs() < 48*time.Hour {
			run = append(run, at)
		}
	}
	slices.SortFunc(run, func(a, b time.Time) int { return a.Compare(b) })
	run = slices.CompactFunc(run, func(a, b time.Time) bool { return a.Equal(b) })
	moved := map[time.Time]time.Time{}
	base := time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC)
	rank := map[time.Duration]int{}
	for _, at := range run {
		hour := at.Sub(run[0]).Round(time.Hour)
		moved[at] = base.Add(hour + time.Duration(rank[hour])*time.Second)
		rank[hour]++
	}
	text = timePattern.ReplaceAllStringFunc(text, func(m string) string {
		at, err := time.Parse(time.RFC3339Nano, m)
		if to, ok := moved[at]; err == nil && ok {
			return to.Format(time.RFC3339)
		}
		return m // a time the test chose
	})
	text = longFloat.ReplaceAllStringFunc(text, func(m string) string {
		f, _ := strconv.ParseFloat(m, 64)
		return strconv.FormatFloat(f, 'f', 4, 64)
	})
	var out map[string]example
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("normalizing the examples: %v", err)
	}
	return out
}

// TestOpenAPIValidatorRejects: the schema check of the recorded calls can fail.
func TestOpenAPIValidatorRejects(t *testing.T) {
	t.Parallel()
	v := newValidator(t, openAPIDocument)
	for _, tc := range []struct {
		schema   string
		instance string
		ok       bool
	}{
		{"SearchResponse", `{"retrieval_id":"x","results":[]}`, true},
		{"SearchResponse", `{"retrieval_id":"x","results":"none"}`, false},
		{"SearchResponse", `{"retrieval_id":5,"results":[]}`, false},
		{"SearchRequest", `{"query":"tea","bogus":1}`, false},
		{"Memory", `{"id":"x","status":"forgotten"}`, false},
		{"ErrorBody", `{"error":{"code":"c","message":"m"}}`, true},
	} {
		var inst any
		if err := json.Unmarshal([]byte(tc.instance), &inst); err != nil {
			t.Fatal(err)
		}
		if err := v.validate(ref(tc.schema), inst); (err == nil) != tc.ok {
			t.Errorf("%s %s: validation error %v, want ok=%v", tc.schema, tc.instance, err, tc.ok)
		}
	}
}

func TestShape(t *testing.T) {
	t.Parallel()
	decode := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`[{"a":1},{"b":"x"}]`, `[{"b":"y"},{"a":2}]`, true},
		{`{"s":[1,null]}`, `{"s":[null,3]}`, true},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`[]`, `[{"a":1}]`, false},
	} {
		if got := reflect.DeepEqual(shape(decode(tc.a)), shape(decode(tc.b))); got != tc.same {
			t.Errorf("shape(%s) == shape(%s): %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
