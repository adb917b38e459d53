package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/memory"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runToken(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "revoke" {
		return runTokenRevoke(ctx, env, args[1:])
	}
	fs := newFlagSet(env, "token",
		"token --tenant NAME [--user ID]... [--expires 720h|30d|2027-01-01T00:00:00Z] [--name LABEL] [--json]\n"+
			"       engram token revoke --file PATH (--name LABEL | --sha256 HASH | --token TOKEN) [--tenant NAME] [--json]\n\n"+
			"Prints a new API token and the entry to add to ENGRAM_TOKENS or to the ENGRAM_TOKENS_FILE list;\n"+
			"only the entry (the token's hash) is stored. engram serve re-reads the tokens file when it\n"+
			"changes and on SIGHUP, so `engram token revoke` (or \"revoked\": true) takes effect without a restart.")
	tenant := fs.String("tenant", "", "tenant the token authenticates as (required)")
	name := fs.String("name", "", "a label for the token, recorded as the actor of its writes")
	var users stringList
	fs.Var(&users, "user", "limit the token to this user id (repeatable; none: every user of the tenant)")
	expires := fs.String("expires", "", "when the token stops working: a duration from now (720h, 30d) or an RFC 3339 time")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := checkTenantFlag(*tenant, true); err != nil {
		return err
	}
	for _, u := range users {
		if fe := memory.CheckID("--user", u, memory.MaxIDLength); fe != nil {
			return usagef("%v", fe.Reason())
		}
	}
	if strings.ContainsAny(*name, ",;=/") {
		return usagef("--name: must not contain , ; = or /, which ENGRAM_TOKENS uses as separators")
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		return err
	}
	entry := httpapi.TokenEntry{Tenant: *tenant, Name: *name, SHA256: httpapi.HashToken(tok), Users: users}
	if *expires != "" {
		at, err := parseExpiry(*expires, time.Now())
		if err != nil {
			return usagef("--expires: %v", err)
		}
		entry.ExpiresAt = &at
	}
	item := tokenSpecItem(entry)
	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"token": tok, "entry": entry, "env_item": item})
	}
	line, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "token:       %s\n", tok)
	fmt.Fprintf(env.Stdout, "ENGRAM_TOKENS entry (only the hash is stored): %s\n", item)
	fmt.Fprintf(env.Stdout, "ENGRAM_TOKENS_FILE entry (add to \"tokens\"):  %s\n", line)
	return nil
}

var daysRe = regexp.MustCompile(`^(\d+)d$`)

// parseExpiry reads --expires: a Go duration, a number of days ("30d") or an RFC 3339
// time, which must lie in the future.
func parseExpiry(v string, now time.Time) (time.Time, error) {
	var at time.Time
	if m := daysRe.FindStringSubmatch(v); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: %w", v, err)
		}
		at = now.AddDate(0, 0, n)
	} else if d, err := time.ParseDuration(v); err == nil {
		at = now.Add(d)
	} else if t, err := time.Parse(time.RFC3339, v); err == nil {
		at = t
	} else {
		return time.Time{}, fmt.Errorf("%q is neither a duration (720h, 30d) nor an RFC 3339 time (2027-01-01T00:00:00Z)", v)
	}
	if !at.After(now) {
		return time.Time{}, fmt.Errorf("%s is not in the future", at.UTC().Format(time.RFC3339))
	}
	return at.UTC().Truncate(time.Second), nil
}

// tokenSpecItem is the entry in ENGRAM_TOKENS form (httpapi.ParseTokenSpec).
func tokenSpecItem(e httpapi.TokenEntry) string {
	label := e.Tenant
	if e.Name != "" {
		label += "/" + e.Name
	}
	item := label + "=" + e.SHA256
	if len(e.Users) > 0 {
		item += ";users=" + strings.Join(e.Users, "|")
	}
	if e.ExpiresAt != nil {
		item += ";expires=" + e.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if e.Revoked {
		item += ";revoked"
	}
	return item
}

// runTokenRevoke marks entries of a tokens file revoked. The file is replaced
// atomically (a temporary file renamed over it), so serve never reads half of it.
func runTokenRevoke(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "token revoke", "token revoke --file PATH (--name LABEL | --sha256 HASH | --token TOKEN) [--tenant NAME] [--json]")
	file := fs.String("file", env.Config.TokensFile, "the tokens file (default: ENGRAM_TOKENS_FILE)")
	name := fs.String("name", "", "revoke the tokens with this name")
	hash := fs.String("sha256", "", "revoke the token with this hash (sha256:<hex>, as in the file)")
	token := fs.String("token", "", "revoke this token (its hash is looked up)")
	tenant := fs.String("tenant", "", "only entries of this tenant")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return usagef("--file: name the tokens file (or set ENGRAM_TOKENS_FILE); a token in ENGRAM_TOKENS is revoked by removing it, or adding ;revoked, and restarting")
	}
	set := 0
	for _, v := range []string{*name, *hash, *token} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		return usagef("name exactly one of --name, --sha256 and --token")
	}
	want := strings.TrimPrefix(*hash, "sha256:")
	if *token != "" {
		want = strings.TrimPrefix(httpapi.HashToken(*token), "sha256:")
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		return fmt.Errorf("reading the tokens file: %w", err)
	}
	var f httpapi.TokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("parsing %s: %w", *file, err)
	}
	var revoked []string
	for i := range f.Tokens {
		e := &f.Tokens[i]
		if *tenant != "" && e.Tenant != *tenant {
			continue
		}
		match := (*name != "" && e.Name == *name) || (want != "" && strings.EqualFold(strings.TrimPrefix(e.SHA256, "sha256:"), want))
		if match && !e.Revoked {
			e.Revoked = true
			revoked = append(revoked, e.Tenant+"/"+e.Name)
		}
	}
	if len(revoked) == 0 {
		return errors.New("no unrevoked token in " + *file + " matches")
	}
	// Validate what is written with the parser serve uses, so a revocation never
	// leaves a file serve would refuse.
	if _, err := httpapi.NewTokens(f.Tokens); err != nil {
		return fmt.Errorf("the tokens file would not load after the change: %w", err)
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(*file, append(out, '\n')); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"file": *file, "revoked": revoked})
	}
	fmt.Fprintf(env.Stdout, "revoked %d token(s) in %s: %s\n", len(revoked), *file, strings.Join(revoked, ", "))
	fmt.Fprintf(env.Stdout, "engram serve re-reads the file within %s (or at once on SIGHUP)\n", tokenFilePoll)
	return nil
}

// writeFileAtomic replaces path with data, keeping its mode.
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing the tokens file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the tokens file: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the tokens file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the tokens file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the tokens file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing the tokens file: %w", err)
	}
	return nil
}
