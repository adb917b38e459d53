// Package streams owns engram's JetStream topology (streams, subjects, consumers), the
// event envelopes that travel on it, the worker runtime that turns a handler into a
// durable, at-least-once consumer (ack / nak with delay / dead letter), and the dead
// letter queue with replay. It also embeds a NATS server for `engram dev`.
package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	TurnsStream      = "TURNS"
	CandidatesStream = "CANDIDATES"
	DLQStream        = "DLQ"
)

// Durable consumer names used by engram's workers.
const (
	ExtractorConsumer = "extractor"
	ResolverConsumer  = "resolver"
)

// Defaults for Config.
const (
	defaultReplicas        = 1
	defaultTurnsMaxAge     = 30 * 24 * time.Hour
	defaultCandidateMaxAge = 30 * 24 * time.Hour
	defaultDuplicateWindow = 10 * time.Minute
)

// Config describes the streams EnsureTopology creates. The zero value is the
// single-node development topology.
type Config struct {
	// Replicas is the replication factor of every stream: 1 for dev (default), 3 in a
	// cluster.
	Replicas int
	// TurnsMaxAge is how long turns stay in TURNS. Default 30 days.
	TurnsMaxAge time.Duration
	// CandidatesMaxAge is how long candidates stay in CANDIDATES. Default 30 days.
	CandidatesMaxAge time.Duration
	// DLQMaxAge bounds how long dead letters are kept. Default 0: kept until replayed
	// or purged, because a dead letter is work nobody has done yet.
	DLQMaxAge time.Duration
	// DuplicateWindow is how long TURNS and CANDIDATES remember Nats-Msg-Id for
	// deduplication. Default 10 minutes; values below that are raised to it because
	// agents retry ingest for minutes. It is also capped at the stream's max age.
	DuplicateWindow time.Duration
	// MaxBytes caps each of TURNS and CANDIDATES (oldest discarded). Default 0: no cap.
	MaxBytes int64
}

func (c Config) withDefaults() Config {
	if c.Replicas <= 0 {
		c.Replicas = defaultReplicas
	}
	if c.TurnsMaxAge <= 0 {
		c.TurnsMaxAge = defaultTurnsMaxAge
	}
	if c.CandidatesMaxAge <= 0 {
		c.CandidatesMaxAge = defaultCandidateMaxAge
	}
	if c.DLQMaxAge < 0 {
		c.DLQMaxAge = 0
	}
	if c.DuplicateWindow < defaultDuplicateWindow {
		c.DuplicateWindow = defaultDuplicateWindow
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = -1
	}
	return c
}

// StreamConfigs returns the stream configurations EnsureTopology applies, in order.
func StreamConfigs(cfg Config) []jetstream.StreamConfig {
	cfg = cfg.withDefaults()
	dup := func(maxAge time.Duration) time.Duration { return min(cfg.DuplicateWindow, maxAge) }
	return []jetstream.StreamConfig{
		{
			Name:        TurnsStream,
			Description: "engram conversation turns, engram.turns.<tenant>.<user>",
			Subjects:    []string{TurnSubjectPrefix + "*.*"},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			Discard:     jetstream.DiscardOld,
			MaxAge:      cfg.TurnsMaxAge,
			MaxBytes:    cfg.MaxBytes,
			MaxMsgs:     -1,
			Duplicates:  dup(cfg.TurnsMaxAge),
			Replicas:    cfg.Replicas,
		},
		{
			Name:        CandidatesStream,
			Description: "engram memory candidates, engram.candidates.<tenant>.<user>",
			Subjects:    []string{CandidateSubjectPrefix + "*.*"},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			Discard:     jetstream.DiscardOld,
			MaxAge:      cfg.CandidatesMaxAge,
			MaxBytes:    cfg.MaxBytes,
			MaxMsgs:     -1,
			Duplicates:  dup(cfg.CandidatesMaxAge),
			Replicas:    cfg.Replicas,
		},
		{
			Name:        DLQStream,
			Description: "engram dead letters, engram.dlq.<stage>.<tenant>",
			Subjects:    []string{DLQSubjectPrefix + "*.*"},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			Discard:     jetstream.DiscardOld,
			MaxAge:      cfg.DLQMaxAge,
			MaxBytes:    -1,
			MaxMsgs:     -1,
			Replicas:    cfg.Replicas,
		},
	}
}

// EnsureTopology creates the TURNS, CANDIDATES and DLQ streams, or updates them to cfg
// if they exist. It is idempotent and meant to run at every start-up.
func EnsureTopology(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	for _, sc := range StreamConfigs(cfg) {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("creating or updating stream %s: %w", sc.Name, err)
		}
	}
	return nil
}
