package aierr

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := func() time.Time { return testNow }
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"0.25", 250 * time.Millisecond, true},
		{"Sun, 01 Jun 2025 12:00:30 GMT", 30 * time.Second, true}, // IMF-fixdate, future
		{"Sun, 01 Jun 2025 11:59:00 GMT", 0, true},                // past: no wait
		{"Sunday, 01-Jun-25 12:01:00 GMT", time.Minute, true},     // RFC 850
		{"Sun Jun  1 12:00:05 2025", 5 * time.Second, true},       // ANSI C
		{"99999999999999", MaxWait, true},                         // capped
		{"1e3", 0, false},                                         // not a plain number
		{"-5", 0, false},
		{"", 0, false},
		{".", 0, false},
		{"1.2.3", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"Sun, 32 Jun 2025 12:00:30 GMT", 0, false},
		{"0x10", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseResetDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"6m0s", 6 * time.Minute, true},
		{"1s", time.Second, true},
		{"20ms", 20 * time.Millisecond, true},
		{"1m30.5s", 90*time.Second + 500*time.Millisecond, true},
		{"2.328s", 2328 * time.Millisecond, true},
		{"1h2m3s", time.Hour + 2*time.Minute + 3*time.Second, true},
		{"500us", 500 * time.Microsecond, true},
		{"7", 7 * time.Second, true}, // a bare number is seconds
		{"0.5", 500 * time.Millisecond, true},
		{"0s", 0, true},
		{"10000h", MaxWait, true},
		{"-1s", 0, false},
		{"", 0, false},
		{"s", 0, false},
		{"1x", 0, false},
		{"1 s", 0, false},
		{"tomorrow", 0, false},
		{"2025-06-01T12:00:00Z", 0, false},
		{"99999999999999999999h", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseResetDuration(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseResetDuration(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestWaitHeaders checks each header format end to end through Classify, and
// the precedence between them.
func TestWaitHeaders(t *testing.T) {
	c := testClassifier()
	tests := []struct {
		name   string
		status int
		h      http.Header
		body   string
		want   time.Duration
		from   WaitSource
	}{
		{"retry-after seconds", 429, http.Header{"Retry-After": {"7"}}, "", 7 * time.Second, WaitRetryAfter},
		{"retry-after fraction", 429, http.Header{"Retry-After": {"0.75"}}, "", 750 * time.Millisecond, WaitRetryAfter},
		{"retry-after future date", 503, http.Header{"Retry-After": {"Sun, 01 Jun 2025 12:02:00 GMT"}}, "", 2 * time.Minute, WaitRetryAfter},
		{"retry-after past date", 503, http.Header{"Retry-After": {"Sat, 31 May 2025 12:00:00 GMT"}}, "", 0, WaitRetryAfter},
		{"retry-after garbage", 429, http.Header{"Retry-After": {"later"}}, "", 0, NoWait},
		{"retry-after-ms", 429, http.Header{"Retry-After-Ms": {"250"}}, "", 250 * time.Millisecond, WaitHeaderMS},
		{"retry-after-ms fraction", 429, http.Header{"Retry-After-Ms": {"12.5"}}, "", 12500 * time.Microsecond, WaitHeaderMS},
		{"x-ms-retry-after-ms", 429, http.Header{"X-Ms-Retry-After-Ms": {"5250"}}, "", 5250 * time.Millisecond, WaitHeaderMS},
		{"ms beats seconds", 429, http.Header{"Retry-After": {"6"}, "Retry-After-Ms": {"5250"}}, "", 5250 * time.Millisecond, WaitHeaderMS},
		{"garbage ms falls back to seconds", 429, http.Header{"Retry-After": {"6"}, "Retry-After-Ms": {"x"}}, "", 6 * time.Second, WaitRetryAfter},
		{"lower-case keys set directly", 429, http.Header{"retry-after-ms": {"40"}}, "", 40 * time.Millisecond, WaitHeaderMS},
		{"reset duration 6m0s", 429, http.Header{"X-Ratelimit-Reset-Requests": {"6m0s"}}, "", 6 * time.Minute, WaitReset},
		{"reset 20ms", 429, http.Header{"X-Ratelimit-Reset-Tokens": {"20ms"}}, "", 20 * time.Millisecond, WaitReset},
		{"reset exhausted window wins", 429, http.Header{
			"X-Ratelimit-Reset-Requests": {"6m0s"}, "X-Ratelimit-Remaining-Requests": {"12"},
			"X-Ratelimit-Reset-Tokens": {"1m30.5s"}, "X-Ratelimit-Remaining-Tokens": {"0"},
		}, "", 90*time.Second + 500*time.Millisecond, WaitReset},
		{"reset garbage ignored", 429, http.Header{"X-Ratelimit-Reset-Tokens": {"soon"}}, "", 0, NoWait},
		{"anthropic RFC 3339 reset", 429, http.Header{"Anthropic-Ratelimit-Requests-Reset": {"2025-06-01T12:00:42Z"}}, "", 42 * time.Second, WaitReset},
		{"anthropic fractional RFC 3339 reset", 429, http.Header{"Anthropic-Ratelimit-Tokens-Reset": {"2025-06-01T12:00:01.5Z"}}, "", 1500 * time.Millisecond, WaitReset},
		{"anthropic reset in the past", 429, http.Header{"Anthropic-Ratelimit-Tokens-Reset": {"2025-06-01T11:00:00Z"}}, "", 0, NoWait},
		{"anthropic reset garbage", 429, http.Header{"Anthropic-Ratelimit-Tokens-Reset": {"12s"}}, "", 0, NoWait},
		{"reset ignored for outage", 500, http.Header{"X-Ratelimit-Reset-Requests": {"6m0s"}}, "", 0, NoWait},
		{"retry-after beats body", 429, http.Header{"Retry-After": {"2"}},
			`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"20s"}]}}`, 2 * time.Second, WaitRetryAfter},
		{"body beats reset", 429, http.Header{"X-Ratelimit-Reset-Requests": {"6m0s"}},
			`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"20s"}]}}`, 20 * time.Second, WaitBody},
		{"reset beats message", 429, http.Header{"X-Ratelimit-Reset-Requests": {"6m0s"}},
			`{"error":{"message":"Please try again in 1.5s.","code":"rate_limit_exceeded"}}`, 6 * time.Minute, WaitReset},
		{"message try again in", 429, nil, `{"error":{"message":"Please try again in 1.5s.","code":"rate_limit_exceeded"}}`, 1500 * time.Millisecond, WaitMessage},
		{"message retry after seconds", 429, nil, `{"error":{"message":"Please retry after 30 seconds."}}`, 30 * time.Second, WaitMessage},
		{"message try again in 20s", 503, nil, `upstream busy, try again in 20s`, 20 * time.Second, WaitMessage},
		{"message minutes", 429, nil, `{"message":"Try again in 2 minutes"}`, 2 * time.Minute, WaitMessage},
		{"message ms", 429, nil, `{"message":"retry in 500 ms"}`, 500 * time.Millisecond, WaitMessage},
		{"message go duration", 429, nil, `{"message":"try again in 6m0s."}`, 6 * time.Minute, WaitMessage},
		{"message later", 429, nil, `{"message":"try again later"}`, 0, NoWait},
		{"message bad unit", 429, nil, `{"message":"try again in 3 fortnights"}`, 0, NoWait},
		{"no wait on client error", 400, http.Header{"Retry-After": {"3"}}, `{}`, 3 * time.Second, WaitRetryAfter},
		{"no wait on success", 200, http.Header{"Retry-After": {"3"}}, "", 0, NoWait},
	}
	for _, tt := range tests {
		v := c.Classify(tt.status, tt.h, []byte(tt.body))
		if v.Wait != tt.want || v.WaitFrom != tt.from {
			t.Errorf("%s: wait = %v from %v; want %v from %v", tt.name, v.Wait, v.WaitFrom, tt.want, tt.from)
		}
	}
}

func TestLimitsFromHeaders(t *testing.T) {
	h := http.Header{
		"X-Ratelimit-Limit-Requests":     {"60"},
		"X-Ratelimit-Remaining-Requests": {"59"},
		"X-Ratelimit-Limit-Tokens":       {"150000"},
		"X-Ratelimit-Remaining-Tokens":   {"garbage"},
		"X-Ratelimit-Reset-Tokens":       {"1s"},
		"X-Unrelated":                    {"1"},
		"Retry-After":                    {},
	}
	v := testClassifier().Classify(200, h, nil)
	want := RateLimits{
		Requests:     Window{60, 59, 0},
		Tokens:       Window{150000, -1, time.Second},
		InputTokens:  unknownWindow,
		OutputTokens: unknownWindow,
	}
	if v.Limits != want {
		t.Errorf("limits = %+v; want %+v", v.Limits, want)
	}
	if v.Limits.Tokens.Exhausted() || v.Limits.Requests.Exhausted() {
		t.Errorf("Exhausted true for a window with tokens left or unknown")
	}
}

func TestNowCalledOnlyWhenNeeded(t *testing.T) {
	calls := 0
	c := &Classifier{Now: func() time.Time { calls++; return testNow }}
	c.Classify(429, http.Header{"Retry-After": {"3"}, "X-Ratelimit-Reset-Tokens": {"1s"}}, nil)
	if calls != 0 {
		t.Errorf("Now called %d times for numeric headers; want 0", calls)
	}
	c.Classify(429, http.Header{
		"Retry-After":                        {"Sun, 01 Jun 2025 12:02:00 GMT"},
		"Anthropic-Ratelimit-Tokens-Reset":   {"2025-06-01T12:00:42Z"},
		"Anthropic-Ratelimit-Requests-Reset": {"2025-06-01T12:00:42Z"},
	}, nil)
	if calls != 1 {
		t.Errorf("Now called %d times; want 1", calls)
	}
}
