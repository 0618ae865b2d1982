package aierr

import (
	"errors"
	"strconv"
	"time"
)

// Kind says what an answer from a provider means for the caller, its breaker
// and its retries. The zero Kind is Success.
type Kind uint8

// The kinds of answer. See the package documentation for what each one means
// for breakers, retries and failover.
const (
	// Success: the call worked.
	Success Kind = iota
	// Outage: the target is failing (5xx, 529, network error, timeout,
	// stalled stream). Trips the breaker; retry elsewhere, or here after
	// backoff.
	Outage
	// Throttle: the target is rate-limiting this caller (429). Does not trip
	// the breaker; wait as told, slow down, or fail over.
	Throttle
	// Capacity: the target's queue is full or it has no capacity right now.
	// Not an outage: lower concurrency and retry later under a new
	// idempotency key.
	Capacity
	// Auth: the key is invalid or lacks permission (401, 403). Take the key
	// out of rotation; other keys and targets may go on.
	Auth
	// Quota: the key's quota, balance or spend limit is used up (402,
	// insufficient_quota, a per-day limit). Take the key out of rotation;
	// other keys and targets may go on.
	Quota
	// ClientError: the request itself is wrong (400, 404, 413, 422). No
	// retry, no failover, except the sub-kinds ContextLength and
	// ContentFilter, which may go to another target, and NotDeployed,
	// which should.
	ClientError
	// Canceled: the caller canceled its own request. Nobody's fault
	// upstream: never trips, never retried.
	Canceled

	numKinds
)

var kindNames = [numKinds]string{
	Success:     "success",
	Outage:      "outage",
	Throttle:    "throttle",
	Capacity:    "capacity",
	Auth:        "auth",
	Quota:       "quota",
	ClientError: "client_error",
	Canceled:    "canceled",
}

// String returns the kind's lower-case name, as ParseKind accepts it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the Kind named s, as Kind.String writes it
// ("outage", "throttle", "client_error", …). It is meant for configuration
// files that override verdicts.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, errors.New("aierr: unknown kind " + strconv.Quote(s))
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler using ParseKind.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// SubKind refines a Kind: why a ClientError happened (ContextLength,
// ContentFilter, …) or what kind of Outage it was (Timeout, Connect, …).
// The zero SubKind, NoSub, adds nothing.
type SubKind uint8

// The sub-kinds. Each belongs to the Kind named in its comment, though an
// override may pair it with another Kind.
const (
	// NoSub: nothing more specific is known.
	NoSub SubKind = iota
	// ContextLength (ClientError): the prompt does not fit the model's
	// context window; a longer-context target may take it.
	ContextLength
	// ContentFilter (ClientError): the provider's safety system refused the
	// prompt or cut the answer; another target may take it if configured.
	ContentFilter
	// RequestTooLarge (ClientError): the request body is over the size limit.
	RequestTooLarge
	// NotFound (ClientError): unknown model or endpoint.
	NotFound
	// Unauthenticated (Auth): the key is missing, invalid or revoked.
	Unauthenticated
	// PermissionDenied (Auth): the key is valid but may not do this.
	PermissionDenied
	// DailyQuota (Quota): a per-day quota is used up; retrying today is
	// pointless.
	DailyQuota
	// Billing (Quota): balance, credits or a spend limit is used up.
	Billing
	// Overloaded (Outage): the provider says it is overloaded (529).
	Overloaded
	// Timeout (Outage): a connect, read or server-side deadline expired.
	Timeout
	// Connect (Outage): the connection could not be made (refused, DNS).
	Connect
	// ConnReset (Outage): the connection broke mid-call (reset, EOF).
	ConnReset
	// TLS (Outage): the TLS handshake failed. An unknown certificate
	// authority or a wrong host name is usually a configuration problem on
	// our side, but it still makes the target unusable, so it is an Outage.
	TLS
	// FirstByteTimeout (Outage): nothing arrived within the
	// time-to-first-byte budget (ErrFirstByteTimeout).
	FirstByteTimeout
	// StreamStalled (Outage): a stream went silent past its idle budget
	// (ErrStreamStalled).
	StreamStalled
	// NotDeployed (ClientError): the model is not there on this target:
	// not deployed (Azure DeploymentNotFound), not enabled for the account
	// or not offered in the region (Bedrock ResourceNotFoundException,
	// Vertex AI's "Publisher Model … was not found"). The target is
	// misconfigured, not failing and not throttling: the breaker ignores
	// it, and a ladder should go on to its next target, whatever the
	// alias says about other client errors.
	NotDeployed
	// NotReady (Outage): the model exists on the target but cannot serve
	// yet (Bedrock ModelNotReadyException, a model being loaded). The
	// target is unusable for now: it counts against the breaker, and the
	// walk fails over.
	NotReady

	numSubKinds
)

var subNames = [numSubKinds]string{
	NoSub:            "",
	ContextLength:    "context_length",
	ContentFilter:    "content_filter",
	RequestTooLarge:  "request_too_large",
	NotFound:         "not_found",
	Unauthenticated:  "unauthenticated",
	PermissionDenied: "permission_denied",
	DailyQuota:       "daily_quota",
	Billing:          "billing",
	Overloaded:       "overloaded",
	Timeout:          "timeout",
	Connect:          "connect",
	ConnReset:        "conn_reset",
	TLS:              "tls",
	FirstByteTimeout: "first_byte_timeout",
	StreamStalled:    "stream_stalled",
	NotDeployed:      "not_deployed",
	NotReady:         "not_ready",
}

// String returns the sub-kind's lower-case name; NoSub is "".
func (s SubKind) String() string {
	if s < numSubKinds {
		return subNames[s]
	}
	return "sub(" + strconv.Itoa(int(s)) + ")"
}

// BreakerOutcome is what a circuit breaker should record for a call.
type BreakerOutcome uint8

// The outcomes a breaker can record.
const (
	// BreakerIgnore: record nothing; the call says nothing about the
	// target's health (throttle, capacity, auth, quota, client error,
	// cancellation).
	BreakerIgnore BreakerOutcome = iota
	// BreakerSuccess: record a success.
	BreakerSuccess
	// BreakerFailure: record a failure (Outage only).
	BreakerFailure
)

// String returns "ignore", "success" or "failure".
func (o BreakerOutcome) String() string {
	switch o {
	case BreakerSuccess:
		return "success"
	case BreakerFailure:
		return "failure"
	case BreakerIgnore:
		return "ignore"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// WaitSource says where Verdict.Wait came from.
type WaitSource uint8

// The places a wait hint can come from, in order of precedence (highest
// first: a millisecond header beats Retry-After, which beats the body, …).
const (
	// NoWait: no hint was given; Wait is 0 and the caller's backoff decides.
	NoWait WaitSource = iota
	// WaitHeaderMS: retry-after-ms or x-ms-retry-after-ms.
	WaitHeaderMS
	// WaitRetryAfter: Retry-After, as seconds or an HTTP date.
	WaitRetryAfter
	// WaitBody: Gemini's google.rpc.RetryInfo retryDelay in the error body.
	WaitBody
	// WaitReset: rate-limit reset headers (x-ratelimit-reset-*,
	// anthropic-ratelimit-*-reset), used for Throttle and Capacity only.
	WaitReset
	// WaitMessage: "try again in 20s" and the like in the error message.
	WaitMessage
)

// String returns a short name for the source.
func (w WaitSource) String() string {
	switch w {
	case NoWait:
		return "none"
	case WaitHeaderMS:
		return "header-ms"
	case WaitRetryAfter:
		return "retry-after"
	case WaitBody:
		return "body"
	case WaitReset:
		return "reset"
	case WaitMessage:
		return "message"
	}
	return "source(" + strconv.Itoa(int(w)) + ")"
}

// MaxWait caps every wait hint: a provider asking for more than a day is
// treated as asking for a day.
const MaxWait = 24 * time.Hour

// Window is one rate-limit window a provider reported in its headers.
// Limit and Remaining are -1 when the provider did not report them; Reset is
// 0 when not reported.
type Window struct {
	Limit     int64         // the window's size (x-ratelimit-limit-*)
	Remaining int64         // what is left in it (x-ratelimit-remaining-*)
	Reset     time.Duration // time until it refills (x-ratelimit-reset-*)
}

// Exhausted reports whether the provider said nothing is left.
func (w Window) Exhausted() bool { return w.Remaining == 0 }

// RateLimits holds the rate-limit headers of a response, for limiters that
// follow the provider's own accounting. OpenAI-style headers fill Requests
// and Tokens; Anthropic also fills InputTokens and OutputTokens.
type RateLimits struct {
	Requests     Window
	Tokens       Window
	InputTokens  Window
	OutputTokens Window
}

var unknownWindow = Window{Limit: -1, Remaining: -1}

// unknownLimits is RateLimits with nothing reported.
var unknownLimits = RateLimits{unknownWindow, unknownWindow, unknownWindow, unknownWindow}

// Verdict is what an answer means: its Kind, and what the caller may do
// next. It is a plain value; classify once, where the facts are known, and
// pass the Verdict along.
type Verdict struct {
	// Kind is the class of answer.
	Kind Kind
	// Sub refines Kind (ContextLength, Timeout, …); NoSub if nothing more
	// is known.
	Sub SubKind
	// Status is the HTTP status, or the status an in-stream error carried
	// ("code":429 in an OpenRouter chunk); 0 for transport errors.
	Status int
	// Code is the provider's error code or type that decided the verdict
	// (rate_limit_exceeded, overloaded_error, RESOURCE_EXHAUSTED,
	// ThrottlingException, queue_full, …), at most MaxCodeLen bytes of
	// HTTP token characters (letters, digits and !#$%&'*+-.^_`|~), so it
	// is safe in a header or a metric label; an unknown code of any other
	// shape is dropped. A known code is spelled as the package knows it
	// (an in-stream "throttlingException" is ThrottlingException). For transport
	// errors it is a name of the package's own (connect, timeout,
	// first_byte_timeout, …). Overrides match on it.
	Code string
	// Message is the provider's error message, at most MaxMessageLen bytes.
	Message string
	// Cause is, for a transport error, what failed while the connection
	// was being made: CauseDNS, CauseRefused, CauseUnreachable,
	// CauseConnectTimeout, CauseCertificate, CauseHandshake or CauseProxy;
	// "" for an answer, an error after the connection was made, or a
	// connection that failed in a way the package does not know.
	Cause string

	// SameTarget reports whether the call may be retried on the same target
	// (after Wait, or after backoff when Wait is 0).
	SameTarget bool
	// OtherTarget reports whether the call may go to another target or key.
	// For ClientError it is true only for ContextLength and ContentFilter,
	// where the caller decides per model alias whether to use it, and for
	// NotDeployed, where it should always move on: the target cannot serve
	// the model at all.
	OtherTarget bool
	// NewIdempotencyKey reports that a retry must carry a new idempotency
	// key, because the provider would replay this refusal for the old one.
	NewIdempotencyKey bool

	// Wait is how long the provider asked the caller to wait before trying
	// again; 0 when it gave no hint. At most MaxWait.
	Wait time.Duration
	// WaitFrom says which hint Wait came from.
	WaitFrom WaitSource

	// Limits holds the rate-limit headers of the response.
	Limits RateLimits
}

// Breaker returns what a circuit breaker should record for this verdict:
// a failure for Outage only, a success for Success, nothing otherwise.
func (v Verdict) Breaker() BreakerOutcome {
	switch v.Kind {
	case Success:
		return BreakerSuccess
	case Outage:
		return BreakerFailure
	}
	return BreakerIgnore
}

// OK reports whether the verdict is Success.
func (v Verdict) OK() bool { return v.Kind == Success }

// String describes the verdict for logs, for example
// "throttle 429 rate_limit_exceeded wait=20s".
func (v Verdict) String() string {
	b := make([]byte, 0, 64)
	b = append(b, v.Kind.String()...)
	if v.Sub != NoSub {
		b = append(b, '/')
		b = append(b, v.Sub.String()...)
	}
	if v.Status != 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(v.Status), 10)
	}
	if v.Code != "" {
		b = append(b, ' ')
		b = append(b, v.Code...)
	}
	if v.Cause != "" {
		b = append(b, " cause="...)
		b = append(b, v.Cause...)
	}
	if v.Wait > 0 {
		b = append(b, " wait="...)
		b = append(b, v.Wait.String()...)
	}
	return string(b)
}

// Detail is Code followed by Cause when there is one ("connect: dns",
// "tls: certificate", "timeout: connect_timeout"), or Code alone: the
// few words that say why a call failed, for logs and error messages.
func (v Verdict) Detail() string {
	if v.Cause == "" {
		return v.Code
	}
	return v.Code + ": " + v.Cause
}

// policy fills the retry and failover fields from Kind and Sub.
func (v *Verdict) policy() {
	v.SameTarget, v.OtherTarget, v.NewIdempotencyKey = false, false, false
	switch v.Kind {
	case Outage, Throttle:
		v.SameTarget, v.OtherTarget = true, true
	case Capacity:
		v.SameTarget, v.OtherTarget, v.NewIdempotencyKey = true, true, true
	case Auth, Quota:
		v.OtherTarget = true
	case ClientError:
		v.OtherTarget = v.Sub == ContextLength || v.Sub == ContentFilter || v.Sub == NotDeployed
	}
}
