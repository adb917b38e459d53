package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/engramhq/engram/migrations"
)

func runMigrate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "migrate", "migrate [up|status] [--database-url URL] [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	dbURL := fs.String("database-url", "", "the owner role's PostgreSQL URL (default: ENGRAM_MIGRATE_DATABASE_URL, or the local cluster's owner)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	// The subcommand may stand anywhere among the flags (migrate --json status).
	sub := "up"
	if len(pos) > 0 && (pos[0] == "up" || pos[0] == "status") {
		sub, pos = pos[0], pos[1:]
	}
	if len(pos) > 0 {
		return usagef("unknown argument %q: want up or status", pos[0])
	}
	app := env.newApp()
	defer app.Close()
	// Migrations run as the owner role, never as the application role (which cannot
	// create or alter tables); status may be read by either.
	url, variable := *dbURL, "--database-url"
	if url == "" {
		url, variable = app.migrateURL(), "ENGRAM_MIGRATE_DATABASE_URL"
	}
	if url == "" && sub == "status" {
		url, variable = app.databaseURL(), "ENGRAM_DATABASE_URL"
	}
	if url == "" {
		return usagef("migrations run as the owner role: set ENGRAM_MIGRATE_DATABASE_URL or pass --database-url " +
			"(ENGRAM_DATABASE_URL is the application role's, which owns nothing)")
	}
	conn, err := app.connectOrStart(ctx, url, variable)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m := migrations.Default()
	if sub == "up" {
		done, err := m.Up(ctx, conn)
		if err != nil {
			return err
		}
		if *asJSON {
			out := []map[string]any{}
			for _, d := range done {
				out = append(out, map[string]any{"version": d.Version, "name": d.Name})
			}
			return json.NewEncoder(env.Stdout).Encode(map[string]any{"applied": out})
		}
		if len(done) == 0 {
			fmt.Fprintln(env.Stdout, "database is up to date")
		}
		for _, d := range done {
			fmt.Fprintf(env.Stdout, "applied %04d_%s\n", d.Version, d.Name)
		}
		return nil
	}
	st, err := m.Status(ctx, conn)
	if err != nil {
		return err
	}
	if *asJSON {
		type row struct {
			Version   int        `json:"version"`
			Name      string     `json:"name"`
			Applied   bool       `json:"applied"`
			AppliedAt *time.Time `json:"applied_at,omitempty"`
		}
		var rows []row
		for _, s := range st {
			r := row{Version: s.Version, Name: s.Name, Applied: s.Applied}
			if s.Applied {
				at := s.AppliedAt
				r.AppliedAt = &at
			}
			rows = append(rows, r)
		}
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"migrations": rows})
	}
	tw := newTabWriter(env.Stdout, false)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATUS\tAPPLIED AT")
	for _, s := range st {
		status, at := "pending", "-"
		if s.Applied {
			status, at = "applied", s.AppliedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%04d\t%s\t%s\t%s\n", s.Version, s.Name, status, at)
	}
	return tw.Flush()
}
