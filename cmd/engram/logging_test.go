package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/engramhq/engram/streams"
)

func TestJSONLogsHaveStableKeys(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(envMap(map[string]string{"ENGRAM_LOG_FORMAT": "json"}))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	log := newLogger(&b, cfg).With("stream", "TURNS", "consumer", "extractor")
	log.Warn("handler failed", "tenant", "t1", "turn", "a1", "memory", "m1", "err", errors.New("boom"),
		"stats", streams.Stats{Delivered: 3})
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON object: %q (%v)", b.String(), err)
	}
	for k, want := range map[string]any{"level": "WARN", "msg": "handler failed", "stream": "TURNS", "consumer": "extractor",
		"tenant": "t1", "turn_id": "a1", "memory_id": "m1", "error": "boom"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v (%s)", k, line[k], want, b.String())
		}
	}
	if st, ok := line["stats"].(map[string]any); !ok || st["delivered"] != 3.0 {
		t.Errorf("stats logged as %v, want fields", line["stats"])
	}
	if _, err := LoadConfig(envMap(map[string]string{"ENGRAM_LOG_FORMAT": "xml"})); err == nil ||
		!strings.Contains(err.Error(), "ENGRAM_LOG_FORMAT") {
		t.Errorf("a bad format: %v", err)
	}
}
