// Package aierr reads what an AI provider's answer means.
//
// Given an HTTP status, the response headers and the (possibly partial)
// body, a transport error, one server-sent event of a stream, a completed
// 200 body or a job's error record, it returns a Verdict: a Kind, an
// optional SubKind, whether the call may be retried on the same target or
// sent to another one, and how long the provider asked to wait. The router
// switches on the Verdict; nothing downstream re-parses provider bodies.
//
// It knows the error shapes of OpenAI, Azure OpenAI, Anthropic, Google
// Gemini, OpenRouter, DeepSeek, job APIs (queue_full,
// provider_capacity_exceeded, runtime_unavailable) and OpenAI-compatible
// servers (vLLM, TGI) whose only clue is the message text.
//
// # What each Kind means
//
//	Kind         breaker  same target           other target        examples
//	Success      success  -                     -                   2xx
//	Outage       failure  yes, after backoff    yes                 5xx, 529, timeouts, resets,
//	                                                                ErrFirstByteTimeout, ErrStreamStalled
//	Throttle     ignore   yes, after Wait       yes (if Wait is     429 rate_limit_exceeded,
//	                                            too long to afford) rate_limit_error, RESOURCE_EXHAUSTED
//	Capacity     ignore   yes, later, with a    yes                 queue_full,
//	                      new idempotency key                       provider_capacity_exceeded
//	Auth         ignore   no (disable the key)  yes (other keys)    401, 403, invalid_api_key
//	Quota        ignore   no (disable the key)  yes (other keys)    402, insufficient_quota, PerDay quota
//	ClientError  ignore   no                    only ContextLength  400, 404, 413, 422
//	                                            and ContentFilter
//	Canceled     ignore   no                    no                  the caller's context.Canceled
//
// Verdict.Breaker gives the breaker column, Verdict.SameTarget and
// Verdict.OtherTarget the next two; Verdict.NewIdempotencyKey is set for
// Capacity.
//
// # How a body is read
//
// A provider-specific code beats the HTTP status, which beats a generic
// code: a 429 with "insufficient_quota" is Quota, a 400 with
// "context_length_exceeded" is ClientError/ContextLength, and a 503 with
// "invalid_request_error" is still an Outage. The message then refines the
// verdict: "maximum context length" makes a plain 400 a ContextLength error,
// a per-day quota or "exceeded your current quota" makes a 429 Quota, and
// "at capacity" makes a 429 or 5xx Capacity.
//
// Only the first MaxBody (64 KiB) bytes of a body are read, messages are
// kept up to MaxMessageLen bytes and codes up to MaxCodeLen (of HTTP token
// characters only: a code is safe in a header), so no input
// makes the classifier allocate without bound; it never panics. The JSON
// is read in one pass by aireq's lenient Reader rather than decoded with
// encoding/json, but as encoding/json would read it: keys and the values
// compared are decoded ("c\u006fde" is code), and of a key given twice
// the last counts. On a 2-core VM, classifying an OpenAI 429 with 18
// headers and a JSON body takes about 1 µs and a 503 0.3–0.6 µs, each
// with one allocation (the message string); see bench_test.go.
//
// # Wait hints
//
// Verdict.Wait is taken from the first of these that is present:
// retry-after-ms and x-ms-retry-after-ms; Retry-After (seconds, fractional
// seconds or an HTTP date); Gemini's RetryInfo.retryDelay in the body;
// the reset headers (x-ratelimit-reset-requests/-tokens as Go-like
// durations, anthropic-ratelimit-*-reset as RFC 3339 times), for Throttle
// and Capacity only; and "try again in 20s" in the message. Verdict.Limits
// holds the limit, remaining and reset headers of any response, successful
// or not, for limiters that follow the provider's accounting.
//
// # Overrides
//
// An operator can remap a status or a code per target with
// Classifier.Overrides, for example counting 429 as an Outage; the retry and
// failover fields follow the new Kind. The package-level functions use a
// zero Classifier.
//
// # Errors
//
// Verdict.Err and WrapError turn a verdict into an *Error, which has the
// RetryAfter and Retryable methods the retry package looks for; FromError
// gets the Verdict back out of an error chain.
package aierr
