package memory

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The methods below run one operation in its own tenant-scoped transaction. Callers
// that must combine several (the resolver) use InTx and the Tx methods directly.

// CreateMemory creates a memory with its first version, lineage, embeddings and audit.
func (s *Store) CreateMemory(ctx context.Context, tenant string, n NewMemory) (Memory, error) {
	var m Memory
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		m, err = tx.CreateMemory(ctx, n)
		return err
	})
	return m, err
}

// Apply writes a new version of a memory.
func (s *Store) Apply(ctx context.Context, tenant string, id uuid.UUID, u Update) (Memory, error) {
	var m Memory
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		m, err = tx.Apply(ctx, id, u)
		return err
	})
	return m, err
}

// Detail reads a memory with its versions and lineage.
func (s *Store) Detail(ctx context.Context, tenant string, id uuid.UUID) (Detail, error) {
	var d Detail
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		d, err = tx.Detail(ctx, id)
		return err
	})
	return d, err
}

// AsOf reads what memory id said at time at.
func (s *Store) AsOf(ctx context.Context, tenant string, id uuid.UUID, at time.Time) (Version, error) {
	var v Version
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		v, err = tx.AsOf(ctx, id, at)
		return err
	})
	return v, err
}

// Nearest returns an owner's nearest memories.
func (s *Store) Nearest(ctx context.Context, tenant string, q NearestQuery) ([]Neighbour, error) {
	var ns []Neighbour
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		ns, err = tx.Nearest(ctx, q)
		return err
	})
	return ns, err
}

// InsertTurn stores a turn idempotently.
func (s *Store) InsertTurn(ctx context.Context, tenant string, t Turn) (bool, error) {
	var ok bool
	err := s.InTx(ctx, tenant, func(tx *Tx) error {
		var err error
		ok, err = tx.InsertTurn(ctx, t)
		return err
	})
	return ok, err
}

func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
