package sim

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
)

func TestRequestLimit(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake, Limits: Limits{RPM: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		advance   time.Duration
		status    int
		remaining string
		reset     string
		retry     string
	}{
		{0, 200, "1", "30s", ""},
		{0, 200, "0", "1m0s", ""},
		{0, 429, "0", "1m0s", "30"},
		{15 * time.Second, 429, "0", "45s", "15"},
		{15 * time.Second, 200, "0", "1m0s", ""},
		{time.Minute, 200, "1", "30s", ""},
	} {
		fake.Advance(step.advance)
		rec := serve(s, "POST", "/v1/chat/completions", chatBody(false))
		h := rec.Header()
		if rec.Code != step.status || h.Get("X-Ratelimit-Limit-Requests") != "2" ||
			h.Get("X-Ratelimit-Remaining-Requests") != step.remaining || h.Get("X-Ratelimit-Reset-Requests") != step.reset ||
			h.Get("Retry-After") != step.retry {
			t.Errorf("step %d: %d limit %q remaining %q reset %q retry-after %q; want %d, 2, %s, %s, %q",
				i, rec.Code, h.Get("X-Ratelimit-Limit-Requests"), h.Get("X-Ratelimit-Remaining-Requests"),
				h.Get("X-Ratelimit-Reset-Requests"), h.Get("Retry-After"), step.status, step.remaining, step.reset, step.retry)
		}
		if h.Get("X-Ratelimit-Limit-Tokens") != "" {
			t.Errorf("step %d: token headers without a TPM", i)
		}
		if rec.Code == 429 {
			v := aierr.Classify(rec.Code, h, rec.Body.Bytes())
			if v.Kind != aierr.Throttle || v.Wait == 0 {
				t.Errorf("step %d: classified %v, want a throttle with a wait", i, v)
			}
		}
	}
	if st := s.Stats(); st.Outcomes[OutcomeRateLimited] != 2 || st.Outcomes[OutcomeOK] != 4 {
		t.Errorf("stats = %+v", st)
	}
}

func TestTokenLimit(t *testing.T) {
	fake := newFake()
	// Each call: prompt 3+3+⌈22/4⌉ = 12, reply 20: 32 tokens.
	s, err := New(Config{Clock: fake, Limits: Limits{TPM: 60}})
	if err != nil {
		t.Fatal(err)
	}
	rec := serve(s, "POST", "/v1/chat/completions", chatBody(false))
	if rec.Code != 200 || rec.Header().Get("X-Ratelimit-Remaining-Tokens") != "28" || rec.Header().Get("X-Ratelimit-Limit-Tokens") != "60" {
		t.Fatalf("first call: %d, remaining %q", rec.Code, rec.Header().Get("X-Ratelimit-Remaining-Tokens"))
	}
	rec = serve(s, "POST", "/v1/chat/completions", chatBody(false))
	var body struct{ Error struct{ Type, Code string } }
	json.Unmarshal(rec.Body.Bytes(), &body)
	// 4 tokens short at 1 token per second: 4s.
	if rec.Code != 429 || body.Error.Type != "tokens" || body.Error.Code != "rate_limit_exceeded" || rec.Header().Get("Retry-After") != "4" {
		t.Errorf("second call: %d %s, Retry-After %q; want 429 tokens, 4", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	fake.Advance(4 * time.Second)
	if rec := serve(s, "POST", "/v1/chat/completions", chatBody(false)); rec.Code != 200 {
		t.Errorf("after the wait: %d, want 200", rec.Code)
	}
}

func TestHeadersOnlyLimits(t *testing.T) {
	s, err := New(Config{Clock: newFake(), Limits: Limits{RPM: 1, HeadersOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec := serve(s, "POST", "/v1/chat/completions", chatBody(false))
		if rec.Code != http.StatusOK {
			t.Errorf("call %d: %d, want 200", i, rec.Code)
		}
		if i > 0 && rec.Header().Get("X-Ratelimit-Remaining-Requests") != "0" {
			t.Errorf("call %d: remaining %q, want 0", i, rec.Header().Get("X-Ratelimit-Remaining-Requests"))
		}
	}
}

func TestFormatReset(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {time.Microsecond, "1ms"}, {20 * time.Millisecond, "20ms"}, {1500 * time.Millisecond, "1.5s"}, {6 * time.Minute, "6m0s"}} {
		if got := formatReset(tc.d); got != tc.want {
			t.Errorf("formatReset(%v) = %q, want %q", tc.d, got, tc.want)
		}
		if d, ok := aierr.ParseResetDuration(tc.want); !ok || (tc.d >= time.Millisecond && d != tc.d) {
			t.Errorf("aierr.ParseResetDuration(%q) = %v, %v", tc.want, d, ok)
		}
	}
}
