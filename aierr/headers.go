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
	errType         string // x-amzn-ErrorType (AWS), as sent
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
	partErrorType // x-amzn-ErrorType: an AWS exception name
)

// Windows of RateLimits, by index.
const (
	winRequests = iota
	winTokens
	winInput
	winOutput
)

// maxErrorType bounds an x-amzn-ErrorType value: an exception name and a
// URL. A longer one is not read at all.
const maxErrorType = 512

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
		if len(name) == len("x-amzn-errortype") && hasPrefixFold(name, "x-amzn-errortype") {
			return partErrorType, 0
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
// Names are compared in place, ignoring ASCII case, without lower-casing
// them into a buffer first.
func rateLimitField(rest string, anthropic bool) (part, win int) {
	if !anthropic {
		switch len(rest) {
		case len("limit-tokens"): // == len("reset-tokens")
			switch {
			case equalFold(rest, "limit-tokens"):
				return partLimit, winTokens
			case equalFold(rest, "reset-tokens"):
				return partResetDur, winTokens
			}
		case len("limit-requests"): // == len("reset-requests")
			switch {
			case equalFold(rest, "limit-requests"):
				return partLimit, winRequests
			case equalFold(rest, "reset-requests"):
				return partResetDur, winRequests
			}
		case len("remaining-tokens"):
			if equalFold(rest, "remaining-tokens") {
				return partRemaining, winTokens
			}
		case len("remaining-requests"):
			if equalFold(rest, "remaining-requests") {
				return partRemaining, winRequests
			}
		}
		return partNone, 0
	}
	for i := range anthropicFields {
		f := &anthropicFields[i]
		if len(rest) == len(f.name) && equalFold(rest, f.name) {
			return f.part, f.win
		}
	}
	return partNone, 0
}

var anthropicFields = [...]struct {
	name      string
	part, win int
}{
	{"requests-limit", partLimit, winRequests},
	{"requests-remaining", partRemaining, winRequests},
	{"requests-reset", partResetTime, winRequests},
	{"tokens-limit", partLimit, winTokens},
	{"tokens-remaining", partRemaining, winTokens},
	{"tokens-reset", partResetTime, winTokens},
	{"input-tokens-limit", partLimit, winInput},
	{"input-tokens-remaining", partRemaining, winInput},
	{"input-tokens-reset", partResetTime, winInput},
	{"output-tokens-limit", partLimit, winOutput},
	{"output-tokens-remaining", partRemaining, winOutput},
	{"output-tokens-reset", partResetTime, winOutput},
}

// equalFold reports whether s equals the lower-case ASCII lit, ignoring
// ASCII case.
func equalFold(s, lit string) bool {
	if len(s) != len(lit) {
		return false
	}
	for i := 0; i < len(lit); i++ {
		if lower(s[i]) != lit[i] {
			return false
		}
	}
	return true
}

// scanHeaders reads the wait and rate-limit headers of h, and AWS's
// x-amzn-ErrorType, into hh. It walks
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
		case partErrorType:
			if len(v) <= maxErrorType {
				hh.errType = v
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
	if d, ok := parseSimpleDuration(v); ok {
		return clampWait(d), true
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
	var n uint64
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return 0, false
		default:
			n = n*10 + uint64(c-'0')
		}
	}
	if dots > 1 || v == "." {
		return 0, false
	}
	var f float64
	if dots == 0 && len(v) <= 15 {
		f = float64(n) // exact, as strconv.ParseFloat would give
	} else {
		var err error
		if f, err = strconv.ParseFloat(v, 64); err != nil {
			return 0, false
		}
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

// parseSimpleDuration is a fast path for the common one-unit reset values
// ("12ms", "2.328s", "6m", "1h"): up to 9 integer digits, an optional
// fraction of 1 to 9 digits, and a unit of ns, us, µs, ms, s, m or h. It
// computes exactly what time.ParseDuration would; anything else reports
// false and is left to time.ParseDuration.
func parseSimpleDuration(v string) (time.Duration, bool) {
	i := 0
	var n uint64
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		n = n*10 + uint64(v[i]-'0')
		i++
	}
	if i == 0 || i > 9 {
		return 0, false
	}
	var f uint64
	scale := 1.0
	hasFrac := false
	if i < len(v) && v[i] == '.' {
		i++
		j := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			f = f*10 + uint64(v[i]-'0')
			scale *= 10
			i++
		}
		if i == j || i-j > 9 {
			return 0, false
		}
		hasFrac = true
	}
	var unit uint64
	switch v[i:] {
	case "ns":
		unit = uint64(time.Nanosecond)
	case "us", "µs", "μs":
		unit = uint64(time.Microsecond)
	case "ms":
		unit = uint64(time.Millisecond)
	case "s":
		unit = uint64(time.Second)
	case "m":
		unit = uint64(time.Minute)
	case "h":
		unit = uint64(time.Hour)
	default:
		return 0, false
	}
	if n > (1<<63-1)/unit {
		return 0, false // overflow: left to time.ParseDuration
	}
	d := n * unit
	if hasFrac {
		d += uint64(float64(f) * (float64(unit) / scale))
	}
	if d > 1<<63-1 {
		return 0, false
	}
	return time.Duration(d), true
}
