package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/consolidator/resolvertest"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/retriever"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// storable is the whole write and read surface on real parts: the edge with ingest
// on JetStream, the resolver, the memory operations and the retriever on PostgreSQL.
type storable struct {
	h        http.Handler
	token    string
	js       jetstream.JetStream
	store    *memory.Store
	resolver *consolidator.Resolver
	n        atomic.Int64 // a fresh user per input, so inputs never meet
}

const storableTenant = "fuzz"

func newStorable(t testing.TB) *storable {
	t.Helper()
	ctx := context.Background()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	store := pgtest.Store(t)
	emb := resolvertest.HashEmbedder(t)
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	retr, err := retriever.NewRetriever(store, emb, retriever.DefaultConfig(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: storableTenant, Name: "fuzz", SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Memories: lifecycle.NewOps(store, emb),
		Retriever: retr, Logger: quietLogger()})
	return &storable{h: h, token: tok, js: js, store: store,
		resolver: consolidator.NewResolver(store, emb, nil, consolidator.ResolverConfig{}, nil)}
}

func (s *storable) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, b
}

// refused checks that a refusal is a 4xx naming its reason, never a 500.
func refused(t *testing.T, what string, code int, body []byte) {
	t.Helper()
	if code < 400 || code >= 500 {
		t.Fatalf("%s: status %d, body %s", what, code, body)
	}
	var eb httpapi.ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" {
		t.Fatalf("%s: %d without an error body naming the problem: %s", what, code, body)
	}
}

// check feeds one input through every entry point; whatever an entry point accepts
// must reach PostgreSQL without an error (what a worker would otherwise dead-letter).
// content and query are JSON string contents (escapes and raw bytes as the fuzzer
// makes them), metadata a JSON value ("" leaves it out).
func (s *storable) check(t *testing.T, content, metadata, query string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := s.n.Add(1)
	user := fmt.Sprintf("u%d", n)
	meta := ""
	if metadata != "" {
		meta = `,"metadata":` + metadata
	}

	// 1. POST /v1/turns → TURNS → the extractor's decode and store.
	code, body := s.do(t, "POST", "/v1/turns",
		`{"turn_id":"t`+fmt.Sprint(n)+`","user_id":"`+user+`","session_id":"s1","role":"user","content":"`+content+`"`+meta+`}`)
	switch code {
	case http.StatusAccepted:
		evs := stored(t, s.js, storableTenant, user)
		if len(evs) != 1 {
			t.Fatalf("accepted turn: %d messages in TURNS", len(evs))
		}
		if _, err := s.store.InsertTurn(ctx, storableTenant, evs[0].Turn); err != nil {
			t.Fatalf("accepted turn (body %s) cannot be stored: %v", body, err)
		}
		var got memory.Turn
		err := s.store.InTx(ctx, storableTenant, func(tx *memory.Tx) error {
			var err error
			got, err = tx.GetTurn(ctx, evs[0].Turn.TurnID)
			return err
		})
		if err != nil || got.Content != evs[0].Turn.Content {
			t.Fatalf("stored turn %q, %v; published %q", got.Content, err, evs[0].Turn.Content)
		}
	default:
		refused(t, "POST /v1/turns", code, body)
	}

	// 2. A turn published straight onto NATS: what DecodeTurnEvent accepts is stored.
	payload := `{"v":1,"tenant":"` + storableTenant + `","turn":{"turn_id":"n` + fmt.Sprint(n) + `","user_id":"` + user +
		`","session_id":"s1","role":"user","content":"` + content + `","occurred_at":"2026-01-02T03:04:05Z","received_at":"2026-01-02T03:04:05Z"` + meta + `}}`
	if ev, err := streams.DecodeTurnEvent([]byte(payload)); err == nil {
		if _, err := s.store.InsertTurn(ctx, storableTenant, ev.Turn); err != nil {
			t.Fatalf("turn event accepted by DecodeTurnEvent cannot be stored: %v\npayload %q", err, payload)
		}
	}

	// 3. POST /v1/memories → CANDIDATES → the resolver's decode and write.
	code, body = s.do(t, "POST", "/v1/memories", `{"user_id":"`+user+`","content":"`+content+`"`+meta+`}`)
	if code != http.StatusAccepted {
		refused(t, "POST /v1/memories", code, body)
	} else {
		ev := lastCandidate(t, s.js, user)
		dec, err := s.resolver.Resolve(ctx, ev.Candidate)
		if err != nil {
			t.Fatalf("accepted memory cannot be stored: %v\ncandidate %+v", err, ev.Candidate)
		}
		// 4. PATCH the stored memory with the same text: 200 or a 4xx, never a 500.
		if dec.MemoryID != [16]byte{} {
			code, body = s.do(t, "PATCH", "/v1/memories/"+dec.MemoryID.String(), `{"content":"`+content+` (corrected)","reason":"`+query+`"}`)
			if code != http.StatusOK {
				refused(t, "PATCH /v1/memories/{id}", code, body)
			}
		}
	}

	// 5. Queries: 200 or a 4xx naming the field.
	for _, path := range []string{"/v1/search", "/v1/context"} {
		code, body = s.do(t, "POST", path, `{"user_id":"`+user+`","query":"`+query+`"}`)
		if code != http.StatusOK {
			refused(t, path, code, body)
		}
	}
}

// lastCandidate reads the one candidate published for user.
func lastCandidate(t *testing.T, js jetstream.JetStream, user string) streams.CandidateEvent {
	t.Helper()
	subj, err := streams.CandidateSubject(storableTenant, user)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	st, err := js.Stream(ctx, streams.CandidatesStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatalf("reading the candidate of %s: %v", user, err)
	}
	ev, err := streams.DecodeCandidateEvent(m.Data)
	if err != nil {
		t.Fatalf("the published candidate does not decode: %v", err)
	}
	return ev
}

// storableSeeds are inputs each entry point once failed on (or nearly): NUL, invalid
// UTF-8, numbers Go or jsonb cannot hold, deep nesting.
var storableSeeds = []struct{ content, metadata, query string }{
	{"I moved to Lisbon in May", `{"source":"chat","n":3}`, "where do I live"},
	{`a\u0000b`, "", `x\u0000y`},
	{"a\x00b", `{"k":"\u0000"}`, "q\x00"},
	{"bad \xff utf8", `{"score":1e999999}`, "\xc3\x28"},
	{`lone \ud800 surrogate`, `{"x":-1e400,"y":1e-400}`, `\udfff`},
	{"deep", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, "deep"},
	{"big int", `{"id":123456789012345678901234567890,"f":1.7976931348623157e308}`, "int"},
	{"key", `{"a\u0000":1,"ok":[true,false,null,{"b":"c"}]}`, ""},
	{"emoji 🧠 中文", `{"名字":"值"}`, "中文"},
}

// TestStorable runs the seeds on their own, without fuzzing.
func TestStorable(t *testing.T) {
	s := newStorable(t)
	for _, sd := range storableSeeds {
		s.check(t, sd.content, sd.metadata, sd.query)
	}
}

// FuzzStorable: whatever an entry point accepts can be stored, and whatever it refuses
// is refused with a 4xx naming the field (make fuzz runs it for a few seconds).
func FuzzStorable(f *testing.F) {
	for _, sd := range storableSeeds {
		f.Add(sd.content, sd.metadata, sd.query)
	}
	s := newStorable(f)
	f.Fuzz(func(t *testing.T, content, metadata, query string) {
		s.check(t, content, metadata, query)
	})
}

// TestRefusedWithField: what the store cannot hold is a 400 naming the field at
// every entry point, not a 500 (queries, corrections) or a 202 that dead-letters
// (explicit memories, metadata).
func TestRefusedWithField(t *testing.T) {
	s := newStorable(t)
	for _, tc := range []struct {
		name, path, body string
		field            string
	}{
		{"NUL in search query", "/v1/search", `{"user_id":"u","query":"a\u0000b"}`, "query"},
		{"NUL in context query", "/v1/context", `{"user_id":"u","query":"a\u0000b"}`, "query"},
		{"NUL in search user_id", "/v1/search", `{"user_id":"u\u0000","query":"q"}`, "user_id"},
		{"NUL in context session_id", "/v1/context", `{"user_id":"u","session_id":"s\u0000","query":"q"}`, "session_id"},
		{"invalid UTF-8 in a query", "/v1/search", "{\"user_id\":\"u\",\"query\":\"a\xffb\"}", ""},
		{"NUL in memory content", "/v1/memories", `{"user_id":"u","content":"a\u0000b"}`, "content"},
		{"NUL in memory key", "/v1/memories", `{"user_id":"u","content":"ok","key":"k\u0000"}`, "key"},
		{"memory metadata number out of range", "/v1/memories", `{"user_id":"u","content":"ok","metadata":{"n":1e999999}}`, "metadata.n"},
		{"memory metadata NUL", "/v1/memories", `{"user_id":"u","content":"ok","metadata":{"a":["\u0000"]}}`, "metadata.a[0]"},
		{"turn metadata number out of range", "/v1/turns", `{"user_id":"u","session_id":"s","role":"user","content":"hi","metadata":{"score":1e999999}}`, "metadata.score"},
		{"search metadata filter NUL value", "/v1/search", `{"user_id":"u","query":"q","metadata":{"k":"a\u0000"}}`, "metadata.k"},
		{"search metadata filter number out of range", "/v1/search", `{"user_id":"u","query":"q","metadata":{"n":1e999999}}`, "metadata.n"},
		{"search metadata filter NUL key", "/v1/search", `{"user_id":"u","query":"q","metadata":{"a\u0000":1}}`, "metadata.a\x00"},
		{"search metadata filter nested NUL", "/v1/search", `{"user_id":"u","query":"q","metadata":{"k":{"x":["\u0000"]}}}`, "metadata.k.x[0]"},
		{"search from in year 10000 UTC", "/v1/search", `{"user_id":"u","query":"q","from":"9999-12-31T23:59:59-23:59"}`, "from"},
		{"search to in year -1 UTC", "/v1/search", `{"user_id":"u","query":"q","to":"0000-01-01T00:00:00+23:59"}`, "to"},
		{"search as_of in year 10000 UTC", "/v1/search", `{"user_id":"u","query":"q","as_of":"9999-12-31T23:59:59-23:59"}`, "as_of"},
		{"memory valid_from in year 10000 UTC", "/v1/memories", `{"user_id":"u","content":"x","valid_from":"9999-12-31T23:59:59-23:59"}`, "valid_from"},
		{"memory valid_from in year -1 UTC", "/v1/memories", `{"user_id":"u","content":"x","valid_from":"0000-01-01T00:00:00+23:59"}`, "valid_from"},
		{"memory expire_at in year 10000 UTC", "/v1/memories", `{"user_id":"u","content":"x","expire_at":"9999-12-31T23:59:59-23:59"}`, "expire_at"},
		{"memory valid_from not a time", "/v1/memories", `{"user_id":"u","content":"x","valid_from":"yesterday"}`, "valid_from"},
		{"turn NUL in a batch", "/v1/turns", `{"turns":[{"user_id":"u","session_id":"s","role":"user","content":"ok"},{"user_id":"u","session_id":"s","role":"user","content":"a\u0000"}]}`, "turns[1].content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.do(t, "POST", tc.path, tc.body)
			var got struct {
				Error   httpapi.Error        `json:"error"`
				Results []ingest.TurnOutcome `json:"results"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%d %s: %v", code, body, err)
			}
			if tc.path == "/v1/turns" && len(got.Results) > 1 {
				// A batch is answered per turn: the valid one is accepted.
				r := got.Results[1]
				if code != http.StatusAccepted || r.Status != ingest.StatusRejected || r.Error.Field != tc.field {
					t.Fatalf("%d %s, want 202 with turn 1 rejected at %q", code, body, tc.field)
				}
				return
			}
			if code != http.StatusBadRequest || got.Error.Field != tc.field {
				t.Fatalf("%d %s, want 400 naming %q", code, body, tc.field)
			}
			if tc.field != "" && !strings.HasPrefix(got.Error.Message, tc.field+": ") && !strings.Contains(got.Error.Message, tc.field) {
				t.Errorf("message %q does not name %s", got.Error.Message, tc.field)
			}
		})
	}
}

// TestListFiltersRefusedWithField: a listing's key and metadata[...] filters are text
// the store compares, so what it cannot hold is a 400 naming the parameter, not a 500
// (NUL) or a filter on something else (invalid UTF-8 turned into U+FFFD).
func TestListFiltersRefusedWithField(t *testing.T) {
	s := newStorable(t)
	for _, tc := range []struct {
		name, query, field string
	}{
		{"NUL in key", "key=%00", "key"},
		{"invalid UTF-8 in key", "key=%FF", "key"},
		{"NUL in a metadata value", "metadata[k]=%00", "metadata[k]"},
		{"invalid UTF-8 in a metadata value", "metadata[k]=%FF", "metadata[k]"},
		{"NUL in a metadata key", "metadata[%00]=x", "metadata[\x00]"},
		{"invalid UTF-8 in a metadata key", "metadata[%FF]=x", "metadata[\uFFFD]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.do(t, "GET", "/v1/memories?user_id=u&"+tc.query, "")
			var got httpapi.ErrorBody
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%d %s: %v", code, body, err)
			}
			if code != http.StatusBadRequest || got.Error.Field != tc.field {
				t.Fatalf("%d %s, want 400 naming %q", code, body, tc.field)
			}
		})
	}
	// Valid text still filters.
	if code, body := s.do(t, "GET", "/v1/memories?user_id=u&key=k%C3%A9&metadata[k]=%E4%B8%AD", ""); code != http.StatusOK {
		t.Fatalf("valid filters: %d %s", code, body)
	}
}
