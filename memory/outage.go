package memory

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsOutage reports whether err says PostgreSQL is unreachable or unable to serve right
// now, as opposed to refusing this statement: a failed connect, a connection lost or
// closed mid-statement, a timeout, or a server shutting down, starting up or out of
// connections. Workers hold their message through such errors instead of redelivering it
// towards the dead-letter queue. Serialization failures and deadlocks are not outages
// (IsRetryable covers them): they belong to the transaction and are retried there.
func IsOutage(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300", "08000", "08001", "08003", "08004", "08006":
			return true
		}
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}
