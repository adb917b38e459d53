package consolidator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// defaultSchedule runs the nightly consolidation at 03:00 (server local time).
const defaultSchedule = "0 3 * * *"

// ParseSchedule checks a cron spec: five fields (minute hour day-of-month month
// day-of-week) or a descriptor such as @daily or @every 6h. Empty means
// defaultSchedule (03:00). Errors name ENGRAM_CONSOLIDATE_CRON, where the spec comes from.
func ParseSchedule(spec string) (cron.Schedule, error) {
	if spec == "" {
		spec = defaultSchedule
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_CONSOLIDATE_CRON %q is not a valid cron schedule (want 5 fields, e.g. %q, or @daily): %w",
			spec, defaultSchedule, err)
	}
	return s, nil
}

// RunSchedule runs c.Run on the cron schedule spec (defaultSchedule when empty) until
// ctx ends; it returns nil then, and an error at once when spec is invalid. Every
// replica may run it: the run lock lets one of them work, and a replica whose timer
// fires just after another replica's run finished skips the tick (see skipTick). A
// failed run is logged and the schedule goes on; the next run resumes it when it is
// recent enough (NightlyConfig.ResumeWithin).
func RunSchedule(ctx context.Context, c *Consolidator, spec string, logger *slog.Logger) error {
	sched, err := ParseSchedule(spec)
	if err != nil {
		return err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	log := logger.With("component", "nightly-schedule")
	for {
		now := time.Now()
		next := sched.Next(now)
		if next.IsZero() {
			return fmt.Errorf("ENGRAM_CONSOLIDATE_CRON %q never fires", spec)
		}
		log.Debug("next consolidation run", "at", next)
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		// Half the gap to the following tick, at most 10 minutes: replicas' timers fire
		// within seconds of each other, while frequent schedules must not skip themselves.
		tolerance := min(sched.Next(next).Sub(next)/2, 10*time.Minute)
		if skip, err := c.skipTick(ctx, next.Add(-tolerance)); err != nil {
			log.Warn("checking for a recent consolidation run failed; running anyway", "err", err)
		} else if skip {
			log.Info("consolidation already ran for this tick in another process; skipping", "tick", next)
			continue
		}
		rep, err := c.Run(ctx, RunOptions{})
		switch {
		case errors.Is(err, ErrRunInProgress):
			log.Info("consolidation run skipped: another process is running one")
		case ctx.Err() != nil:
			return nil
		case err != nil:
			log.Error("consolidation run failed", "run", rep.RunID, "err", err)
		default:
			log.Info("consolidation run completed", "run", rep.RunID, "owners", rep.OwnersDone,
				"duration", rep.Duration().Round(time.Millisecond))
		}
	}
}

// skipTick reports whether an unfiltered, real run started at or after since (another
// replica served this tick).
func (c *Consolidator) skipTick(ctx context.Context, since time.Time) (bool, error) {
	return c.store.RunServedSince(ctx, since)
}
