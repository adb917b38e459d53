package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
)

func TestParseExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time // zero: an error
	}{
		{"720h", now.Add(720 * time.Hour)},
		{"30d", now.AddDate(0, 0, 30)},
		{"2027-01-01T00:00:00Z", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2027-01-01T02:00:00+02:00", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2020-01-01T00:00:00Z", time.Time{}}, // in the past
		{"-1h", time.Time{}},
		{"tomorrow", time.Time{}},
		{"0d", time.Time{}},
	} {
		got, err := parseExpiry(tc.in, now)
		if tc.want.IsZero() != (err != nil) || (err == nil && !got.Equal(tc.want)) {
			t.Errorf("parseExpiry(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// runCmd runs engram with args and returns stdout; it fails the test on a non-zero exit
// unless wantCode says otherwise.
func runCmd(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, envMap(nil), &out, &errOut); code != wantCode {
		t.Fatalf("engram %s: exit %d, want %d; stderr: %s", strings.Join(args, " "), code, wantCode, errOut.String())
	}
	return out.String() + errOut.String()
}

func TestTokenCommandScopeAndRevoke(t *testing.T) {
	t.Parallel()
	var made []struct {
		Token   string             `json:"token"`
		Entry   httpapi.TokenEntry `json:"entry"`
		EnvItem string             `json:"env_item"`
	}
	for _, args := range [][]string{
		{"token", "--tenant", "acme", "--name", "app", "--user", "alice", "--user", "bob", "--expires", "2999-01-01T00:00:00Z", "--json"},
		{"token", "--tenant", "acme", "--name", "ops", "--json"},
	} {
		var m struct {
			Token   string             `json:"token"`
			Entry   httpapi.TokenEntry `json:"entry"`
			EnvItem string             `json:"env_item"`
		}
		if err := json.Unmarshal([]byte(runCmd(t, 0, args...)), &m); err != nil {
			t.Fatal(err)
		}
		made = append(made, m)
	}
	app := made[0]
	if strings.Join(app.Entry.Users, ",") != "alice,bob" || app.Entry.ExpiresAt == nil || !strings.Contains(app.EnvItem, ";users=alice|bob;expires=2999-01-01T00:00:00Z") {
		t.Fatalf("entry %+v, item %s", app.Entry, app.EnvItem)
	}
	// The printed ENGRAM_TOKENS item loads as the same token.
	fromEnv, err := httpapi.ParseTokens(app.EnvItem)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := fromEnv.Check(app.Token); err != nil || p.Name != "app" || !p.MayActFor("bob") || p.MayActFor("carol") {
		t.Fatalf("ENGRAM_TOKENS item: %+v, %v", p, err)
	}

	// The printed file entries make a tokens file; revoke one of them by name.
	path := filepath.Join(t.TempDir(), "tokens.json")
	b, _ := json.Marshal(httpapi.TokenFile{Tokens: []httpapi.TokenEntry{made[0].Entry, made[1].Entry}})
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	out := runCmd(t, 0, "token", "revoke", "--file", path, "--name", "app")
	if !strings.Contains(out, "revoked 1 token(s)") {
		t.Fatalf("revoke output: %s", out)
	}
	tokens := &httpapi.Tokens{}
	if _, err := loadTokenFile(tokens, path); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Check(app.Token); !errors.Is(err, httpapi.ErrTokenRevoked) {
		t.Fatalf("revoked token: %v", err)
	}
	if _, err := tokens.Check(made[1].Token); err != nil {
		t.Fatalf("the other token: %v", err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after revoke, want 0640", st.Mode().Perm())
	}
	// Revoking by the token itself, and again (nothing left to revoke: an error).
	runCmd(t, 0, "token", "revoke", "--file", path, "--token", made[1].Token)
	runCmd(t, 1, "token", "revoke", "--file", path, "--token", made[1].Token)
	runCmd(t, 2, "token", "revoke", "--file", path)
	runCmd(t, 2, "token", "--tenant", "acme", "--user", "bad id")
	runCmd(t, 2, "token", "--tenant", "acme", "--expires", "2020-01-01T00:00:00Z")
}

// TestWatchTokenFile: serve's tokens follow the file, on change and on SIGHUP; a file
// that does not load keeps the tokens in use.
func TestWatchTokenFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.json")
	write := func(entries ...httpapi.TokenEntry) {
		t.Helper()
		b, _ := json.Marshal(httpapi.TokenFile{Tokens: entries})
		if err := writeFileAtomic(path, b); err != nil {
			t.Fatal(err)
		}
	}
	a := httpapi.TokenEntry{Tenant: "acme", Name: "a", SHA256: httpapi.HashToken("tok-a")}
	write(a)
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "acme", Name: "added", SHA256: httpapi.HashToken("tok-added")}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := loadTokenFile(tokens, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchTokenFile(ctx, tokens, path, sum, 5*time.Millisecond, hup, slog.New(slog.DiscardHandler))
	}()
	// waitFor polls cond: the watcher runs on its own schedule.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	revokedA := a
	revokedA.Revoked = true
	write(revokedA, httpapi.TokenEntry{Tenant: "acme", Name: "b", SHA256: httpapi.HashToken("tok-b")})
	waitFor("revocation of a", func() bool { _, err := tokens.Check("tok-a"); return errors.Is(err, httpapi.ErrTokenRevoked) })
	if _, err := tokens.Check("tok-b"); err != nil {
		t.Fatalf("new token b: %v", err)
	}
	if _, err := tokens.Check("tok-added"); err != nil {
		t.Fatalf("a token added in code was lost by the re-read: %v", err)
	}
	// A broken file keeps the tokens in use, even when forced by SIGHUP.
	if err := os.WriteFile(path, []byte(`{"tokens":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	hup <- nil
	write(revokedA, httpapi.TokenEntry{Tenant: "acme", Name: "b", SHA256: httpapi.HashToken("tok-b")},
		httpapi.TokenEntry{Tenant: "acme", Name: "c", SHA256: httpapi.HashToken("tok-c")})
	waitFor("token c after the broken file", func() bool { _, err := tokens.Check("tok-c"); return err == nil })
	if _, err := tokens.Check("tok-b"); err != nil {
		t.Fatalf("token b lost around a broken file: %v", err)
	}
	cancel()
	<-done

	// With a poll that never comes, SIGHUP alone re-reads the file.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		watchTokenFile(ctx2, tokens, path, [32]byte{}, time.Hour, hup, slog.New(slog.DiscardHandler))
	}()
	revokedB := httpapi.TokenEntry{Tenant: "acme", Name: "b", SHA256: httpapi.HashToken("tok-b"), Revoked: true}
	write(revokedA, revokedB)
	hup <- nil
	waitFor("revocation of b on SIGHUP", func() bool { _, err := tokens.Check("tok-b"); return errors.Is(err, httpapi.ErrTokenRevoked) })
	cancel2()
	<-done2
}
