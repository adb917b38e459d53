package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// TestPostTurnsBodyBudget: while one request's body holds most of the bytes allowed in
// flight, another large body is answered 503 with Retry-After without being read; once
// the first is done the budget is free again.
func TestPostTurnsBodyBudget(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	if err := streams.EnsureTopology(testCtx(t), js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: tenantA, SHA256: httpapi.HashToken(tok)}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Logger: quietLogger(), MaxBodyBytesInFlight: 1 << 20})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	url := ts.URL + "/v1/turns"
	body := func(user string) string { // 24 turns of 30 KB: about 720 KB
		var turns []string
		for range 24 {
			turns = append(turns, turnJSON(user, "", strings.Repeat("x", 30<<10)))
		}
		return batchJSON(turns...)
	}

	// The first request sends its head and stalls: the server holds its reservation.
	first := body("u-first")
	pr, pw := io.Pipe()
	// Before ts.Close, which waits for the first request: a failure must not leave its
	// body stalled.
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(first))
	req.Header.Set("Authorization", "Bearer "+tok)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	if _, err := pw.Write([]byte(first[:1024])); err != nil {
		t.Fatal(err)
	}
	// The write returns once the client has read it, which says nothing of the server:
	// wait until its handler holds the first body's reservation.
	for deadline := time.Now().Add(10 * time.Second); httpapi.BodyBytesHeld(h) != int64(len(first)); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first request holds %d bytes of the budget, want %d", httpapi.BodyBytesHeld(h), len(first))
		}
	}

	r := post(t, url, "Bearer "+tok, body("u-second"))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" ||
		r.body.Error == nil || r.body.Error.Code != ingest.CodeUnavailable {
		t.Fatalf("second body while the first is in flight: status %d, Retry-After %q, %+v; want 503 with Retry-After",
			r.status, r.header.Get("Retry-After"), r.body.Error)
	}
	// A small request still fits beside the large one.
	if r := post(t, url, "Bearer "+tok, batchJSON(turnJSON("u-small", "", "I like tea"))); r.status != http.StatusAccepted {
		t.Fatalf("small request: status %d %+v", r.status, r.body.Error)
	}

	if _, err := pw.Write([]byte(first[1024:])); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	resp := <-done
	if resp == nil {
		t.FailNow()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("first request: status %d", resp.StatusCode)
	}
	if r := post(t, url, "Bearer "+tok, body("u-second")); r.status != http.StatusAccepted {
		t.Fatalf("second body after the first finished: status %d %+v", r.status, r.body.Error)
	}
}
