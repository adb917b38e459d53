package llm

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
	"time"
)

// Call describes one finished model call for an Observer: a chat completion (Op "chat")
// or one embeddings request (Op "embed"). It carries no request or reply content.
type Call struct {
	Op               string // "chat" or "embed"
	Model            string
	Duration         time.Duration // the whole call, retries included
	Err              error         // nil on success
	PromptTokens     int
	CompletionTokens int
	Attempts         int
}

// Observer is told about every finished call; it must be cheap and safe for concurrent use.
type Observer func(Call)

// SetObserver makes the client report its calls to o (nil stops reporting). Call it before
// the client is shared.
func (c *ChatClient) SetObserver(o Observer) { c.observe = o }

// SetObserver makes the embedder report its requests to o (nil stops reporting). Call it
// before the embedder is shared.
func (e *OpenAIEmbedder) SetObserver(o Observer) { e.observe = o }

// Error kinds of ErrorKind: a bounded set, usable as a metric label.
const (
	KindUnreachable = "unreachable" // connection refused, no route, DNS failure: nothing answered
	KindTimeout     = "timeout"     // an attempt's deadline expired
	KindRateLimited = "rate_limited"
	KindServer      = "server" // HTTP 5xx
	KindClient      = "client" // other HTTP 4xx (auth, bad request, unknown model)
	KindCanceled    = "canceled"
	KindInvalid     = "invalid_reply" // the server answered something unusable
	KindOther       = "other"
)

// ErrorKind classifies a call's error for logs and metrics. A refused connection is
// "unreachable", never a sign that the model is busy.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.Canceled) {
		return KindCanceled
	}
	if code := statusCode(err); code != 0 {
		switch {
		case code == 429:
			return KindRateLimited
		case code >= 500:
			return KindServer
		default:
			return KindClient
		}
	}
	if IsUnreachable(err) {
		return KindUnreachable
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return KindTimeout
	}
	if errors.Is(err, ErrPermanent) || errors.Is(err, ErrInvalidReply) {
		return KindInvalid
	}
	return KindOther
}

// IsUnreachable reports whether err means no server answered at all: a refused or reset
// connection, an unreachable network or host, or a name that does not resolve.
func IsUnreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" && !opErr.Timeout() {
		return true
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Err != nil && urlErr.Err != err {
		return IsUnreachable(urlErr.Err)
	}
	return false
}
