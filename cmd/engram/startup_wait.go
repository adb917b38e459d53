package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Start-up waits of the long-running commands (serve, dev, worker; see App.WaitDeps).
const (
	startupFirstWait = 250 * time.Millisecond
	startupMaxWait   = 10 * time.Second
)

// waitDependency runs open until it succeeds, fails in a way outage does not accept
// (a wrong password, a missing migration: waiting would not help), or ctx ends. With
// App.WaitDeps unset it runs open once: a one-off command with a dependency down should
// fail at once, a service started before its database should wait for it. Between
// attempts it waits with capped exponential backoff and logs what it waits for.
func (a *App) waitDependency(ctx context.Context, what string, outage func(error) bool, open func() error) error {
	if !a.WaitDeps {
		return open()
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = startupFirstWait, startupMaxWait, 0
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := open()
		if err == nil {
			if attempt > 1 {
				a.Logger.Info(what+" is reachable; starting", "waited", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		if !outage(err) || ctx.Err() != nil {
			return err
		}
		wait := b.NextBackOff()
		a.Logger.Warn("waiting for "+what, "err", err, "attempt", attempt, "retry_in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}
