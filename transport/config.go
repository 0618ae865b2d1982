package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/retry"
)

// Config sets up a Transport. The zero value is usable: the request goes
// where the SDK sent it, behind a breaker per (host, model) with the breaker
// package's defaults, retried per retry's defaults under a retry budget.
type Config struct {
	// Base sends the requests. nil: http.DefaultTransport.
	Base http.RoundTripper

	// Endpoints are equivalent upstreams, in order of preference. A request
	// whose URL falls under one of them starts there and fails over to the
	// others in order; any other request is sent to its own URL first and
	// then fails over to all of them. Empty: no failover.
	Endpoints []Endpoint

	// Breaker is the template for the breaker of each (endpoint, model);
	// Name is set per breaker. The zero Config trips after 5 consecutive
	// failures and stays open 30 s.
	Breaker breaker.Config
	// Retry governs retries on the same endpoint (Attempts counts attempts
	// per endpoint) and the waits between them. Failing over to another
	// endpoint happens at once and is not a retry.
	Retry retry.Policy
	// Budget caps same-endpoint retries at a fraction of recent requests.
	// Zero: retry's defaults (20 % plus 10 per second).
	Budget retry.BudgetConfig
	// ThrottleWait is the longest wait hint of a throttled endpoint the
	// transport waits out when another endpoint could answer at once; a
	// longer hint fails over. The last endpoint waits up to Retry.MaxWait.
	// 0: 1 s.
	ThrottleWait time.Duration
	// AuthCooldown is how long an endpoint whose key was refused (401, 403,
	// quota) stays out of the rotation. 0: 5 minutes.
	AuthCooldown time.Duration
	// FailoverOn lists client-error sub-kinds that may go to the next
	// endpoint instead of returning to the caller (aierr.ContextLength for
	// an endpoint with a longer context, aierr.ContentFilter). Empty: none.
	FailoverOn []aierr.SubKind

	// FirstByte bounds, for every attempt, streamed or not, the time from
	// sending the request to its response headers and the first byte of
	// the response body; past it the attempt is abandoned as an outage of
	// its endpoint (aierr.ErrFirstByteTimeout) and fails over. 0: no bound.
	FirstByte time.Duration
	// Idle bounds, for a streamed request ("stream": true), each wait for
	// more of the response body, the first byte included when FirstByte is
	// 0; past it the stream ends with an error wrapping
	// aierr.ErrStreamStalled (before the first byte: the attempt fails
	// over). 0: no bound.
	Idle time.Duration

	// Limits apply to each endpoint that has none of its own.
	Limits Limits

	// MaxBodyBuffer is the largest request body kept in memory for reading
	// the model and replaying on retries. A larger body is sent once, as it
	// is, with no retry or failover. 0: 32 MiB.
	MaxBodyBuffer int64
	// IdempotencyHeader names the header that carries the idempotency key
	// added to POST requests that have none. 0: "Idempotency-Key". "-":
	// add none.
	IdempotencyHeader string

	// Classifier reads responses and errors. nil: aierr's defaults.
	Classifier *aierr.Classifier
	// OnAttempt, if set, is called after every attempt and every skipped
	// endpoint, from the goroutine running the request.
	OnAttempt func(Attempt)
	// Clock is the time source for waits and stream budgets. nil: system.
	Clock clock.Clock
}

// Endpoint is one upstream able to answer the same requests.
type Endpoint struct {
	// Name identifies the endpoint in events and breaker names. "": its
	// host.
	Name string
	// BaseURL is the API root requests are relative to, such as
	// https://api.openai.com/v1 or https://myres.openai.azure.com/openai/v1.
	BaseURL string
	// Model replaces the request's "model" when set.
	Model string
	// APIKey replaces the request's credentials when set, in the header
	// named by Auth; the caller's other API-key headers are removed. Unset,
	// an endpoint on the caller's origin (scheme, host and port of the
	// request's URL) gets the caller's credentials, and an endpoint on
	// another origin gets none: no Authorization, Proxy-Authorization,
	// X-Api-Key, Api-Key, X-Goog-Api-Key, Cookie nor "key" query
	// parameter of the caller's, only what Header sets.
	APIKey string
	// Auth says how APIKey is sent: "bearer" (Authorization: Bearer, the
	// OpenAI style), "api-key" (Azure OpenAI), "x-api-key" (Anthropic).
	// "": the style the request already uses, else bearer.
	Auth string
	// Header is added to every request sent to this endpoint, replacing
	// the caller's values of the same names (compared case-insensitively).
	// New copies it.
	Header http.Header
	// Limits replaces Config.Limits for this endpoint when any is set.
	Limits Limits
}

// Limits paces an endpoint. Every zero field is "no limit".
type Limits struct {
	// RequestsPerMinute and TokensPerMinute pace requests; tokens are
	// estimated from the request body (a quarter of its bytes plus
	// max_tokens).
	RequestsPerMinute, TokensPerMinute float64
	// MaxInFlight bounds concurrent requests to the endpoint.
	MaxInFlight int
	// MaxWait bounds the wait for a pacer or a bulkhead slot; an endpoint
	// that cannot admit within it (or the request's deadline) is skipped.
	// 0: 1 s.
	MaxWait time.Duration
}

func (l Limits) set() bool {
	return l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 || l.MaxInFlight > 0 || l.MaxWait > 0
}

func (l Limits) validate(field string) []error {
	var errs []error
	if l.RequestsPerMinute < 0 || l.TokensPerMinute < 0 || l.MaxInFlight < 0 || l.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("transport: %s = %+v: limits must not be negative", field, l))
	}
	return errs
}

// Defaults for zero Config fields.
const (
	DefaultThrottleWait  = time.Second
	DefaultAuthCooldown  = 5 * time.Minute
	DefaultMaxBodyBuffer = 32 << 20
	DefaultLimitWait     = time.Second
)

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Base == nil {
		c.Base = http.DefaultTransport
	}
	if c.ThrottleWait == 0 {
		c.ThrottleWait = DefaultThrottleWait
	}
	if c.AuthCooldown == 0 {
		c.AuthCooldown = DefaultAuthCooldown
	}
	if c.MaxBodyBuffer == 0 {
		c.MaxBodyBuffer = DefaultMaxBodyBuffer
	}
	if c.IdempotencyHeader == "" {
		c.IdempotencyHeader = "Idempotency-Key"
	}
	if c.Classifier == nil {
		c.Classifier = &aierr.Classifier{}
	}
	if c.Retry.Clock == nil {
		c.Retry.Clock = c.Clock
	}
	if c.Budget.Clock == nil {
		c.Budget.Clock = c.Clock
	}
	if c.Breaker.Clock == nil {
		c.Breaker.Clock = c.Clock
	}
	for name, d := range map[string]time.Duration{"ThrottleWait": c.ThrottleWait, "AuthCooldown": c.AuthCooldown,
		"FirstByte": c.FirstByte, "Idle": c.Idle} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("transport: %s = %v: must not be negative", name, d))
		}
	}
	if c.MaxBodyBuffer < 0 {
		errs = append(errs, fmt.Errorf("transport: MaxBodyBuffer = %d: must not be negative", c.MaxBodyBuffer))
	}
	errs = append(errs, c.Limits.validate("Limits")...)
	for i, e := range c.Endpoints {
		errs = append(errs, e.Limits.validate(fmt.Sprintf("Endpoints[%d].Limits", i))...)
		if _, err := parseBase(e.BaseURL); err != nil {
			errs = append(errs, fmt.Errorf("transport: Endpoints[%d].BaseURL: %w", i, err))
		}
		switch e.Auth {
		case "", "bearer", "api-key", "x-api-key":
		default:
			errs = append(errs, fmt.Errorf("transport: Endpoints[%d].Auth = %q: want bearer, api-key or x-api-key", i, e.Auth))
		}
	}
	return c, errors.Join(errs...)
}

// parseBase parses an endpoint's BaseURL; its path never ends in a slash.
func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q: want an absolute http or https URL", s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
