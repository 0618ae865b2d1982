// Package transport is an http.RoundTripper that gives any Go client of an
// AI API — the official openai-go and anthropic-sdk-go among them — the
// resilience of the Fusebox gateway in-process, without a proxy:
//
//	rt, err := transport.New(transport.Config{Endpoints: endpoints})
//	client := openai.NewClient(
//		option.WithHTTPClient(&http.Client{Transport: rt}),
//		option.WithMaxRetries(0), // the transport owns retries
//	)
//
// # The walk
//
// A request is read once: its body is buffered (up to MaxBodyBuffer) so it
// can be replayed, and its top-level "model" and "stream" fields are read
// without decoding the rest. It then walks a ladder of equivalent endpoints:
// the one its URL falls under first (or its own URL), then the others in
// order. For each endpoint:
//
//   - an endpoint whose key was refused (Auth, Quota) within AuthCooldown is
//     skipped;
//   - the breaker of (endpoint, model) must admit the call, else the
//     endpoint is skipped at once — no waiting on an open breaker;
//   - the endpoint's pacer (requests and estimated tokens per minute) and
//     bulkhead must admit it within Limits.MaxWait and the request's
//     deadline, else it is skipped;
//   - the request goes out with the endpoint's URL, model and key, and an
//     Idempotency-Key kept across attempts (renewed after a throttle or a
//     capacity refusal, which providers would replay for the same key; an
//     endpoint that rewrites the model gets a key derived from it, as no
//     key may go with two bodies). The caller's credentials go only to the
//     origin the caller addressed: an endpoint elsewhere gets its own key
//     or none, and its Set-Cookie and redirect Location are dropped, so the
//     caller's http.Client neither stores its cookies under the caller's
//     host nor follows it elsewhere with the caller's headers;
//   - the answer is classified by package aierr. Success returns to the
//     caller. An outage or capacity refusal counts against the breaker (an
//     outage only) and fails over to the next endpoint at once; on the last
//     endpoint it is retried per Retry, under the retry budget. A throttle
//     slows the endpoint's pacer for the provider's wait; a short wait is
//     waited out, a long one fails over. An auth or quota refusal takes the
//     endpoint out of rotation and fails over. A client error returns to the
//     caller as it is, unless its sub-kind is listed in FailoverOn, or is
//     aierr.NotDeployed (the endpoint lacks the model; the next may have
//     it), which fail over.
//
// When nothing answers, the caller gets the last upstream's error response
// (status and body intact), or the last transport error, or — when every
// endpoint was skipped — an *UnavailableError that unwraps to each reason
// (errors.Is(err, breaker.ErrOpen)) and carries the soonest RetryAfter.
//
// # Budgets and streams
//
// FirstByte bounds, for any request, the time from sending it to the first
// byte of the response body, headers included (the transport reads that
// byte before returning, so a silent upstream fails over invisibly and
// counts against its breaker). For a streamed request Idle bounds each wait
// for more; a stalled stream ends with an error wrapping
// aierr.ErrStreamStalled. A response body reports to the breaker when it
// ends: success at EOF, failure on a read error or stall, nothing if the
// caller closes it early.
//
// The package uses only the standard library and Fusebox's library
// packages.
package transport
