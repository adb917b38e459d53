package main

import (
	"io"
	"log/slog"
)

// logKeys maps the short keys some packages log with to the stable names operators
// query on, so every line says tenant, stream, consumer, turn_id, memory_id,
// retrieval_id, error … whichever package wrote it.
var logKeys = map[string]string{
	"err":       "error",
	"turn":      "turn_id",
	"memory":    "memory_id",
	"retrieval": "retrieval_id",
	"candidate": "candidate_id",
	"user":      "user_id",
	"session":   "session_id",
	"task":      "task_id",
	"run":       "run_id",
}

// newLogger is the process logger: ENGRAM_LOG_FORMAT text or json, ENGRAM_LOG_LEVEL,
// with the stable keys of logKeys. At info level engram logs ids and counts, never
// a turn's or a memory's content.
func newLogger(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: stableKeys}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func stableKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 {
		if k, ok := logKeys[a.Key]; ok {
			a.Key = k
		}
	}
	if err, ok := a.Value.Any().(error); ok && a.Value.Kind() == slog.KindAny {
		a.Value = slog.StringValue(err.Error())
	}
	return a
}
