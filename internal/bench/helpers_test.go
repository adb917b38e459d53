package bench_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"
)

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v != 0 {
		return v
	}
	return def
}
