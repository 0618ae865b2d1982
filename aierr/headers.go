package aierr

import (
	"net/http"
	"strconv"
	"time"
)

// headerHints is what the classifier takes from response headers.
type headerHints struct {
	ms, after       time.Duration // retry-after-ms / x-ms-retry-after-ms; Retry-After
	hasMS, hasAfter bool
	limits          RateLimits
}

// Parts of a rate-limit window a header can carry.
const (
	partNone      = iota
	partLimit     // a count
	partRemaining // a count
	partResetDur  // a Go-like duration: 6m0s, 1s, 20ms, 1m30.5s (OpenAI)
	partResetTime // an RFC 3339 time (Anthropic)
	partAfter     // Retry-After: seconds or an HTTP date
	partAfterMS   // retry-after-ms, x-ms-retry-after-ms: milliseconds
)

// Windows of RateLimits, by index.
const (
	winRequests = iota
	winTokens
	winInput
	winOutput
)

// headerField says what a header is about, ignoring case. A prefix check
// rejects most headers at their first bytes; for the rest only the part
// after the family prefix is lower-cased (into a stack buffer) and switched
// on, so it does not allocate.
func headerField(name string) (part, win int) {
	if len(name) < len("retry-after") {
		return partNone, 0
	}
	switch name[0] {
	case 'r', 'R':
		switch {
		case len(name) == len("retry-after") && hasPrefixFold(name, "retry-after"):
			return partAfter, 0
		case len(name) == len("retry-after-ms") && hasPrefixFold(name, "retry-after-ms"):
			return partAfterMS, 0
		}
	case 'x', 'X':
		if hasPrefixFold(name, "x-ratelimit-") {
			return rateLimitField(name[len("x-ratelimit-"):], false)
		}
		if len(name) == len("x-ms-retry-after-ms") && hasPrefixFold(name, "x-ms-retry-after-ms") {
			return partAfterMS, 0
		}
	case 'a', 'A':
		if hasPrefixFold(name, "anthropic-ratelimit-") {
			return rateLimitField(name[len("anthropic-ratelimit-"):], true)
		}
	}
	return partNone, 0
}

// rateLimitField reads the rest of an x-ratelimit- header name
// ("remaining-tokens") or an anthropic-ratelimit- one ("tokens-remaining").
func rateLimitField(rest string, anthropic bool) (part, win int) {
	var buf [32]byte
	if len(rest) > len(buf) {
		return partNone, 0
	}
	if !anthropic {
		switch string(lowerBytes(buf[:0], rest)) {
		case "limit-requests":
			return partLimit, winRequests
		case "limit-tokens":
			return partLimit, winTokens
		case "remaining-requests":
			return partRemaining, winRequests
		case "remaining-tokens":
			return partRemaining, winTokens
		case "reset-requests":
			return partResetDur, winRequests
		case "reset-tokens":
			return partResetDur, winTokens
		}
		return partNone, 0
	}
	switch string(lowerBytes(buf[:0], rest)) {
	case "requests-limit":
		return partLimit, winRequests
	case "requests-remaining":
		return partRemaining, winRequests
	case "requests-reset":
		return partResetTime, winRequests
	case "tokens-limit":
		return partLimit, winTokens
	case "tokens-remaining":
		return partRemaining, winTokens
	case "tokens-reset":
		return partResetTime, winTokens
	case "input-tokens-limit":
		return partLimit, winInput
	case "input-tokens-remaining":
		return partRemaining, winInput
	case "input-tokens-reset":
		return partResetTime, winInput
	case "output-tokens-limit":
		return partLimit, winOutput
	case "output-tokens-remaining":
		return partRemaining, winOutput
	case "output-tokens-reset":
		return partResetTime, winOutput
	}
	return partNone, 0
}

// scanHeaders reads the wait and rate-limit headers of h into hh. It walks
// the header map once rather than looking up twenty names. Values that do
// not parse are ignored.
func (c *Classifier) scanHeaders(h http.Header, hh *headerHints, clk *lazyNow) {
	hh.limits = unknownLimits
	for name, vals := range h {
		if len(vals) == 0 {
			continue
		}
		part, win := headerField(name)
		if part == partNone {
			continue
		}
		v := trimSpace(vals[0])
		w := hh.limits.window(win)
		switch part {
		case partLimit:
			if n, ok := parseCount(v); ok {
				w.Limit = n
			}
		case partRemaining:
			if n, ok := parseCount(v); ok {
				w.Remaining = n
			}
		case partResetDur:
			if d, ok := parseDuration(v); ok {
				w.Reset = d
			}
		case partResetTime:
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				w.Reset = clampWait(t.Sub(clk.now()))
			}
		case partAfter:
			if d, ok := parseRetryAfter(v, clk); ok {
				hh.after, hh.hasAfter = d, true
			}
		case partAfterMS:
			if d, ok := parseSeconds(v, time.Millisecond); ok {
				hh.ms, hh.hasMS = d, true
			}
		}
	}
}

func (l *RateLimits) window(i int) *Window {
	switch i {
	case winTokens:
		return &l.Tokens
	case winInput:
		return &l.InputTokens
	case winOutput:
		return &l.OutputTokens
	}
	return &l.Requests
}

// resetWait is the wait the reset headers imply: the longest reset among the
// windows reported as exhausted, or, when none is known to be exhausted, the
// longest reset reported.
func (l *RateLimits) resetWait() (time.Duration, bool) {
	var exhausted, any time.Duration
	var hasExhausted, hasAny bool
	for _, w := range [...]Window{l.Requests, l.Tokens, l.InputTokens, l.OutputTokens} {
		if w.Reset <= 0 {
			continue
		}
		any, hasAny = max(any, w.Reset), true
		if w.Exhausted() {
			exhausted, hasExhausted = max(exhausted, w.Reset), true
		}
	}
	if hasExhausted {
		return exhausted, true
	}
	return any, hasAny
}

// lazyNow reads the classifier's clock at most once, and only if needed.
type lazyNow struct {
	c   *Classifier
	t   time.Time
	set bool
}

func (l *lazyNow) now() time.Time {
	if !l.set {
		l.t, l.set = l.c.now(), true
	}
	return l.t
}

// ParseRetryAfter parses a Retry-After value: a number of seconds (fractions
// allowed, "1.5") or an HTTP date, measured from now(). A date in the past
// gives 0. Negative, empty and malformed values report false. The result is
// at most MaxWait. now is called only for a date; nil means time.Now.
func ParseRetryAfter(v string, now func() time.Time) (time.Duration, bool) {
	return parseRetryAfter(trimSpace(v), &lazyNow{c: &Classifier{Now: now}})
}

func parseRetryAfter(v string, clk *lazyNow) (time.Duration, bool) {
	if d, ok := parseSeconds(v, time.Second); ok {
		return d, true
	}
	if len(v) < len("Mon Jan _2 15:04:05 2006") || len(v) > 64 || v[0] < 'A' {
		return 0, false
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return clampWait(t.Sub(clk.now())), true
}

// ParseResetDuration parses the Go-like durations of x-ratelimit-reset-*
// headers ("6m0s", "1s", "20ms", "1m30.5s", "2h3m"), or a bare number of
// seconds. Negative and malformed values report false. The result is at most
// MaxWait.
func ParseResetDuration(v string) (time.Duration, bool) {
	return parseDuration(trimSpace(v))
}

func parseDuration(v string) (time.Duration, bool) {
	if d, ok := parseSeconds(v, time.Second); ok {
		return d, true
	}
	if len(v) == 0 || len(v) > 32 || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	for i := 0; i < len(v); i++ { // reject early what ParseDuration would refuse
		c := v[i]
		if !(c >= '0' && c <= '9' || c == '.' || c >= 'a' && c <= 'z' || c >= 0x80) {
			return 0, false
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false
	}
	return clampWait(d), true
}

// parseSeconds parses a non-negative decimal number ("20", "1.5") of units.
func parseSeconds(v string, unit time.Duration) (time.Duration, bool) {
	if len(v) == 0 || len(v) > 32 {
		return 0, false
	}
	dots := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return 0, false
		}
	}
	if dots > 1 || v == "." {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	if f*float64(unit) >= float64(MaxWait) {
		return MaxWait, true
	}
	return time.Duration(f * float64(unit)), true
}

// parseCount parses a non-negative integer header such as
// x-ratelimit-remaining-tokens.
func parseCount(v string) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// clampWait keeps a wait within [0, MaxWait].
func clampWait(d time.Duration) time.Duration {
	return min(max(d, 0), MaxWait)
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix,
// ignoring case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
