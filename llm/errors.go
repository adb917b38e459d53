// Package llm holds engram's model clients: an OpenAI-compatible chat client (OpenAI, DeepSeek,
// Qwen, Ollama, vLLM …), an OpenAI-compatible embedder, and a local deterministic hashing
// embedder used when no embedding endpoint is configured. Remote calls share one retry policy:
// 429, 5xx, timeouts and network errors are retried with exponential backoff (honouring
// Retry-After); other 4xx are permanent.
package llm

import (
	"context"
	"errors"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// ErrPermanent marks failures that retrying will not fix (bad request, auth, unknown
// model). Workers should terminate such messages (to the DLQ) rather than redeliver.
var ErrPermanent = errors.New("permanent failure")

// ErrInvalidReply marks a reply the client could not use (wrong vector count or dims,
// bad indexes) after maxInvalidReplyAttempts attempts with backoff. It is not permanent:
// an endpoint that answers nonsense is broken for every message (a model being
// redeployed, a misconfigured proxy) and may recover; workers hold messages through it
// and dead-letter only a message for which it keeps failing while others succeed (see
// streams.Worker).
var ErrInvalidReply = errors.New("invalid reply")

// maxInvalidReplyAttempts bounds the attempts of one call that keep getting invalid replies.
const maxInvalidReplyAttempts = 3

// IsRetryable reports whether the call that returned err may succeed if made again later.
// Errors wrapping ErrPermanent and HTTP 4xx other than 408, 425 and 429 are not retryable;
// everything else is, including context cancellation (a worker shutting down should let the
// message be redelivered, not drop it).
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, ErrPermanent) {
		return false
	}
	if code := statusCode(err); code != 0 {
		return retryableStatus(code)
	}
	return true
}

// IsOutage reports whether err says the model endpoint is unavailable or misbehaving
// rather than the request being at fault: nothing answered, an attempt timed out, 429,
// 408, 425, 5xx, or replies that stayed invalid. A worker holds its message through such
// errors instead of spending its deliveries.
func IsOutage(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrInvalidReply) {
		return true
	}
	if errors.Is(err, ErrPermanent) {
		return false
	}
	if code := statusCode(err); code != 0 {
		return retryableStatus(code)
	}
	switch ErrorKind(err) {
	case KindUnreachable, KindTimeout:
		return true
	}
	return false
}

func retryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests:
		return true
	case code >= 500:
		return true
	case code >= 400:
		return false
	}
	return true
}

// statusCode extracts the HTTP status from go-openai's error types (0 if none).
func statusCode(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0 {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0 {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// errorText is the server's description of an HTTP error, for recognising which parameter it
// rejected. Non-OpenAI servers often send bodies go-openai cannot parse; those land in
// RequestError.Body.
func errorText(err error) string {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		s := apiErr.Message
		if apiErr.Param != nil {
			s += " param=" + *apiErr.Param
		}
		if code, ok := apiErr.Code.(string); ok {
			s += " code=" + code
		}
		return s
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.Error() // includes the body
	}
	return err.Error()
}
