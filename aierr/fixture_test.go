package aierr

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testNow is the fixed "now" of every test; fixtures' reset times are
// relative to it.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func testClassifier() *Classifier {
	return &Classifier{Now: func() time.Time { return testNow }}
}

// readFixture reads testdata/name, a raw HTTP response: status line,
// headers, blank line, body.
func readFixture(t testing.TB, name string) (int, http.Header, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return resp.StatusCode, resp.Header, body
}

type sseEvent struct {
	name string
	data []byte
}

// readSSE reads testdata/name, a server-sent event stream.
func readSSE(t testing.TB, name string) []sseEvent {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var events []sseEvent
	var cur sseEvent
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case line == "":
			if cur.name != "" || cur.data != nil {
				events = append(events, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			cur.data = append(cur.data, strings.TrimSpace(line[len("data:"):])...)
		}
	}
	return events
}

// want is the part of a Verdict a fixture test checks.
type want struct {
	kind     Kind
	sub      SubKind
	status   int
	code     string
	wait     time.Duration
	waitFrom WaitSource
	msg      string // a substring of Message
}

func checkVerdict(t *testing.T, name string, got Verdict, w want) {
	t.Helper()
	if got.Kind != w.kind || got.Sub != w.sub {
		t.Errorf("%s: kind = %v/%v; want %v/%v (%v, %q)", name, got.Kind, got.Sub, w.kind, w.sub, got, got.Message)
	}
	if got.Status != w.status {
		t.Errorf("%s: status = %d; want %d", name, got.Status, w.status)
	}
	if got.Code != w.code {
		t.Errorf("%s: code = %q; want %q", name, got.Code, w.code)
	}
	if got.Wait != w.wait || got.WaitFrom != w.waitFrom {
		t.Errorf("%s: wait = %v from %v; want %v from %v", name, got.Wait, got.WaitFrom, w.wait, w.waitFrom)
	}
	if !strings.Contains(got.Message, w.msg) {
		t.Errorf("%s: message = %q; want it to contain %q", name, got.Message, w.msg)
	}
	// The policy fields always follow the kind.
	p := Verdict{Kind: got.Kind, Sub: got.Sub}
	p.policy()
	if got.SameTarget != p.SameTarget || got.OtherTarget != p.OtherTarget || got.NewIdempotencyKey != p.NewIdempotencyKey {
		t.Errorf("%s: policy = %v/%v/%v; want %v/%v/%v", name, got.SameTarget, got.OtherTarget, got.NewIdempotencyKey,
			p.SameTarget, p.OtherTarget, p.NewIdempotencyKey)
	}
}

func TestClassifyFixtures(t *testing.T) {
	tests := []struct {
		file string
		want want
	}{
		// OpenAI.
		{"openai_429_rate_limit.http", want{Throttle, NoSub, 429, "rate_limit_exceeded", 3 * time.Second, WaitRetryAfter, "Rate limit reached"}},
		{"openai_429_reset_only.http", want{Throttle, NoSub, 429, "rate_limit_exceeded", 90*time.Second + 500*time.Millisecond, WaitReset, "RPM"}},
		{"openai_429_insufficient_quota.http", want{Quota, Billing, 429, "insufficient_quota", 0, NoWait, "exceeded your current quota"}},
		{"openai_429_requests_per_day.http", want{Quota, DailyQuota, 429, "rate_limit_exceeded", 7*time.Minute + 12*time.Second, WaitMessage, "RPD"}},
		{"openai_400_billing_hard_limit.http", want{Quota, Billing, 400, "billing_hard_limit_reached", 0, NoWait, "hard limit"}},
		{"openai_400_context_length.http", want{ClientError, ContextLength, 400, "context_length_exceeded", 0, NoWait, "maximum context length is 128000"}},
		{"openai_400_content_filter.http", want{ClientError, ContentFilter, 400, "content_filter", 0, NoWait, "safety system"}},
		{"openai_401_invalid_api_key.http", want{Auth, Unauthenticated, 401, "invalid_api_key", 0, NoWait, "Incorrect API key"}},
		{"openai_404_model_not_found.http", want{ClientError, NotFound, 404, "model_not_found", 0, NoWait, "gpt-5-ultra"}},
		{"openai_500_server_error.http", want{Outage, NoSub, 500, "server_error", 0, NoWait, "Sorry about that!"}},
		{"openai_503_json.http", want{Outage, NoSub, 503, "server_error", 1500 * time.Millisecond, WaitRetryAfter, "overloaded"}},
		{"openai_503_html.http", want{Outage, NoSub, 503, "", 0, NoWait, "503 Service Temporarily Unavailable"}},
		// Azure OpenAI.
		{"azure_429_retry_after_ms.http", want{Throttle, NoSub, 429, "", 5250 * time.Millisecond, WaitHeaderMS, "exceeded token rate limit"}},
		{"azure_400_content_filter.http", want{ClientError, ContentFilter, 400, "content_filter", 0, NoWait, "content management policy"}},
		// Anthropic.
		{"anthropic_529_overloaded.http", want{Outage, Overloaded, 529, "overloaded_error", 0, NoWait, "Overloaded"}},
		{"anthropic_429_rate_limit.http", want{Throttle, NoSub, 429, "rate_limit_error", 12 * time.Second, WaitRetryAfter, "input tokens per minute"}},
		{"anthropic_401_authentication.http", want{Auth, Unauthenticated, 401, "authentication_error", 0, NoWait, "invalid x-api-key"}},
		{"anthropic_403_permission.http", want{Auth, PermissionDenied, 403, "permission_error", 0, NoWait, "permission"}},
		{"anthropic_400_prompt_too_long.http", want{ClientError, ContextLength, 400, "invalid_request_error", 0, NoWait, "prompt is too long"}},
		{"anthropic_400_credit_balance.http", want{Quota, Billing, 400, "invalid_request_error", 0, NoWait, "credit balance"}},
		{"anthropic_413_request_too_large.http", want{ClientError, RequestTooLarge, 413, "request_too_large", 0, NoWait, "maximum allowed"}},
		{"anthropic_404_not_found.http", want{ClientError, NotFound, 404, "not_found_error", 0, NoWait, "claude-opus-9"}},
		{"anthropic_500_api_error.http", want{Outage, NoSub, 500, "api_error", 0, NoWait, "Internal server error"}},
		// Gemini.
		{"gemini_429_per_minute.http", want{Throttle, NoSub, 429, "RESOURCE_EXHAUSTED", 20 * time.Second, WaitBody, "exceeded your current quota"}},
		{"gemini_429_per_day.http", want{Quota, DailyQuota, 429, "RESOURCE_EXHAUSTED", 35 * time.Second, WaitBody, "quota"}},
		{"gemini_503_unavailable.http", want{Outage, NoSub, 503, "UNAVAILABLE", 0, NoWait, "overloaded"}},
		{"gemini_504_deadline_exceeded.http", want{Outage, Timeout, 504, "DEADLINE_EXCEEDED", 0, NoWait, "Deadline expired"}},
		{"gemini_400_invalid_argument.http", want{ClientError, NoSub, 400, "INVALID_ARGUMENT", 0, NoWait, "contents is not specified"}},
		{"gemini_400_context_length.http", want{ClientError, ContextLength, 400, "INVALID_ARGUMENT", 0, NoWait, "input token count"}},
		{"gemini_400_api_key_invalid.http", want{Auth, Unauthenticated, 400, "API_KEY_INVALID", 0, NoWait, "API key not valid"}},
		{"gemini_401_unauthenticated.http", want{Auth, Unauthenticated, 401, "UNAUTHENTICATED", 0, NoWait, "invalid authentication"}},
		{"gemini_403_permission_denied.http", want{Auth, PermissionDenied, 403, "PERMISSION_DENIED", 0, NoWait, "unregistered callers"}},
		{"gemini_200_safety.http", want{ClientError, ContentFilter, 200, "SAFETY", 0, NoWait, ""}},
		{"gemini_200_prompt_blocked.http", want{ClientError, ContentFilter, 200, "PROMPT_BLOCKED", 0, NoWait, ""}},
		// OpenRouter, DeepSeek, vLLM.
		{"openrouter_402.http", want{Quota, Billing, 402, "", 0, NoWait, "more credits"}},
		{"openrouter_429.http", want{Throttle, NoSub, 429, "", 0, NoWait, "Provider returned error"}},
		{"deepseek_402.http", want{Quota, Billing, 402, "invalid_request_error", 0, NoWait, "Insufficient Balance"}},
		{"vllm_400_context_length.http", want{ClientError, ContextLength, 400, "BadRequestError", 0, NoWait, "maximum context length is 8192"}},
		// Job APIs.
		{"job_503_queue_full.http", want{Capacity, NoSub, 503, "queue_full", 30 * time.Second, WaitRetryAfter, "queue is full"}},
		{"job_429_provider_capacity_exceeded.http", want{Capacity, NoSub, 429, "provider_capacity_exceeded", 45 * time.Second, WaitMessage, "no capacity"}},
		{"job_200_runtime_unavailable.http", want{Outage, NoSub, 200, "runtime_unavailable", 0, NoWait, "runtime is unavailable"}},
		// Finished 200 answers.
		{"openai_200_content_filter.http", want{ClientError, ContentFilter, 200, "content_filter", 0, NoWait, ""}},
		{"openai_200_ok.http", want{Success, NoSub, 200, "", 0, NoWait, ""}},
	}
	c := testClassifier()
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		status, h, body := readFixture(t, tt.file)
		got := c.Classify(status, h, body)
		checkVerdict(t, tt.file, got, tt.want)
	}
	// Every .http fixture is in the table.
	files, _ := filepath.Glob(filepath.Join("testdata", "*.http"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no test", f)
		}
	}
}

func TestClassifyFixtureLimits(t *testing.T) {
	c := testClassifier()
	tests := []struct {
		file string
		want RateLimits
	}{
		{"openai_429_rate_limit.http", RateLimits{
			Requests:     Window{10000, 9998, 12 * time.Millisecond},
			Tokens:       Window{30000, 0, 2328 * time.Millisecond},
			InputTokens:  unknownWindow,
			OutputTokens: unknownWindow,
		}},
		{"anthropic_429_rate_limit.http", RateLimits{
			Requests:     Window{50, 49, time.Second},
			Tokens:       Window{48000, 8000, 12 * time.Second},
			InputTokens:  Window{40000, 0, 12 * time.Second},
			OutputTokens: Window{8000, 8000, 0},
		}},
		{"openai_200_ok.http", RateLimits{
			Requests:     Window{5000, 4999, 12 * time.Millisecond},
			Tokens:       unknownWindow,
			InputTokens:  unknownWindow,
			OutputTokens: unknownWindow,
		}},
		{"gemini_429_per_minute.http", unknownLimits},
	}
	for _, tt := range tests {
		status, h, body := readFixture(t, tt.file)
		if got := c.Classify(status, h, body).Limits; got != tt.want {
			t.Errorf("%s: limits = %+v; want %+v", tt.file, got, tt.want)
		}
	}
}

func TestClassifyEventFixtures(t *testing.T) {
	tests := []struct {
		file string
		want want // the first verdict that is not Success
	}{
		{"anthropic_stream_overloaded.sse", want{Outage, Overloaded, 0, "overloaded_error", 0, NoWait, "Overloaded"}},
		{"openrouter_stream_error.sse", want{Outage, NoSub, 502, "", 0, NoWait, "Provider disconnected"}},
		{"openai_stream_content_filter.sse", want{ClientError, ContentFilter, 0, "content_filter", 0, NoWait, ""}},
		{"gemini_stream_safety.sse", want{ClientError, ContentFilter, 0, "SAFETY", 0, NoWait, ""}},
		{"openai_stream_ok.sse", want{Success, NoSub, 0, "", 0, NoWait, ""}},
	}
	c := testClassifier()
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		events := readSSE(t, tt.file)
		if len(events) == 0 {
			t.Fatalf("%s: no events", tt.file)
		}
		got := successVerdict(0)
		for i, ev := range events {
			v := c.ClassifyEvent(ev.name, ev.data)
			if v.Kind != Success {
				got = v
				if i != len(events)-1 && !(i == len(events)-2 && string(events[i+1].data) == "[DONE]") {
					t.Errorf("%s: event %d classified %v before the last event", tt.file, i, v)
				}
				break
			}
		}
		checkVerdict(t, tt.file, got, tt.want)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no test", f)
		}
	}
}
