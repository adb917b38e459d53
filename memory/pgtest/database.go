package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// NewDatabase creates a fresh, migrated database outside a test (an Example or a
// TestMain, which have no testing.TB) and returns the application role's URL of it and the function that
// drops it.
func NewDatabase(ctx context.Context, label string) (url string, drop func(), err error) {
	tmpl, err := ensureTemplate(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: preparing the template database: %w", err)
	}
	admin, err := connectAdmin(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "engram_t_" + sanitize(label) + "_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tmpl}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	drop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if admin, err := connectAdmin(ctx); err == nil {
			defer admin.Close(ctx)
			_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		}
	}
	// The services connect as the application role, as in production.
	app, err := appServerURL()
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	u, err := withDatabase(app, name)
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("pgtest: %w", err)
	}
	return u, drop, nil
}
