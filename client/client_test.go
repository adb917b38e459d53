package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

const tenant = "acme"

// fastRetry keeps retry tests quick.
func fastRetry() client.Option {
	return client.WithRetry(client.Retry{InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond})
}

// server is the real ingest API on JetStream, behind the token middleware and a
// recorder that can inject failures in front of it.
type server struct {
	js    jetstream.JetStream
	url   string
	token string
	rec   *recorder
}

func newServer(t *testing.T) *server {
	t.Helper()
	ns := natstest.Start(t)
	_, js := ns.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	token, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenant, SHA256: httpapi.HashToken(token)}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc})}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	return &server{js: js, url: ts.URL, token: token, rec: rec}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recorder remembers the turn ids of every request and can answer the first
// few itself.
type recorder struct {
	next http.Handler

	mu       sync.Mutex
	fail     func(n int, w http.ResponseWriter, req *http.Request) bool // n counts from 1; true: answered
	requests [][]string                                                 // turn ids per request
	bodies   [][]byte
	statuses []int
}

// statusWriter records the status before the client can see it.
type statusWriter struct {
	http.ResponseWriter
	rec *recorder
}

func (w *statusWriter) WriteHeader(code int) {
	w.rec.mu.Lock()
	w.rec.statuses = append(w.rec.statuses, code)
	w.rec.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	var in struct {
		Turns []struct {
			TurnID string `json:"turn_id"`
		} `json:"turns"`
	}
	_ = json.Unmarshal(body, &in)
	var ids []string
	for _, t := range in.Turns {
		ids = append(ids, t.TurnID)
	}
	r.mu.Lock()
	r.requests = append(r.requests, ids)
	r.bodies = append(r.bodies, body)
	n, fail := len(r.requests), r.fail
	r.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w, rec: r}
	if fail == nil || !fail(n, sw, req) {
		r.next.ServeHTTP(sw, req)
	}
}

func (r *recorder) attempts() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

func (r *recorder) body(i int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[i]
}

func (r *recorder) codes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.statuses)
}

func turn(content string) client.Turn {
	return client.Turn{UserID: "u1", SessionID: "s1", Role: client.RoleUser, Content: content}
}

// stored counts the messages on the tenant's subject for user.
func stored(t *testing.T, js jetstream.JetStream, user string) uint64 {
	t.Helper()
	subj, _ := streams.TurnSubject(tenant, user)
	s, err := js.Stream(testCtx(t), streams.TurnsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testCtx(t), jetstream.WithSubjectFilter(subj))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subj]
}

func TestAddTurnsStoresAndIsIdempotent(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := client.New(srv.url+"/", srv.token, fastRetry())
	turns := []client.Turn{turn("I prefer tea"), turn("noted")}
	res, err := c.AddTurns(testCtx(t), turns...)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 2 || len(res.Results) != 2 {
		t.Fatalf("result %+v", res)
	}
	for i, r := range res.Results {
		id, err := uuid.Parse(r.TurnID)
		if err != nil || id.Version() != 7 || r.Index != i || r.Status != client.StatusAccepted {
			t.Errorf("result %+v: want accepted with a UUIDv7 (%v)", r, err)
		}
	}
	if turns[0].TurnID != "" {
		t.Error("AddTurns modified the caller's turns")
	}
	if n := stored(t, srv.js, "u1"); n != 2 {
		t.Errorf("%d stored, want 2", n)
	}

	// Sending the same turns again (now with their ids) stores nothing new.
	turns[0].TurnID, turns[1].TurnID = res.Results[0].TurnID, res.Results[1].TurnID
	res, err = c.AddTurns(testCtx(t), turns...)
	if err != nil || res.Duplicates != 2 || res.Accepted != 0 {
		t.Fatalf("resend: %+v, %v", res, err)
	}
	if n := stored(t, srv.js, "u1"); n != 2 {
		t.Errorf("%d stored after resend, want 2", n)
	}

	if res, err := c.AddTurns(testCtx(t)); err != nil || len(res.Results) != 0 {
		t.Errorf("no turns: %+v, %v", res, err)
	}
}

func TestAddTurnsRetries(t *testing.T) {
	t.Parallel()
	answer := func(status int, retryAfter string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			httpapi.WriteError(w, status, "test", http.StatusText(status), "")
		}
	}
	hangUp := func(w http.ResponseWriter) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	tests := []struct {
		name        string
		failFirst   int // requests answered by fail; 0 with always
		always      bool
		fail        func(http.ResponseWriter)
		maxAttempts int
		wantN       int           // requests the server saw
		wantStatus  int           // APIError status, 0 for success
		minElapsed  time.Duration // Retry-After honoured
	}{
		{name: "503 twice then success", failFirst: 2, fail: answer(503, ""), wantN: 3},
		{name: "502 then success", failFirst: 1, fail: answer(502, ""), wantN: 2},
		{name: "429 with Retry-After", failFirst: 1, fail: answer(429, "1"), wantN: 2, minElapsed: time.Second},
		{name: "network error then success", failFirst: 1, fail: hangUp, wantN: 2},
		{name: "400 is not retried", always: true, fail: answer(400, ""), wantN: 1, wantStatus: 400},
		{name: "401 is not retried", always: true, fail: answer(401, ""), wantN: 1, wantStatus: 401},
		{name: "413 is not retried", always: true, fail: answer(413, ""), wantN: 1, wantStatus: 413},
		{name: "501 is not retried", always: true, fail: answer(501, ""), wantN: 1, wantStatus: 501},
		{name: "503 until attempts run out", always: true, fail: answer(503, "0"), maxAttempts: 4, wantN: 4, wantStatus: 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.rec.fail = func(n int, w http.ResponseWriter, _ *http.Request) bool {
				if tt.always || n <= tt.failFirst {
					tt.fail(w)
					return true
				}
				return false
			}
			c := client.New(srv.url, srv.token, client.WithRetry(client.Retry{
				InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, MaxAttempts: tt.maxAttempts}))
			start := time.Now()
			res, err := c.AddTurns(testCtx(t), turn("a"), turn("b"))
			elapsed := time.Since(start)

			attempts := srv.rec.attempts()
			if len(attempts) != tt.wantN {
				t.Errorf("%d requests, want %d", len(attempts), tt.wantN)
			}
			for i := 1; i < len(attempts); i++ {
				if !slices.Equal(attempts[i], attempts[0]) {
					t.Errorf("attempt %d sent ids %v, the first sent %v", i+1, attempts[i], attempts[0])
				}
			}
			if len(attempts[0]) != 2 || attempts[0][0] == "" {
				t.Errorf("first attempt ids %v: want two assigned ids", attempts[0])
			}
			if elapsed < tt.minElapsed {
				t.Errorf("took %s, want at least %s (Retry-After)", elapsed, tt.minElapsed)
			}
			if tt.wantStatus == 0 {
				if err != nil || res.Accepted != 2 {
					t.Fatalf("%+v, %v", res, err)
				}
				if n := stored(t, srv.js, "u1"); n != 2 {
					t.Errorf("%d stored, want 2", n)
				}
				return
			}
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tt.wantStatus || apiErr.Code != "test" {
				t.Fatalf("err %v, want an APIError with status %d", err, tt.wantStatus)
			}
		})
	}
}

// A real 503: the TURNS stream is gone on the first attempt and back for the
// retry. The turns the first attempt could not store are stored once.
func TestAddTurnsRetriesJetStreamOutage(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	ctx := testCtx(t)
	if err := srv.js.DeleteStream(ctx, streams.TurnsStream); err != nil {
		t.Fatal(err)
	}
	// The first request meets the outage; the stream is back before its answer
	// reaches the client, so the first retry can succeed.
	srv.rec.fail = func(n int, w http.ResponseWriter, req *http.Request) bool {
		if n != 1 {
			return false
		}
		rw := httptest.NewRecorder()
		srv.rec.next.ServeHTTP(rw, req)
		if err := streams.EnsureTopology(ctx, srv.js, streams.Config{}); err != nil {
			t.Error(err)
		}
		maps.Copy(w.Header(), rw.Header())
		w.WriteHeader(rw.Code)
		_, _ = w.Write(rw.Body.Bytes())
		return true
	}
	c := client.New(srv.url, srv.token, fastRetry())
	res, err := c.AddTurns(ctx, turn("during the outage"))
	if err != nil || res.Accepted != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	if st := srv.rec.codes(); !slices.Equal(st, []int{503, 202}) {
		t.Errorf("statuses %v, want [503 202]", st)
	}
	attempts := srv.rec.attempts()
	if len(attempts) != 2 || attempts[0][0] != attempts[1][0] {
		t.Errorf("attempts %v: want two with the same id", attempts)
	}
	if n := stored(t, srv.js, "u1"); n != 1 {
		t.Errorf("%d stored, want 1", n)
	}
}

func TestAddTurnsRejected(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := client.New(srv.url, srv.token, fastRetry())
	ctx := testCtx(t)

	bad := turn("x")
	bad.Role = "boss"
	res, err := c.AddTurns(ctx, turn("good"), bad, turn("also good"))
	var rej *client.RejectedError
	if !errors.As(err, &rej) || len(rej.Rejected) != 1 || rej.Err != nil {
		t.Fatalf("err %v, want a RejectedError for one turn", err)
	}
	r := rej.Rejected[0]
	if r.Index != 1 || r.Status != client.StatusRejected || r.Error == nil || r.Error.Field != "turns[1].role" || r.TurnID == "" {
		t.Errorf("rejected %+v (%+v)", r, r.Error)
	}
	if res.Accepted != 2 || res.Rejected != 1 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(err.Error(), "turns[1].role") {
		t.Errorf("error %q does not name the field", err)
	}

	// A request whose every turn is invalid is a 400, sent once.
	before := len(srv.rec.attempts())
	_, err = c.AddTurns(ctx, bad)
	var apiErr *client.APIError
	if !errors.As(err, &rej) || !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Field != "turns[0].role" {
		t.Fatalf("err %v, want a RejectedError wrapping a 400", err)
	}
	if n := len(srv.rec.attempts()) - before; n != 1 {
		t.Errorf("%d requests for a 400, want 1", n)
	}
}

func TestAddTurnsSplitsBatches(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := client.New(srv.url, srv.token, fastRetry())
	turns := make([]client.Turn, 2500)
	for i := range turns {
		turns[i] = turn(fmt.Sprintf("turn %d", i))
		turns[i].UserID = fmt.Sprintf("u%d", i%7)
	}
	turns[1500].Content = "" // invalid, in the second request
	res, err := c.AddTurns(testCtx(t), turns...)
	var rej *client.RejectedError
	if !errors.As(err, &rej) || len(rej.Rejected) != 1 || rej.Rejected[0].Index != 1500 ||
		rej.Rejected[0].Error.Field != "turns[1500].content" {
		t.Fatalf("err %v (%+v)", err, rej)
	}
	if res.Accepted != 2499 || len(res.Results) != 2500 {
		t.Fatalf("accepted %d of %d results", res.Accepted, len(res.Results))
	}
	for i, r := range res.Results {
		if r.Index != i {
			t.Fatalf("results[%d].Index = %d", i, r.Index)
		}
	}
	var sizes []int
	for _, a := range srv.rec.attempts() {
		sizes = append(sizes, len(a))
	}
	if !slices.Equal(sizes, []int{1000, 1000, 500}) {
		t.Errorf("request sizes %v, want [1000 1000 500]", sizes)
	}
	if res.Results[1000].TurnID != srv.rec.attempts()[1][0] {
		t.Error("result ids do not match what was sent")
	}
}

func TestAddTurnsWireFormat(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := client.New(srv.url, srv.token, fastRetry())
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	_, err := c.AddTurns(testCtx(t),
		client.Turn{TurnID: "t-1", UserID: "u1", SessionID: "s1", Role: client.RoleUser, Content: "hi"},
		client.Turn{TurnID: "t-2", UserID: "u1", AgentID: "a1", SessionID: "s1", TaskID: "k1", Role: client.RoleTool,
			Tool: &client.ToolCall{Name: "search", Status: "failure", Error: "timeout"}, OccurredAt: at,
			Metadata: map[string]any{"n": 1}},
	)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Turns []map[string]any `json:"turns"`
	}
	if err := json.Unmarshal(srv.rec.body(0), &sent); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if got := keys(sent.Turns[0]); !slices.Equal(got, []string{"content", "role", "session_id", "turn_id", "user_id"}) {
		t.Errorf("minimal turn sent keys %v", got)
	}
	want := []string{"agent_id", "metadata", "occurred_at", "role", "session_id", "task_id", "tool", "turn_id", "user_id"}
	if got := keys(sent.Turns[1]); !slices.Equal(got, want) {
		t.Errorf("full turn sent keys %v, want %v", got, want)
	}
	if sent.Turns[1]["occurred_at"] != "2025-03-04T05:06:07Z" {
		t.Errorf("occurred_at %v", sent.Turns[1]["occurred_at"])
	}
}

func TestAddTurnsContextEnds(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.rec.fail = func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		httpapi.WriteError(w, 503, "unavailable", "down", "")
		return true
	}
	c := client.New(srv.url, srv.token, client.WithRetry(client.Retry{InitialInterval: 50 * time.Millisecond}))
	ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
	defer cancel()
	// The deadline error itself shows the retry loop gave up when the context did;
	// no wall-clock bound, which a loaded CI machine would break.
	_, err := c.AddTurns(ctx, turn("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the context's deadline", err)
	}
}

func TestAPIErrorNotJSON(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>forbidden by proxy</html>", http.StatusForbidden)
	}))
	t.Cleanup(ts.Close)
	_, err := client.New(ts.URL, "t").AddTurns(testCtx(t), turn("x"))
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 403 || !strings.Contains(apiErr.Message, "forbidden by proxy") {
		t.Errorf("err %v", err)
	}
}
