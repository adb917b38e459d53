package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/engramhq/engram/internal/natsserver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/readiness"
	"github.com/engramhq/engram/llm"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/migrations"
	"github.com/engramhq/engram/scripts"
	"github.com/engramhq/engram/streams"
)

// App holds the dependencies a command opened; Close releases them in reverse order.
type App struct {
	Config   Config
	Logger   *slog.Logger
	Pool     *pgxpool.Pool
	Store    *memory.Store
	NC       *nats.Conn
	JS       jetstream.JetStream
	Embedded *natsserver.Server
	closers  []func()
}

// Close releases everything the app opened.
func (a *App) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

func (a *App) databaseURL() string {
	if a.Config.DatabaseURL != "" {
		return a.Config.DatabaseURL
	}
	return fmt.Sprintf("postgres://engram@127.0.0.1:%d/engram?sslmode=disable", a.Config.LocalPGPort)
}

// openDB connects to PostgreSQL (starting the local cluster when the embedded
// default is in use and nothing answers), applies migrations when migrate is set,
// and opens the application pool. The pool registers pgvector's types on connect,
// which needs the extension, so migrations run first on a connection of their own.
func (a *App) openDB(ctx context.Context, migrate bool) error {
	url := a.databaseURL()
	conn, err := a.connectOrStart(ctx, url)
	if err != nil {
		return err
	}
	if migrate {
		done, err := migrations.Default().Up(ctx, conn)
		if err != nil {
			conn.Close(ctx)
			return fmt.Errorf("applying migrations: %w", err)
		}
		for _, m := range done {
			a.Logger.Info("applied migration", "version", m.Version, "name", m.Name)
		}
	}
	conn.Close(ctx)
	pool, err := memory.Connect(ctx, url, int32(a.Config.DBMaxConns))
	if err != nil {
		return err
	}
	a.Pool, a.Store = pool, memory.NewStore(pool)
	a.closers = append(a.closers, pool.Close)
	return nil
}

func (a *App) connectOrStart(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		return conn, nil
	}
	if a.Config.DatabaseURL != "" {
		return nil, fmt.Errorf("connecting to ENGRAM_DATABASE_URL: %w", err)
	}
	a.Logger.Info("starting the project-local PostgreSQL", "port", a.Config.LocalPGPort)
	if serr := scripts.StartPostgres(ctx, a.Config.LocalPGPort, os.Stderr); serr != nil {
		return nil, fmt.Errorf("the local PostgreSQL is not running (%v) and could not be started: %w; run `make services` or set ENGRAM_DATABASE_URL", err, serr)
	}
	conn, err = pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connecting to the local PostgreSQL: %w", err)
	}
	return conn, nil
}

// openNATS connects to ENGRAM_NATS_URL, or to the embedded server `engram dev`
// runs when it is up, or else starts an in-process server on the local store. With
// serve set (engram dev), it always starts the embedded server on NATSPort.
func (a *App) openNATS(ctx context.Context, serve bool) error {
	url := a.Config.NATSURL
	if url == "" && !serve {
		local := fmt.Sprintf("nats://127.0.0.1:%d", a.Config.NATSPort)
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", a.Config.NATSPort), 300*time.Millisecond); err == nil {
			c.Close()
			url = local
		}
	}
	if url == "" {
		port := -1
		if serve {
			port = a.Config.NATSPort
		}
		// The embedded server's start-up banner is noise next to engram's own output:
		// it logs warnings and errors only, unless engram logs at debug level.
		natsCfg := a.Config
		natsCfg.LogLevel = natsLevel(a.Config.LogLevel)
		natsLog := newLogger(os.Stderr, natsCfg)
		emb, err := natsserver.Start(ctx, natsserver.Config{
			StoreDir: filepath.Join(a.Config.DataDir, "nats"), Port: port, Host: "127.0.0.1", Logger: natsLog,
		})
		if err != nil {
			return fmt.Errorf("starting the embedded JetStream server: %w", err)
		}
		a.Embedded = emb
		a.closers = append(a.closers, emb.Shutdown)
		url = emb.ClientURL()
	}
	nc, err := nats.Connect(url, nats.Name("engram"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connecting to NATS at %s: %w", url, err)
	}
	a.closers = append(a.closers, func() { _ = nc.Drain() })
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("opening JetStream: %w", err)
	}
	if err := streams.EnsureTopology(ctx, js, a.streamsConfig()); err != nil {
		return fmt.Errorf("creating the JetStream topology: %w", err)
	}
	a.NC, a.JS = nc, js
	return nil
}

func (a *App) streamsConfig() streams.Config {
	return streams.Config{
		Replicas:        a.Config.StreamReplicas,
		TurnsMaxAge:     a.Config.TurnsMaxAge,
		DuplicateWindow: a.Config.DuplicateWindow,
	}
}

// embedder is the configured embedding model or the local hashing embedder.
func (a *App) embedder() (llm.Embedder, error) {
	if a.Config.EmbedBaseURL == "" {
		return llm.NewHashEmbedder(0)
	}
	return llm.NewOpenAIEmbedder(llm.EmbedConfig{
		BaseURL: a.Config.EmbedBaseURL, APIKey: a.Config.EmbedAPIKey, Model: a.Config.EmbedModel, Dims: a.Config.EmbedDims,
	}, a.Logger)
}

// chat is the configured chat model, or nil when engram runs offline.
func (a *App) chat() (*llm.ChatClient, error) {
	if a.Config.LLMBaseURL == "" {
		return nil, nil
	}
	return llm.NewChat(llm.ChatConfig{BaseURL: a.Config.LLMBaseURL, APIKey: a.Config.LLMAPIKey, Model: a.Config.LLMModel}, a.Logger)
}

// tokens loads the configured API tokens (possibly none): ENGRAM_TOKENS and the
// ENGRAM_TOKENS_FILE. The file is re-read when it changes and on SIGHUP until ctx
// ends, so an operator revokes a token ("revoked": true, or `engram token revoke`),
// shortens its expiry or adds one without a restart.
func (a *App) tokens(ctx context.Context) (*httpapi.Tokens, error) {
	t := &httpapi.Tokens{}
	if a.Config.Tokens != "" {
		entries, err := httpapi.ParseTokenSpec(a.Config.Tokens)
		if err == nil {
			err = t.Replace("env", entries)
		}
		if err != nil {
			return nil, fmt.Errorf("ENGRAM_TOKENS: %w", err)
		}
	}
	if a.Config.TokensFile != "" {
		sum, err := loadTokenFile(t, a.Config.TokensFile)
		if err != nil {
			return nil, fmt.Errorf("ENGRAM_TOKENS_FILE: %w", err)
		}
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		go func() {
			defer signal.Stop(hup)
			watchTokenFile(ctx, t, a.Config.TokensFile, sum, tokenFilePoll, hup, a.Logger)
		}()
	}
	return t, nil
}

// tokenFilePoll is how often serve looks at the tokens file for changes. Polling
// the content (not inotify) also sees a Kubernetes Secret's symlink swap.
const tokenFilePoll = 2 * time.Second

// loadTokenFile replaces t's "file" tokens with the file's and returns the hash of
// what it read.
func loadTokenFile(t *httpapi.Tokens, path string) ([32]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return [32]byte{}, fmt.Errorf("reading %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	var f httpapi.TokenFile
	if err := json.Unmarshal(b, &f); err != nil {
		return sum, fmt.Errorf("parsing %s: %w", path, err)
	}
	if err := t.Replace("file", f.Tokens); err != nil {
		return sum, fmt.Errorf("%s: %w", path, err)
	}
	return sum, nil
}

// watchTokenFile re-reads the tokens file when its content changes (looked at every
// poll) and whenever hup receives, until ctx ends. A file that does not load keeps
// the tokens in use, and is logged once per content.
func watchTokenFile(ctx context.Context, t *httpapi.Tokens, path string, last [32]byte, poll time.Duration, hup <-chan os.Signal, log *slog.Logger) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-hup:
			forced = true
		}
		b, err := os.ReadFile(path)
		if err != nil {
			if forced {
				log.Error("re-reading the tokens file; keeping the tokens in use", "path", path, "err", err)
			}
			continue
		}
		if sum := sha256.Sum256(b); sum == last && !forced {
			continue
		}
		sum, err := loadTokenFile(t, path)
		last = sum
		if err != nil {
			log.Error("re-reading the tokens file; keeping the tokens in use", "path", path, "err", err)
			continue
		}
		log.Info("re-read the tokens file", "path", path, "tokens", t.Len())
	}
}

// devToken returns the development token of DataDir, creating it on first use.
func (a *App) devToken(tenant string) (string, error) {
	path := filepath.Join(a.Config.DataDir, "dev-token")
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b), nil
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(a.Config.DataDir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", a.Config.DataDir, err)
	}
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		return "", fmt.Errorf("writing the development token: %w", err)
	}
	return tok, nil
}

func natsLevel(l slog.Level) slog.Level {
	if l <= slog.LevelDebug {
		return l
	}
	return slog.LevelWarn
}

// readiness is what GET /readyz checks: PostgreSQL and NATS (required) and the
// configured model endpoints (optional: while one is away turns wait in TURNS and
// the node reports itself degraded, not unready). Failures are counted in m.
func (a *App) readiness(m *metrics.Metrics) *readiness.Checker {
	checks := []readiness.Check{
		{Name: "postgres", Required: true, Probe: func(ctx context.Context) error { return a.Pool.Ping(ctx) }},
		{Name: "nats", Required: true, Probe: func(ctx context.Context) error {
			if !a.NC.IsConnected() {
				return fmt.Errorf("NATS connection %s", strings.ToLower(a.NC.Status().String()))
			}
			// The account info needs the JetStream meta leader: a cluster without a
			// quorum answers no.
			_, err := a.JS.AccountInfo(ctx)
			return err
		}},
	}
	if a.Config.LLMBaseURL != "" {
		checks = append(checks, readiness.Check{Name: "llm", Probe: readiness.HTTPProbe(nil, a.Config.LLMBaseURL, a.Config.LLMAPIKey)})
	}
	if a.Config.EmbedBaseURL != "" {
		checks = append(checks, readiness.Check{Name: "embedding", Probe: readiness.HTTPProbe(nil, a.Config.EmbedBaseURL, a.Config.EmbedAPIKey)})
	}
	return readiness.New(readiness.Config{Logger: a.Logger, OnFailure: m.DependencyCheckFailed}, checks...)
}
