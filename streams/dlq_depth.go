package streams

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Depth is how many dead letters of stage wait in the DLQ (every stage when empty),
// read from the stream's per-subject counts without fetching a message: cheap enough
// for a metrics scrape.
func (d *DLQ) Depth(ctx context.Context, stage string) (uint64, error) {
	filter, err := dlqStageFilter(stage)
	if err != nil {
		return 0, err
	}
	s, err := d.stream(ctx)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return 0, fmt.Errorf("reading the DLQ depth of stage %q: %w", stage, err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n, nil
}
