package streams

import (
	"context"
	"fmt"
)

// Delete removes one dead letter by its DLQ sequence, for callers that purge a
// selection Purge cannot express (the console purges only its tenant's entries). A
// missing one wraps jetstream.ErrMsgNotFound.
func (d *DLQ) Delete(ctx context.Context, id uint64) error {
	s, err := d.stream(ctx)
	if err != nil {
		return err
	}
	if err := s.DeleteMsg(ctx, id); err != nil {
		return fmt.Errorf("deleting dead letter %d: %w", id, err)
	}
	return nil
}
