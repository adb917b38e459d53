package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory/pgtest"
)

// engram index: the owner role maintains, the application role alone is refused, and
// bad flags are usage errors.
func TestIndexCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app := pgtest.URL(t)
	owner := pgtest.OwnerURLOf(t, app)
	both := map[string]string{"ENGRAM_DATABASE_URL": app, "ENGRAM_MIGRATE_DATABASE_URL": owner}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"maintain", []string{"index"}, both, 0, "0 built, 0 rebuilt, 0 dropped, 0 kept"},
		{"maintain as JSON", []string{"index", "maintain", "--json"}, both, 0, `"built": null`},
		{"list", []string{"index", "list"}, both, 0, "TENANT"},
		{"without the owner", []string{"index"}, map[string]string{"ENGRAM_DATABASE_URL": app}, 1, "ENGRAM_MIGRATE_DATABASE_URL"},
		{"bad threshold", []string{"index", "--threshold", "1"}, both, 2, "--threshold must be at least 2"},
		{"bad argument", []string{"index", "list", "extra"}, both, 2, `unknown argument "extra"`},
		{"help", []string{"index", "--help"}, both, 0, "partial HNSW index"},
		{"bench large bad ladder", []string{"bench", "large", "--ladder", "10,x"}, both, 2, `--ladder: "x" is not a positive owner size`},
		{"bench large bad ef", []string{"bench", "large", "--ef-search", "5000"}, both, 2, "--ef-search must be at most 1000"},
		{"bench large bad runs", []string{"bench", "large", "--runs", "0"}, both, 2, "--runs must be positive, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			tt.env["ENGRAM_LOG_LEVEL"] = "error"
			code := run(ctx, tt.args, envMap(tt.env), &out, &errOut)
			if code != tt.code || !strings.Contains(out.String()+errOut.String(), tt.want) {
				t.Fatalf("engram %v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out.String(), errOut.String())
			}
		})
	}
}
