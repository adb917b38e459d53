package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{name: "defaults", env: nil, check: func(t *testing.T, c Config) {
			if c.HTTPAddr != ":8080" || c.LocalPGPort != 55432 || c.NATSPort != 4222 || c.StreamReplicas != 1 ||
				c.TurnsMaxAge != 720*time.Hour || c.DuplicateWindow != 10*time.Minute || c.DataDir != ".engram" {
				t.Fatalf("defaults: %+v", c)
			}
		}},
		{name: "overrides", env: map[string]string{"ENGRAM_HTTP_ADDR": ":9090", "ENGRAM_STREAM_REPLICAS": "3", "ENGRAM_TURNS_MAX_AGE": "48h"},
			check: func(t *testing.T, c Config) {
				if c.HTTPAddr != ":9090" || c.StreamReplicas != 3 || c.TurnsMaxAge != 48*time.Hour {
					t.Fatalf("overrides: %+v", c)
				}
			}},
		{name: "bad port", env: map[string]string{"ENGRAM_PG_PORT": "x"}, wantErr: "ENGRAM_PG_PORT"},
		{name: "port out of range", env: map[string]string{"ENGRAM_NATS_PORT": "70000"}, wantErr: "ENGRAM_NATS_PORT"},
		{name: "short duplicate window", env: map[string]string{"ENGRAM_DUPLICATE_WINDOW": "1m"}, wantErr: "ENGRAM_DUPLICATE_WINDOW"},
		{name: "bad duration", env: map[string]string{"ENGRAM_TURNS_MAX_AGE": "forever"}, wantErr: "ENGRAM_TURNS_MAX_AGE"},
		{name: "replicas 2", env: map[string]string{"ENGRAM_STREAM_REPLICAS": "2"}, wantErr: "ENGRAM_STREAM_REPLICAS"},
		{name: "llm without model", env: map[string]string{"ENGRAM_LLM_BASE_URL": "http://x"}, wantErr: "ENGRAM_LLM_MODEL"},
		{name: "embed without model", env: map[string]string{"ENGRAM_EMBED_BASE_URL": "http://x"}, wantErr: "ENGRAM_EMBED_MODEL"},
		{name: "bad log level", env: map[string]string{"ENGRAM_LOG_LEVEL": "loud"}, wantErr: "ENGRAM_LOG_LEVEL"},
		{name: "bad weights", env: map[string]string{"ENGRAM_SEARCH_WEIGHTS": "rrf=x"}, wantErr: "ENGRAM_SEARCH_WEIGHTS"},
		{name: "unknown weight", env: map[string]string{"ENGRAM_SEARCH_WEIGHTS": "luck=1"}, wantErr: "ENGRAM_SEARCH_WEIGHTS"},
		{name: "weights", env: map[string]string{"ENGRAM_SEARCH_WEIGHTS": "rrf=0.8,recency=0.2"}, check: func(t *testing.T, c Config) {
			if c.SearchWeights["rrf"] != 0.8 || c.SearchWeights["recency"] != 0.2 || c.SearchWeights["importance"] != 0 {
				t.Fatalf("weights: %v", c.SearchWeights)
			}
		}},
		{name: "bad embed turns", env: map[string]string{"ENGRAM_EMBED_TURNS": "maybe"}, wantErr: "ENGRAM_EMBED_TURNS"},
		{name: "bad cron", env: map[string]string{"ENGRAM_CONSOLIDATE_CRON": "every day"}, wantErr: "ENGRAM_CONSOLIDATE_CRON"},
		{name: "embed turns auto offline", env: nil, check: func(t *testing.T, c Config) {
			if c.EmbedTurns || c.ConsolidateCron != "0 3 * * *" {
				t.Fatalf("offline defaults: EmbedTurns %v, cron %q", c.EmbedTurns, c.ConsolidateCron)
			}
		}},
		{name: "embed turns auto with a model", env: map[string]string{"ENGRAM_EMBED_BASE_URL": "http://x", "ENGRAM_EMBED_MODEL": "m"},
			check: func(t *testing.T, c Config) {
				if !c.EmbedTurns {
					t.Fatal("auto did not turn turn embedding on with an embedding model")
				}
			}},
		{name: "redact keep", env: map[string]string{"ENGRAM_REDACT_KEEP": "phone, email"}, check: func(t *testing.T, c Config) {
			if strings.Join(c.RedactKeep, ",") != "phone,email" {
				t.Fatalf("RedactKeep = %v", c.RedactKeep)
			}
		}},
		{name: "redact keep refuses secrets", env: map[string]string{"ENGRAM_REDACT_KEEP": "phone,password"}, wantErr: "ENGRAM_REDACT_KEEP"},
		{name: "embed turns forced on", env: map[string]string{"ENGRAM_EMBED_TURNS": "true"}, check: func(t *testing.T, c Config) {
			if !c.EmbedTurns {
				t.Fatal("ENGRAM_EMBED_TURNS=true ignored")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig(envMap(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want an error naming %s, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		env      map[string]string
		wantCode int
		wantOut  string
	}{
		{[]string{"--help"}, nil, 0, "Commands:"},
		{nil, nil, 2, "Usage: engram"},
		{[]string{"nonsense"}, nil, 2, `unknown command "nonsense"`},
		{[]string{"migrate", "sideways"}, nil, 2, `unknown argument "sideways"`},
		{[]string{"migrate", "--help"}, nil, 0, "Usage: engram migrate"},
		{[]string{"worker", "painter"}, nil, 2, `unknown worker "painter"`},
		{[]string{"token"}, nil, 2, "--tenant"},
		{[]string{"migrate"}, map[string]string{"ENGRAM_PG_PORT": "nope"}, 2, "ENGRAM_PG_PORT"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, "_"), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, envMap(tt.env), &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, errOut.String())
			}
			if all := out.String() + errOut.String(); !strings.Contains(all, tt.wantOut) {
				t.Fatalf("output lacks %q:\n%s", tt.wantOut, all)
			}
		})
	}
}

func TestTokenCommand(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"token", "--tenant", "acme", "--name", "ci"}, envMap(nil), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "egm_") || !strings.Contains(out.String(), "acme/ci=sha256:") {
		t.Fatalf("output: %s", out.String())
	}
}
