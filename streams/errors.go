package streams

import (
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// permanentError marks a failure that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that the worker runtime dead-letters the message at once
// instead of retrying it. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err was marked with Permanent (or backoff.Permanent).
func IsPermanent(err error) bool {
	var p *permanentError
	var bp *backoff.PermanentError
	return errors.As(err, &p) || errors.As(err, &bp)
}

// retryAfterError asks for redelivery after a specific delay.
type retryAfterError struct {
	delay time.Duration
	err   error
}

func (e *retryAfterError) Error() string {
	return fmt.Sprintf("retry after %s: %v", e.delay, e.err)
}
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter asks the runtime to redeliver the message after d (for instance a rate
// limiter's Retry-After) instead of the computed backoff. It still counts as a failed
// delivery: on the last allowed delivery the message is dead-lettered.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		err = errors.New("retry requested")
	}
	return &retryAfterError{delay: max(d, 0), err: err}
}

// retryDelay returns the delay requested with RetryAfter, if any.
func retryDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}
