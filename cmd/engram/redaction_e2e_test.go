package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/redact/redacttest"
	"github.com/engramhq/engram/memory/pgtest"
)

// TestRedactionHoldsThroughThePipeline sends the redaction corpus (two generated values
// per sentence: at least 100 secrets and personal identifiers of at least 40 kinds)
// through the real pipeline — HTTP ingest, JetStream, extractor, resolver, PostgreSQL —
// as user content, assistant echoes, tool errors, turn metadata and explicit
// memories, then scans every text, JSON and tsvector column of every table and every
// message of every stream: none of them may be found (issue 12, item 3).
func TestRedactionHoldsThroughThePipeline(t *testing.T) {
	t.Parallel()
	_, app, c := testNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cases := redacttest.Corpus(t, 11, 12)
	at := time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC)
	var turns []client.Turn
	var needles []string
	// Each sentence also carries a harmless canary, which must be found where the
	// sentence went: proof that the scans read the places the secrets would be.
	var canaries []string
	carriers := map[string]int{}
	for i, cs := range cases {
		needles = append(needles, cs.Secrets...)
		canary := fmt.Sprintf("kqz%04dwv", i)
		cs.Text += " (ref " + canary + ")"
		when := at.Add(time.Duration(i) * time.Minute)
		user := fmt.Sprintf("u%d", i%3)
		id := fmt.Sprintf("r%03d", i)
		switch i % 5 {
		case 0:
			carriers["user content"]++
			canaries = append(canaries, canary)
			turns = append(turns, client.Turn{TurnID: id, UserID: user, SessionID: "s", Role: client.RoleUser, Content: cs.Text, OccurredAt: when})
		case 1:
			carriers["assistant echo"]++
			canaries = append(canaries, canary)
			turns = append(turns, client.Turn{TurnID: id, UserID: user, SessionID: "s", Role: client.RoleAssistant,
				Content: "Got it, I will remember this: " + cs.Text, OccurredAt: when})
		case 2:
			carriers["tool error"]++
			canaries = append(canaries, canary)
			turns = append(turns, client.Turn{TurnID: id, UserID: user, SessionID: "s", Role: client.RoleTool,
				Content: "the deploy step failed", Tool: &client.ToolCall{Name: "deploy", Status: "failure", Error: "request rejected: " + cs.Text},
				OccurredAt: when})
		case 3:
			carriers["metadata"]++
			canaries = append(canaries, canary)
			turns = append(turns, client.Turn{TurnID: id, UserID: user, SessionID: "s", Role: client.RoleUser,
				Content: "I always want the weekly report on Monday mornings", OccurredAt: when,
				Metadata: map[string]any{"note": cs.Text, "headers": map[string]any{"lines": []any{"x-trace: 1", cs.Text}}}})
		case 4:
			carriers["explicit memory"]++
			_, err := c.Remember(ctx, client.RememberRequest{ID: id, UserID: user, Category: "fact", Content: "Remember this for later: " + cs.Text})
			var apiErr *client.APIError
			if err != nil && !(errors.As(err, &apiErr) && apiErr.Status == 400 && strings.Contains(apiErr.Message, "secret")) {
				t.Fatalf("remembering %s: %v", cs.Kind, err)
			}
			if err == nil {
				canaries = append(canaries, canary)
			}
		}
	}
	if _, err := c.AddTurns(ctx, turns...); err != nil {
		t.Fatal(err)
	}
	if err := waitDrained(ctx, app.JS); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.Count(t, app.Pool, "t1", `SELECT count(*) FROM turns`); n != len(turns) {
		t.Fatalf("stored %d turns, want %d", n, len(turns))
	}
	if n := pgtest.Count(t, app.Pool, "t1", `SELECT count(*) FROM memories`); n == 0 {
		t.Fatal("no memory was stored: the scan would prove nothing")
	}
	t.Logf("%d secrets of %d sentences, carried as %v", len(needles), len(cases), carriers)

	owner := pgtest.OwnerURLOf(t, app.Config.DatabaseURL)
	found := scanTables(t, ctx, owner, "t1", needles)
	found = append(found, scanStreams(t, ctx, app.JS, needles)...)
	for _, f := range found {
		t.Error(f)
	}
	inTables := strings.Join(scanTables(t, ctx, owner, "t1", canaries), "\n")
	inStreams := strings.Join(scanStreams(t, ctx, app.JS, canaries), "\n")
	for _, c := range canaries {
		if !strings.Contains(inTables, c) || !strings.Contains(inStreams, c) {
			t.Errorf("canary %s: found in tables %v, in streams %v: the scan misses where it went",
				c, strings.Contains(inTables, c), strings.Contains(inStreams, c))
		}
	}
}

// scanTables reads every text, varchar, JSON, tsvector and text[] column of every
// table, as the owner in tenant's transaction (row-level security binds the owner to
// the tenant on content tables and lets it read the operator tables whole), and
// reports where any needle appears (case-insensitively: tsvector lexemes are lower-case).
func scanTables(t *testing.T, ctx context.Context, ownerURL, tenant string, needles []string) []string {
	t.Helper()
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT c.relname, string_agg(quote_ident(a.attname) || '::text', ', ' ORDER BY a.attnum)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relkind IN ('r', 'p') AND a.atttypid IN ('text'::regtype, 'varchar'::regtype, 'json'::regtype,
			'jsonb'::regtype, 'tsvector'::regtype, 'text[]'::regtype)
		GROUP BY c.relname ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	type table struct{ name, cols string }
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var x table
		return x, r.Scan(&x.name, &x.cols)
	})
	if err != nil {
		t.Fatal(err)
	}
	lower := make([]string, len(needles))
	for i, n := range needles {
		lower[i] = strings.ToLower(n)
	}
	var found []string
	scanned := 0
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('engram.tenant', $1, true)`, tenant); err != nil {
			return err
		}
		for _, tb := range tables {
			rows, err := tx.Query(ctx, `SELECT concat_ws(E'\x1f', `+tb.cols+`) FROM `+pgx.Identifier{tb.name}.Sanitize())
			if err != nil {
				return fmt.Errorf("scanning %s: %w", tb.name, err)
			}
			vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("scanning %s: %w", tb.name, err)
			}
			for _, v := range vals {
				scanned++
				v = strings.ToLower(v)
				for i, n := range lower {
					if strings.Contains(v, n) {
						found = append(found, fmt.Sprintf("table %s holds %q", tb.name, needles[i]))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned == 0 {
		t.Fatal("scanned no rows")
	}
	return found
}

// scanStreams reads every message (data and headers) of every JetStream stream,
// including the DLQ and the KV buckets, and reports where any needle appears.
func scanStreams(t *testing.T, ctx context.Context, js jetstream.JetStream, needles []string) []string {
	t.Helper()
	var found []string
	names := js.StreamNames(ctx)
	scanned := 0
	for name := range names.Name() {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Fatalf("reading %s #%d: %v", name, seq, err)
			}
			scanned++
			var hdr strings.Builder
			for k, vs := range m.Header {
				hdr.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
			}
			for _, n := range needles {
				if strings.Contains(string(m.Data), n) || strings.Contains(hdr.String(), n) {
					found = append(found, fmt.Sprintf("stream %s message %d holds %q", name, seq, n))
				}
			}
		}
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	if scanned == 0 {
		t.Fatal("scanned no stream message")
	}
	return found
}
