package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/consolidator"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/redact"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/retriever"
)

// Config is everything engram reads from its environment. Only this package reads
// the environment; every other package takes its part of Config as arguments.
type Config struct {
	// DatabaseURL (ENGRAM_DATABASE_URL) is the PostgreSQL URL serve and the workers
	// connect with: the application role (engram_app), which owns nothing and so cannot
	// lift row-level security. Empty: the project-local cluster of scripts/services.sh,
	// started on demand.
	DatabaseURL string
	// MigrateDatabaseURL (ENGRAM_MIGRATE_DATABASE_URL) is the owner role's URL, which
	// migrations run with. Empty: the local cluster's owner when DatabaseURL is empty
	// too; otherwise commands check the schema is current and `engram migrate` needs
	// --database-url.
	MigrateDatabaseURL string
	// RedactKeep (ENGRAM_REDACT_KEEP, e.g. "phone,email") lists personal identifiers
	// redaction leaves in place (phone, email, address); secrets are always redacted.
	RedactKeep []string
	// LocalPGPort (ENGRAM_PG_PORT, default 55432) is the port of that local cluster.
	LocalPGPort int
	// DBMaxConns (ENGRAM_DB_MAX_CONNS, default 16) bounds the connection pool.
	DBMaxConns int
	// NATSURL (ENGRAM_NATS_URL) is the NATS server. Empty: an in-process JetStream
	// server storing under DataDir/nats (or the one `engram dev` runs, when it is up).
	NATSURL string
	// NATSPort (ENGRAM_NATS_PORT, default 4222) is where `engram serve` and `engram dev`
	// serve the embedded NATS; other commands find that server through the record it
	// keeps in DataDir/nats.
	NATSPort int
	// HTTPAddr (ENGRAM_HTTP_ADDR, default ":8080") is the API's listen address.
	HTTPAddr string
	// DataDir (ENGRAM_DATA_DIR, default ".engram") holds local state: the embedded
	// JetStream store and the development token.
	DataDir string
	// Tokens (ENGRAM_TOKENS) maps API tokens to tenants: "tenant[/name]=sha256:<hex>,…".
	Tokens string
	// TokensFile (ENGRAM_TOKENS_FILE) is a JSON file {"tokens":[{"tenant","name","sha256"}]}.
	TokensFile string
	// StreamReplicas (ENGRAM_STREAM_REPLICAS, default 1; 3 on a cluster).
	StreamReplicas int
	// TurnsMaxAge (ENGRAM_TURNS_MAX_AGE, default 720h) is how long TURNS keeps messages.
	TurnsMaxAge time.Duration
	// DuplicateWindow (ENGRAM_DUPLICATE_WINDOW, default 10m, at least 10m).
	DuplicateWindow time.Duration
	// LLM (ENGRAM_LLM_BASE_URL, ENGRAM_LLM_API_KEY, ENGRAM_LLM_MODEL): an
	// OpenAI-compatible chat model. Empty base URL: offline rules.
	LLMBaseURL, LLMAPIKey, LLMModel string
	// Embeddings (ENGRAM_EMBED_BASE_URL, ENGRAM_EMBED_API_KEY, ENGRAM_EMBED_MODEL,
	// ENGRAM_EMBED_DIMS). Empty base URL: the local engram-hash-v1 embedder.
	EmbedBaseURL, EmbedAPIKey, EmbedModel string
	EmbedDims                             int
	// EmbedTurns (ENGRAM_EMBED_TURNS: auto, true or false; default auto) stores a vector
	// per turn and adds a vector side to the turns layer's search. auto means on with a
	// configured embedding model and off with the local hashing embedder: on LoCoMo
	// (conv-26, conv-30) hash-embedded turn vectors lowered hybrid recall@10 from 49.1%
	// to 38.1%, because word-overlap vectors add noise to what keyword search already finds.
	EmbedTurns bool
	// SearchWeights (ENGRAM_SEARCH_WEIGHTS, "rrf=…,importance=…,recency=…,confidence=…",
	// and memory_layer=…, turn_neighbour=… for the fusion of memories and turns)
	// overrides the rerank weights; nil keeps the retriever's measured defaults.
	SearchWeights map[string]float64
	// ContextTurns (ENGRAM_CONTEXT_TURNS, default 3; 0 disables) is how many of the
	// user's earlier unextracted turns a context call may offer when no memory matches
	// the query by keyword (retriever.Config.ContextTurns).
	ContextTurns int
	// ConsolidateCron (ENGRAM_CONSOLIDATE_CRON, default "0 3 * * *"; "off" disables)
	// schedules nightly consolidation in `engram serve` and `engram dev`.
	ConsolidateCron string
	// LogLevel (ENGRAM_LOG_LEVEL: debug, info, warn, error; default info).
	LogLevel slog.Level
	// LLMFallback (ENGRAM_LLM_FALLBACK: off or offline; default off): with offline, once
	// the chat model has failed for LLMFallbackAfter (ENGRAM_LLM_FALLBACK_AFTER, default
	// 10m), the extractor uses the offline rules and marks those memories for a rebuild
	// (metadata rebuild=llm_unavailable). Off: turns wait in TURNS until the model is back.
	LLMFallback      string
	LLMFallbackAfter time.Duration
	// LogFormat (ENGRAM_LOG_FORMAT: text or json; default text) is the log handler.
	LogFormat string
	// WorkerHTTPAddr (ENGRAM_WORKER_HTTP_ADDR, default ":9090"; "off" disables) is where
	// `engram worker` serves /healthz, /readyz and /metrics.
	WorkerHTTPAddr string
	// MetricsInterval (ENGRAM_METRICS_INTERVAL, default 60s) is how often the memory
	// gauges and the vector coverage are refreshed (a paced census of every tenant's
	// memories, memory.MemoryCensus, shared by both).
	MetricsInterval time.Duration
	// MetricsTenants (ENGRAM_METRICS_TENANTS, default 100) is how many tenants, the
	// largest, get series of their own in the memory gauges; the others are summed
	// under tenant="(others)".
	MetricsTenants int
	// URL (ENGRAM_URL, default http://localhost:8080) and Token (ENGRAM_TOKEN) are the
	// engram API and the tenant's API token that `engram mcp` calls.
	URL, Token string
	// Reembed (ENGRAM_REEMBED: auto or off; default auto): with auto, `engram serve` and
	// `engram dev` embed in the background the memories (and, with EmbedTurns, turns)
	// lacking a vector in the configured model, checking again every MetricsInterval.
	Reembed string
	// OutageBackoffMax (ENGRAM_OUTAGE_BACKOFF_MAX, default 30s) caps the wait between a
	// worker's retries of a message held through a PostgreSQL, NATS or model outage: how
	// long after the dependency is back a held message may still wait.
	OutageBackoffMax time.Duration
	// BatchQuiet (ENGRAM_EXTRACT_BATCH_QUIET: auto, off or a duration; default auto) is
	// the extractor's micro-batch quiet window, as extractor.PipelineConfig.BatchQuiet
	// takes it: 0 for auto (300ms with a chat model, where batching saves calls; a 5ms
	// settle with the offline rules), negative for off.
	BatchQuiet time.Duration
	// HNSWThreshold (ENGRAM_HNSW_THRESHOLD), HNSWEfSearch (ENGRAM_HNSW_EF_SEARCH) and
	// HNSWInterval (ENGRAM_HNSW_INTERVAL, default 10m, off: 0): owners above the
	// threshold get an HNSW index of their own, kept up by serve every interval when it
	// has the owner role's URL, or by `engram index` (memory.MaintainHNSW).
	HNSWThreshold, HNSWEfSearch int
	HNSWInterval                time.Duration
	// HNSWM (ENGRAM_HNSW_M) and HNSWEfConstruction (ENGRAM_HNSW_EF_CONSTRUCTION) are the
	// owner indexes' build parameters.
	HNSWM, HNSWEfConstruction int
	// IVFThreshold (ENGRAM_IVF_THRESHOLD) is the owner size from which its index is
	// IVFFlat instead of HNSW.
	IVFThreshold int
	// IndexRecallTarget (ENGRAM_INDEX_RECALL_TARGET, default 0.95, off: -1) is the
	// recall@10 an owner index must reach on the maintenance pass's sample queries.
	IndexRecallTarget float64
}

// hnswConfig is the owner indexes' configuration, as serve and `engram index` use it.
func (c Config) hnswConfig() memory.HNSWConfig {
	return memory.HNSWConfig{Threshold: c.HNSWThreshold, EfSearch: c.HNSWEfSearch, M: c.HNSWM,
		EfConstruction: c.HNSWEfConstruction, IVFThreshold: c.IVFThreshold, RecallTarget: c.IndexRecallTarget}
}

// envVar documents one variable for --help.
type envVar struct {
	name, def, help string
}

var envVars = []envVar{
	{"ENGRAM_DATABASE_URL", "(local cluster)", "PostgreSQL URL of the application role (owns nothing); unset: the project-local cluster, started on demand"},
	{"ENGRAM_REDACT_KEEP", "", "personal identifiers to keep unredacted: phone, email, address (secrets are always redacted)"},
	{"ENGRAM_MIGRATE_DATABASE_URL", "(local cluster)", "PostgreSQL URL of the owner role that runs migrations; unset with ENGRAM_DATABASE_URL set: migrations are not run, only checked"},
	{"ENGRAM_PG_PORT", "55432", "port of the project-local cluster"},
	{"ENGRAM_DB_MAX_CONNS", "16", "connection pool size"},
	{"ENGRAM_NATS_URL", "(embedded)", "NATS URL; unset: in-process JetStream"},
	{"ENGRAM_NATS_PORT", "4222", "port the embedded NATS server of `engram serve`/`engram dev` listens on"},
	{"ENGRAM_HTTP_ADDR", ":8080", "HTTP listen address"},
	{"ENGRAM_DATA_DIR", ".engram", "local state: embedded JetStream store, development token"},
	{"ENGRAM_TOKENS", "", "API tokens: tenant[/name]=sha256:<hex>[;users=u1|u2][;expires=RFC3339][;revoked],..."},
	{"ENGRAM_TOKENS_FILE", "", "JSON tokens file {\"tokens\":[{\"tenant\",\"name\",\"sha256\",\"users\",\"expires_at\",\"revoked\"}]}, re-read on change and SIGHUP"},
	{"ENGRAM_STREAM_REPLICAS", "1", "JetStream replicas (3 on a cluster)"},
	{"ENGRAM_TURNS_MAX_AGE", "720h", "how long the TURNS stream keeps turns"},
	{"ENGRAM_DUPLICATE_WINDOW", "10m", "JetStream duplicate window (at least 10m)"},
	{"ENGRAM_LLM_BASE_URL", "", "OpenAI-compatible chat endpoint; unset: offline rules"},
	{"ENGRAM_LLM_API_KEY", "", "API key of the chat endpoint"},
	{"ENGRAM_LLM_MODEL", "", "chat model (required with ENGRAM_LLM_BASE_URL)"},
	{"ENGRAM_EMBED_BASE_URL", "", "OpenAI-compatible embeddings endpoint; unset: engram-hash-v1"},
	{"ENGRAM_EMBED_API_KEY", "", "API key of the embeddings endpoint"},
	{"ENGRAM_EMBED_MODEL", "", "embedding model (required with ENGRAM_EMBED_BASE_URL)"},
	{"ENGRAM_EMBED_DIMS", "0", "embedding dimensions (0: learnt from the first response)"},
	{"ENGRAM_EMBED_TURNS", "auto", "embed turns and search them by vector too (auto: only with ENGRAM_EMBED_BASE_URL)"},
	{"ENGRAM_SEARCH_WEIGHTS", "(measured)", "rerank weights, e.g. rrf=0.95,importance=0,recency=0.05,confidence=0"},
	{"ENGRAM_CONTEXT_TURNS", fmt.Sprint(retriever.DefaultConfig().ContextTurns), "earlier turns no memory came from that /v1/context may offer when no memory matches the query by keyword (0: none)"},
	{"ENGRAM_CONSOLIDATE_CRON", "0 3 * * *", "nightly consolidation schedule (cron; CRON_TZ= prefix allowed; off disables)"},
	{"ENGRAM_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"ENGRAM_LLM_FALLBACK", "off", "offline: after ENGRAM_LLM_FALLBACK_AFTER of model outage, extract with the offline rules (marked for rebuild)"},
	{"ENGRAM_LLM_FALLBACK_AFTER", "10m", "how long the chat model must fail before ENGRAM_LLM_FALLBACK applies"},
	{"ENGRAM_LOG_FORMAT", "text", "log format: text or json"},
	{"ENGRAM_WORKER_HTTP_ADDR", ":9090", "where `engram worker` serves /healthz, /readyz and /metrics (off disables)"},
	{"ENGRAM_METRICS_INTERVAL", "60s", "how often the memory gauges and the vector coverage are counted"},
	{"ENGRAM_METRICS_TENANTS", "100", "tenants (the largest) with series of their own in the memory gauges; the rest are summed as (others)"},
	{"ENGRAM_URL", "http://localhost:8080", "the engram API `engram mcp` calls"},
	{"ENGRAM_TOKEN", "", "the API token `engram mcp` calls it with (the tenant is the token's)"},
	{"ENGRAM_REEMBED", "auto", "auto: serve/dev embed what lacks a vector in the configured model in the background; off: only `engram reembed`"},
	{"ENGRAM_HNSW_THRESHOLD", fmt.Sprint(memory.DefaultHNSWThreshold), "owner size (vectors of one model) from which an owner gets an HNSW index of its own (kept until half of it)"},
	{"ENGRAM_HNSW_EF_SEARCH", fmt.Sprint(memory.DefaultHNSWEfSearch), "hnsw.ef_search of the owner indexes (candidates re-ranked exactly)"},
	{"ENGRAM_HNSW_M", fmt.Sprint(memory.DefaultHNSWM), "m (links per node) of the HNSW owner indexes built from now on for owners of 50,000 vectors and more (smaller owners: m 16, ef_construction 64, or these if smaller; rebuilt denser when they grow past it)"},
	{"ENGRAM_HNSW_EF_CONSTRUCTION", fmt.Sprint(memory.DefaultHNSWEfConstruction), "ef_construction of the HNSW owner indexes built from now on for owners of 50,000 vectors and more (at least 2 × m)"},
	{"ENGRAM_IVF_THRESHOLD", fmt.Sprint(memory.DefaultIVFThreshold), "owner size from which its index is IVFFlat instead of HNSW (kept until half of it; lists: one a 500 vectors, rebuilt when it doubles)"},
	{"ENGRAM_INDEX_RECALL_TARGET", fmt.Sprint(memory.DefaultIndexRecallTarget), "recall@10 an owner index must reach on sample queries when built (measured against the exact scan; below it: built again once, then read further); off: not measured"},
	{"ENGRAM_HNSW_INTERVAL", "10m", "how often serve builds and drops owner indexes (needs ENGRAM_MIGRATE_DATABASE_URL; off: only `engram index`)"},
	{"ENGRAM_OUTAGE_BACKOFF_MAX", "30s", "longest wait between a worker's retries of a message held through a dependency outage"},
	{"ENGRAM_EXTRACT_BATCH_QUIET", "auto", "extractor micro-batch quiet window: auto (300ms with ENGRAM_LLM_*, a 5ms settle offline), off, or a duration such as 100ms"},
}

// LoadConfig reads the environment through getenv. A wrong value is an error that
// names the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:        getenv("ENGRAM_DATABASE_URL"),
		MigrateDatabaseURL: getenv("ENGRAM_MIGRATE_DATABASE_URL"),
		NATSURL:            getenv("ENGRAM_NATS_URL"),
		HTTPAddr:           or(getenv("ENGRAM_HTTP_ADDR"), ":8080"),
		DataDir:            or(getenv("ENGRAM_DATA_DIR"), ".engram"),
		Tokens:             getenv("ENGRAM_TOKENS"),
		TokensFile:         getenv("ENGRAM_TOKENS_FILE"),
		LLMBaseURL:         getenv("ENGRAM_LLM_BASE_URL"),
		LLMAPIKey:          getenv("ENGRAM_LLM_API_KEY"),
		LLMModel:           getenv("ENGRAM_LLM_MODEL"),
		EmbedBaseURL:       getenv("ENGRAM_EMBED_BASE_URL"),
		EmbedAPIKey:        getenv("ENGRAM_EMBED_API_KEY"),
		EmbedModel:         getenv("ENGRAM_EMBED_MODEL"),
		ConsolidateCron:    or(getenv("ENGRAM_CONSOLIDATE_CRON"), "0 3 * * *"),
		WorkerHTTPAddr:     or(getenv("ENGRAM_WORKER_HTTP_ADDR"), ":9090"),
		URL:                or(getenv("ENGRAM_URL"), "http://localhost:8080"),
		Token:              strings.TrimSpace(getenv("ENGRAM_TOKEN")),
	}
	var errs []string
	intVar := func(name string, def, min, max int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			errs = append(errs, fmt.Sprintf("%s=%q: want an integer in [%d, %d]", name, v, min, max))
			return def
		}
		return n
	}
	durVar := func(name string, def, min time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < min {
			errs = append(errs, fmt.Sprintf("%s=%q: want a duration such as 720h, at least %s", name, v, min))
			return def
		}
		return d
	}
	if v := getenv("ENGRAM_REDACT_KEEP"); v != "" {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				c.RedactKeep = append(c.RedactKeep, k)
			}
		}
		if _, err := redact.New(redact.Config{Keep: c.RedactKeep}); err != nil {
			errs = append(errs, fmt.Sprintf("ENGRAM_REDACT_KEEP=%q: %v", v, err))
		}
	}
	c.LocalPGPort = intVar("ENGRAM_PG_PORT", 55432, 1, 65535)
	c.DBMaxConns = intVar("ENGRAM_DB_MAX_CONNS", 16, 1, 1000)
	c.NATSPort = intVar("ENGRAM_NATS_PORT", 4222, 1, 65535)
	c.StreamReplicas = intVar("ENGRAM_STREAM_REPLICAS", 1, 1, 5)
	c.EmbedDims = intVar("ENGRAM_EMBED_DIMS", 0, 0, 16000)
	switch strings.ToLower(getenv("ENGRAM_EMBED_TURNS")) {
	case "", "auto":
		c.EmbedTurns = c.EmbedBaseURL != ""
	case "true", "1":
		c.EmbedTurns = true
	case "false", "0":
	default:
		errs = append(errs, fmt.Sprintf("ENGRAM_EMBED_TURNS=%q: want auto, true, false, 1 or 0", getenv("ENGRAM_EMBED_TURNS")))
	}
	if v := getenv("ENGRAM_SEARCH_WEIGHTS"); v != "" {
		w, err := parseWeights(v)
		if err != nil {
			errs = append(errs, fmt.Sprintf("ENGRAM_SEARCH_WEIGHTS=%q: %v", v, err))
		}
		c.SearchWeights = w
	}
	c.ContextTurns = intVar("ENGRAM_CONTEXT_TURNS", retriever.DefaultConfig().ContextTurns, 0, 20)
	c.TurnsMaxAge = durVar("ENGRAM_TURNS_MAX_AGE", 30*24*time.Hour, time.Minute)
	c.LLMFallbackAfter = durVar("ENGRAM_LLM_FALLBACK_AFTER", 10*time.Minute, 0)
	switch f := strings.ToLower(getenv("ENGRAM_LLM_FALLBACK")); f {
	case "", "off":
		c.LLMFallback = "off"
	case "offline":
		c.LLMFallback = "offline"
	default:
		errs = append(errs, fmt.Sprintf("ENGRAM_LLM_FALLBACK=%q: want off or offline", getenv("ENGRAM_LLM_FALLBACK")))
	}
	c.MetricsInterval = durVar("ENGRAM_METRICS_INTERVAL", time.Minute, time.Second)
	c.MetricsTenants = intVar("ENGRAM_METRICS_TENANTS", metrics.DefaultTenantSeries, 0, 1_000_000)
	c.HNSWThreshold = intVar("ENGRAM_HNSW_THRESHOLD", memory.DefaultHNSWThreshold, 2, 1<<30)
	c.HNSWEfSearch = intVar("ENGRAM_HNSW_EF_SEARCH", memory.DefaultHNSWEfSearch, 1, 1000)
	c.HNSWM = intVar("ENGRAM_HNSW_M", memory.DefaultHNSWM, 2, 100)
	c.HNSWEfConstruction = intVar("ENGRAM_HNSW_EF_CONSTRUCTION", memory.DefaultHNSWEfConstruction, 4, 1000)
	c.IVFThreshold = intVar("ENGRAM_IVF_THRESHOLD", memory.DefaultIVFThreshold, 2, 1<<30)
	switch v := getenv("ENGRAM_INDEX_RECALL_TARGET"); {
	case v == "":
		c.IndexRecallTarget = memory.DefaultIndexRecallTarget
	case strings.EqualFold(v, "off"):
		c.IndexRecallTarget = -1
	default:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1) { // NaN too
			errs = append(errs, fmt.Sprintf("ENGRAM_INDEX_RECALL_TARGET=%q: want a share in (0, 1], such as 0.95, or off", v))
		}
		c.IndexRecallTarget = f
	}
	if c.HNSWEfConstruction < 2*c.HNSWM {
		errs = append(errs, fmt.Sprintf("ENGRAM_HNSW_EF_CONSTRUCTION=%d: must be at least 2 × ENGRAM_HNSW_M (%d)", c.HNSWEfConstruction, 2*c.HNSWM))
	}
	if strings.EqualFold(getenv("ENGRAM_HNSW_INTERVAL"), "off") {
		c.HNSWInterval = 0
	} else {
		c.HNSWInterval = durVar("ENGRAM_HNSW_INTERVAL", 10*time.Minute, time.Second)
	}
	switch r := strings.ToLower(getenv("ENGRAM_REEMBED")); r {
	case "", "auto":
		c.Reembed = "auto"
	case "off":
		c.Reembed = "off"
	default:
		errs = append(errs, fmt.Sprintf("ENGRAM_REEMBED=%q: want auto or off", getenv("ENGRAM_REEMBED")))
	}
	c.OutageBackoffMax = durVar("ENGRAM_OUTAGE_BACKOFF_MAX", 30*time.Second, 10*time.Millisecond)
	switch v := strings.ToLower(strings.TrimSpace(getenv("ENGRAM_EXTRACT_BATCH_QUIET"))); v {
	case "", "auto":
	case "off", "0":
		c.BatchQuiet = -1
	default:
		d, err := time.ParseDuration(v)
		switch {
		case err != nil || d < 0 || d > time.Minute:
			errs = append(errs, fmt.Sprintf("ENGRAM_EXTRACT_BATCH_QUIET=%q: want auto, off or a duration up to 1m such as 100ms", v))
		case d == 0:
			c.BatchQuiet = -1
		default:
			c.BatchQuiet = d
		}
	}
	switch f := strings.ToLower(getenv("ENGRAM_LOG_FORMAT")); f {
	case "", "text":
		c.LogFormat = "text"
	case "json":
		c.LogFormat = "json"
	default:
		errs = append(errs, fmt.Sprintf("ENGRAM_LOG_FORMAT=%q: want text or json", getenv("ENGRAM_LOG_FORMAT")))
	}
	c.DuplicateWindow = durVar("ENGRAM_DUPLICATE_WINDOW", 10*time.Minute, 10*time.Minute)
	switch strings.ToLower(getenv("ENGRAM_LOG_LEVEL")) {
	case "", "info":
		c.LogLevel = slog.LevelInfo
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		errs = append(errs, fmt.Sprintf("ENGRAM_LOG_LEVEL=%q: want debug, info, warn or error", getenv("ENGRAM_LOG_LEVEL")))
	}
	if c.ConsolidateCron != "off" {
		if _, err := consolidator.ParseSchedule(c.ConsolidateCron); err != nil {
			errs = append(errs, err.Error()) // it names ENGRAM_CONSOLIDATE_CRON
		}
	}
	if c.LLMBaseURL != "" && c.LLMModel == "" {
		errs = append(errs, "ENGRAM_LLM_MODEL is required when ENGRAM_LLM_BASE_URL is set")
	}
	if c.EmbedBaseURL != "" && c.EmbedModel == "" {
		errs = append(errs, "ENGRAM_EMBED_MODEL is required when ENGRAM_EMBED_BASE_URL is set")
	}
	if c.StreamReplicas != 1 && c.StreamReplicas != 3 && c.StreamReplicas != 5 {
		errs = append(errs, fmt.Sprintf("ENGRAM_STREAM_REPLICAS=%d: want 1, 3 or 5", c.StreamReplicas))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// parseWeights reads "name=value,…" with names rrf, importance, recency, confidence
// (the rerank) and memory_layer, turn_neighbour (the layers' fusion).
func parseWeights(v string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, item := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("want name=value items, got %q", item)
		}
		switch name {
		case "rrf", "importance", "recency", "confidence", "memory_layer", "turn_neighbour":
		default:
			return nil, fmt.Errorf("unknown weight %q: want rrf, importance, recency, confidence, memory_layer or turn_neighbour", name)
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f < 0 || f > 10 {
			return nil, fmt.Errorf("weight %s=%q: want a number in [0, 10]", name, val)
		}
		out[name] = f
	}
	return out, nil
}
