package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/engramhq/engram/internal/natsserver"
	"github.com/engramhq/engram/memory"
)

// startRunNATS creates workDir and starts the private JetStream server of a process
// benchmark there (store under workDir/nats, a free port), returning it and its URL.
// The caller shuts it down.
func startRunNATS(ctx context.Context, name, workDir string) (*natsserver.Server, string, error) {
	if err := os.MkdirAll(workDir, 0o750); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	ns, err := natsserver.Start(ctx, natsserver.Config{StoreDir: filepath.Join(workDir, "nats"), Port: -1, ServerName: name})
	if err != nil {
		return nil, "", fmt.Errorf("%s: starting NATS: %w", name, err)
	}
	return ns, "nats://127.0.0.1:" + strconv.Itoa(ns.Port()), nil
}

// existingMemories is how many memories tenant already holds: what a --reuse run finds
// of an earlier run's seeding.
func existingMemories(ctx context.Context, s *memory.Store, tenant string) (int, error) {
	var have int
	err := s.InTx(ctx, tenant, func(tx *memory.Tx) error {
		var err error
		have, err = tx.CountMemories(ctx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("bench: counting existing memories: %w", err)
	}
	return have, nil
}
