package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory/pgtest"
)

// The two roles from the command line: migrations refuse to run without the owner's
// URL, and run with it; a command connecting as the owner is refused, naming the role.
func TestMigrateAsOwnerServeAsApp(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app := pgtest.URL(t)
	owner := pgtest.OwnerURLOf(t, app)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"migrate without the owner", []string{"migrate"}, map[string]string{"ENGRAM_DATABASE_URL": app}, 2, "ENGRAM_MIGRATE_DATABASE_URL"},
		{"migrate as the owner", []string{"migrate", "--database-url", owner}, map[string]string{"ENGRAM_DATABASE_URL": app}, 0, "up to date"},
		{"status as the app", []string{"migrate", "status"}, map[string]string{"ENGRAM_DATABASE_URL": app}, 0, "app_role"},
		{"serve as the owner", []string{"memory", "list", "--tenant", "t1", "--user", "u1"}, map[string]string{"ENGRAM_DATABASE_URL": owner}, 1, `"engram" owns objects`},
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
