package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/engramhq/engram/internal/lifecycle"
	"github.com/engramhq/engram/internal/natsserver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/readiness"
	"github.com/engramhq/engram/internal/reembed"
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
	// coverage tracks the configured embedding model's vector coverage (serve and dev
	// set it; readiness then reports it).
	coverage *reembed.Tracker
	// WaitDeps makes openDB and openNATS wait, with backoff, for a PostgreSQL or NATS
	// that is unreachable (serve, dev and the workers set it; see waitDependency).
	WaitDeps bool
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
	return fmt.Sprintf("postgres://engram_app@127.0.0.1:%d/engram?sslmode=disable", a.Config.LocalPGPort)
}

// migrateURL is the owner role's URL, or "" when none is configured (an explicit
// application URL without ENGRAM_MIGRATE_DATABASE_URL).
func (a *App) migrateURL() string {
	if a.Config.MigrateDatabaseURL != "" {
		return a.Config.MigrateDatabaseURL
	}
	if a.Config.DatabaseURL == "" {
		return fmt.Sprintf("postgres://engram@127.0.0.1:%d/engram?sslmode=disable", a.Config.LocalPGPort)
	}
	return ""
}

// openDB connects to PostgreSQL (starting the local cluster when the embedded
// default is in use and nothing answers), applies migrations as the owner role when
// migrate is set and an owner URL is known (otherwise checks that none is pending),
// and opens the application pool as the application role. The pool registers
// pgvector's types on connect, which needs the extension, so migrations run first on
// a connection of their own.
func (a *App) openDB(ctx context.Context, migrate bool) error {
	return a.waitDependency(ctx, "PostgreSQL", memory.IsOutage, func() error { return a.openDBOnce(ctx, migrate) })
}

func (a *App) openDBOnce(ctx context.Context, migrate bool) error {
	url := a.databaseURL()
	if migrate {
		if owner := a.migrateURL(); owner != "" {
			conn, err := a.connectOrStart(ctx, owner, "ENGRAM_MIGRATE_DATABASE_URL")
			if err != nil {
				return err
			}
			done, err := migrations.Default().Up(ctx, conn)
			conn.Close(ctx)
			if err != nil {
				return fmt.Errorf("applying migrations: %w", err)
			}
			for _, m := range done {
				a.Logger.Info("applied migration", "version", m.Version, "name", m.Name)
			}
		}
	}
	conn, err := a.connectOrStart(ctx, url, "ENGRAM_DATABASE_URL")
	if err != nil {
		return err
	}
	err = checkMigrated(ctx, conn)
	conn.Close(ctx)
	if err != nil {
		return err
	}
	pool, err := memory.Connect(ctx, url, int32(a.Config.DBMaxConns))
	if err != nil {
		return err
	}
	a.Pool, a.Store = pool, memory.NewStore(pool)
	a.closers = append(a.closers, pool.Close)
	return nil
}

// openOwnerPool opens a small pool as the owner role (the migrations' URL), for the
// maintenance the application role may not do; it fails when no owner URL is known.
func (a *App) openOwnerPool(ctx context.Context) (*pgxpool.Pool, error) {
	owner := a.migrateURL()
	if owner == "" {
		return nil, errors.New("this needs the owner role: set ENGRAM_MIGRATE_DATABASE_URL")
	}
	pool, err := memory.ConnectOwner(ctx, owner, 4)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, pool.Close)
	return pool, nil
}

// compactor is what rewrites the tables after a user erasure: the owner role's store
// when its URL is known (the project-local cluster, or ENGRAM_MIGRATE_DATABASE_URL),
// else the application's, which may do it on PostgreSQL 17 (MAINTAIN, granted by
// migration 0008) and otherwise reports that it cannot.
func (a *App) compactor(ctx context.Context) lifecycle.Compactor {
	if a.migrateURL() == "" {
		return a.Store
	}
	owner := a.migrateURL()
	pool, err := memory.ConnectOwner(ctx, owner, 2)
	if err != nil {
		a.Logger.Warn("erasure will not compact the tables: the owner role's pool did not open", "err", err)
		return a.Store
	}
	a.closers = append(a.closers, pool.Close)
	return memory.NewStore(pool)
}

// checkMigrated fails, naming what is missing, when the database lacks a migration.
func checkMigrated(ctx context.Context, conn *pgx.Conn) error {
	st, err := migrations.Default().Status(ctx, conn)
	if err != nil {
		return fmt.Errorf("checking the database schema: %w", err)
	}
	var pending []string
	for _, s := range st {
		if !s.Applied {
			pending = append(pending, fmt.Sprintf("%04d_%s", s.Version, s.Name))
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("the database lacks migrations %s: run `engram migrate` as the owner role "+
			"(ENGRAM_MIGRATE_DATABASE_URL or --database-url)", strings.Join(pending, ", "))
	}
	return nil
}

// connectOrStart connects to url (named by the variable that sets it, for errors),
// starting the local cluster when the embedded default is in use and nothing answers.
func (a *App) connectOrStart(ctx context.Context, url, variable string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		return conn, nil
	}
	if a.Config.DatabaseURL != "" || a.Config.MigrateDatabaseURL != "" {
		return nil, fmt.Errorf("connecting to %s: %w", variable, err)
	}
	// The local cluster may be down, or made before there were two roles: the services
	// script starts it and creates what is missing.
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

// openNATS connects to ENGRAM_NATS_URL or, unset, to the embedded server of the
// local store (DataDir/nats). A store is opened by one process at a time (see
// natsserver.Start): with serve set (engram serve, engram dev) this process starts
// the store's server on NATSPort and fails, naming the holder, when another process
// has it; otherwise it joins the server of the process that holds the store and
// starts one of its own (on a free port) only when there is none.
func (a *App) openNATS(ctx context.Context, serve bool) error {
	url := a.Config.NATSURL
	if url == "" {
		u, err := a.embeddedNATS(ctx, serve)
		if err != nil {
			return err
		}
		url = u
	}
	return a.waitDependency(ctx, "NATS", streams.IsOutage, func() error { return a.connectNATS(ctx, url) })
}

// connectNATS connects to url and ensures the JetStream topology.
func (a *App) connectNATS(ctx context.Context, url string) error {
	nc, err := nats.Connect(url, nats.Name("engram"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connecting to NATS at %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("opening JetStream: %w", err)
	}
	if err := streams.EnsureTopology(ctx, js, a.streamsConfig()); err != nil {
		nc.Close()
		return fmt.Errorf("creating the JetStream topology: %w", err)
	}
	a.closers = append(a.closers, func() { _ = nc.Drain() })
	a.NC, a.JS = nc, js
	return nil
}

// embeddedNATS returns the URL of the local store's server: this process's own when
// it starts one, else that of the process holding the store.
func (a *App) embeddedNATS(ctx context.Context, serve bool) (string, error) {
	storeDir := filepath.Join(a.Config.DataDir, "nats")
	// The holder may stop between our failed lock and our look at its record (a
	// short command ending): then the store is free and we try again.
	for attempt := 0; ; attempt++ {
		if !serve {
			wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			owner, ok, err := natsserver.Running(wctx, storeDir)
			cancel()
			if err != nil {
				return "", err
			}
			if ok {
				a.Logger.Info("joining the NATS server of the running engram", "url", owner.URL, "pid", owner.PID, "command", owner.Command)
				return owner.URL, nil
			}
		}
		port := -1
		if serve {
			port = a.Config.NATSPort
		}
		// The embedded server's start-up banner is noise next to engram's own output:
		// it logs warnings and errors only, unless engram logs at debug level.
		natsCfg := a.Config
		natsCfg.LogLevel = natsLevel(a.Config.LogLevel)
		emb, err := natsserver.Start(ctx, natsserver.Config{
			StoreDir: storeDir, Port: port, Host: "127.0.0.1", Logger: newLogger(os.Stderr, natsCfg),
			Command: commandLine(),
		})
		var locked *natsserver.LockedError
		if errors.As(err, &locked) && !serve && attempt < 3 {
			continue // another command started one meanwhile: join it
		}
		if errors.As(err, &locked) {
			return "", fmt.Errorf("%w; stop it, or give this one its own ENGRAM_DATA_DIR (or ENGRAM_NATS_URL)", err)
		}
		if err != nil && serve {
			return "", fmt.Errorf("starting the embedded JetStream server on ENGRAM_NATS_PORT=%d: %w", port, err)
		}
		if err != nil {
			return "", fmt.Errorf("starting the embedded JetStream server: %w", err)
		}
		a.Embedded = emb
		a.closers = append(a.closers, emb.Shutdown)
		return emb.ClientURL(), nil
	}
}

// commandLine names this process in the store's server record.
func commandLine() string {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		return "engram"
	}
	return "engram " + os.Args[1]
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
	if a.coverage != nil {
		checks = append(checks, readiness.Check{Name: "vector_coverage", Detail: a.coverage.Detail})
	}
	return readiness.New(readiness.Config{Logger: a.Logger, OnFailure: m.DependencyCheckFailed}, checks...)
}
