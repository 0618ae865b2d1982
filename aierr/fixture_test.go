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
		// Google: Gemini API and Vertex AI (google.rpc.Status, with
		// RetryInfo, QuotaFailure and ErrorInfo details).
		// The documented 429 with all three details: a per-minute quota,
		// waited out as RetryInfo says.
		{"gemini_429_retry_info_quota_failure_error_info.http", want{Throttle, NoSub, 429, "rate_limit_exceeded", 37 * time.Second, WaitBody, "exceeded your current quota"}},
		// retryDelay is a protobuf Duration: fractions of a second.
		{"gemini_429_retry_delay_fraction.http", want{Throttle, NoSub, 429, "RESOURCE_EXHAUSTED", 1250 * time.Millisecond, WaitBody, "Resource has been exhausted"}},
		// Vertex AI's dynamic shared quota: the shared pool is busy.
		{"vertex_429_resource_exhausted.http", want{Throttle, NoSub, 429, "RESOURCE_EXHAUSTED", 0, NoWait, "Resource exhausted"}},
		// Vertex AI's standard quota error: per minute is a throttle …
		{"vertex_429_quota_per_minute_message.http", want{Throttle, NoSub, 429, "RESOURCE_EXHAUSTED", 0, NoWait, "per_minute"}},
		// … per day (ErrorInfo metadata quota_limit) is the day's quota.
		{"vertex_429_quota_per_day_error_info.http", want{Quota, DailyQuota, 429, "rate_limit_exceeded", 0, NoWait, "per day"}},
		{"vertex_500_internal.http", want{Outage, NoSub, 500, "INTERNAL", 0, NoWait, "Internal error"}},
		{"vertex_503_unavailable.http", want{Outage, NoSub, 503, "UNAVAILABLE", 0, NoWait, "unavailable"}},
		{"vertex_504_deadline_exceeded.http", want{Outage, Timeout, 504, "DEADLINE_EXCEEDED", 0, NoWait, "timed out"}},
		{"vertex_401_unauthenticated_error_info.http", want{Auth, Unauthenticated, 401, "ACCESS_TOKEN_EXPIRED", 0, NoWait, "invalid authentication"}},
		{"vertex_403_permission_denied_iam.http", want{Auth, PermissionDenied, 403, "IAM_PERMISSION_DENIED", 0, NoWait, "aiplatform.endpoints.predict"}},
		// ErrorInfo BILLING_DISABLED on a 403: the project's billing, not a key.
		{"vertex_403_billing_disabled.http", want{Quota, Billing, 403, "BILLING_DISABLED", 0, NoWait, "billing to be enabled"}},
		{"vertex_400_input_token_count.http", want{ClientError, ContextLength, 400, "INVALID_ARGUMENT", 0, NoWait, "input token count"}},
		// FAILED_PRECONDITION: a region Google does not serve is no key's
		// fault and no outage; billing off is the project's quota.
		{"gemini_400_failed_precondition_location.http", want{Auth, PermissionDenied, 400, "FAILED_PRECONDITION", 0, NoWait, "location is not supported"}},
		{"gemini_400_failed_precondition_billing.http", want{Quota, Billing, 400, "FAILED_PRECONDITION", 0, NoWait, "enable billing"}},
		// NOT_FOUND is the client's, except a publisher model the project
		// or region does not have: that target lacks the model.
		{"gemini_404_not_found.http", want{ClientError, NotFound, 404, "NOT_FOUND", 0, NoWait, "is not found"}},
		{"vertex_404_publisher_model_not_found.http", want{ClientError, NotDeployed, 404, "NOT_FOUND", 0, NoWait, "Publisher Model"}},
		// streamGenerateContent without SSE: a JSON array whose last element
		// is an error.
		{"gemini_200_stream_array_error.http", want{Outage, NoSub, 503, "UNAVAILABLE", 0, NoWait, "overloaded"}},
		// AWS Bedrock runtime (InvokeModel, Converse): the exception name in
		// x-amzn-ErrorType or __type, the message in message or Message.
		{"bedrock_429_throttling_exception.http", want{Throttle, NoSub, 429, "ThrottlingException", 0, NoWait, "Too many requests"}},
		{"bedrock_429_throttling_exception_tokens_per_day.http", want{Quota, DailyQuota, 429, "ThrottlingException", 0, NoWait, "per day"}},
		{"bedrock_400_service_quota_exceeded_exception.http", want{Throttle, NoSub, 400, "ServiceQuotaExceededException", 0, NoWait, "resubmit your request later"}},
		{"bedrock_503_service_unavailable_exception.http", want{Outage, NoSub, 503, "ServiceUnavailableException", 0, NoWait, "unable to process"}},
		{"bedrock_500_internal_server_exception.http", want{Outage, NoSub, 500, "InternalServerException", 0, NoWait, "internal error"}},
		{"bedrock_429_model_not_ready_exception.http", want{Outage, NotReady, 429, "ModelNotReadyException", 0, NoWait, "not ready"}},
		{"bedrock_408_model_timeout_exception.http", want{Outage, Timeout, 408, "ModelTimeoutException", 0, NoWait, "too long"}},
		{"bedrock_424_model_error_exception.http", want{Outage, NoSub, 424, "ModelErrorException", 0, NoWait, "from model"}},
		{"bedrock_400_validation_exception.http", want{ClientError, NoSub, 400, "ValidationException", 0, NoWait, "Malformed input"}},
		{"bedrock_400_validation_exception_json_type.http", want{ClientError, NoSub, 400, "ValidationException", 0, NoWait, "modelId"}},
		{"bedrock_400_validation_exception_input_too_long.http", want{ClientError, ContextLength, 400, "ValidationException", 0, NoWait, "Input is too long"}},
		{"bedrock_400_validation_exception_too_many_input_tokens.http", want{ClientError, ContextLength, 400, "ValidationException", 0, NoWait, "Too many input tokens"}},
		{"bedrock_400_validation_exception_prompt_too_long.http", want{ClientError, ContextLength, 400, "ValidationException", 0, NoWait, "prompt is too long"}},
		// A model that needs an inference profile: this target cannot serve it.
		{"bedrock_400_validation_exception_on_demand_not_supported.http", want{ClientError, NotDeployed, 400, "ValidationException", 0, NoWait, "on-demand throughput"}},
		{"bedrock_403_access_denied_exception.http", want{Auth, PermissionDenied, 403, "AccessDeniedException", 0, NoWait, "bedrock:InvokeModel"}},
		// Model access not granted in that account and region: the
		// credential is fine, the target lacks the model.
		{"bedrock_403_access_denied_exception_model_access.http", want{ClientError, NotDeployed, 403, "AccessDeniedException", 0, NoWait, "specified model ID"}},
		{"bedrock_403_unrecognized_client_exception.http", want{Auth, Unauthenticated, 403, "UnrecognizedClientException", 0, NoWait, "security token"}},
		{"bedrock_403_invalid_signature_exception.http", want{Auth, Unauthenticated, 403, "InvalidSignatureException", 0, NoWait, "signature"}},
		{"bedrock_403_expired_token_exception.http", want{Auth, Unauthenticated, 403, "ExpiredTokenException", 0, NoWait, "expired"}},
		{"bedrock_400_incomplete_signature.http", want{Auth, Unauthenticated, 400, "IncompleteSignatureException", 0, NoWait, "'Signature' parameter"}},
		{"bedrock_404_resource_not_found_exception.http", want{ClientError, NotDeployed, 404, "ResourceNotFoundException", 0, NoWait, "end of its life"}},
		// Azure OpenAI: 429s (retry-after-ms beats retry-after, see
		// azure_429_retry_after_ms.http), outages, a deployment missing.
		{"azure_429_retry_after_only.http", want{Throttle, NoSub, 429, "", 10 * time.Second, WaitRetryAfter, "call rate limit"}},
		{"azure_429_apim_rate_limit.http", want{Throttle, NoSub, 429, "", 2 * time.Second, WaitMessage, "Rate limit is exceeded"}},
		{"azure_408_timeout.http", want{Outage, Timeout, 408, "timeout", 0, NoWait, "timeout"}},
		{"azure_500_internal_server_error.http", want{Outage, NoSub, 500, "InternalServerError", 0, NoWait, "Sorry about that"}},
		{"azure_503_service_unavailable.http", want{Outage, NoSub, 503, "ServiceUnavailable", 0, NoWait, "temporarily unable"}},
		{"azure_404_deployment_not_found.http", want{ClientError, NotDeployed, 404, "DeploymentNotFound", 0, NoWait, "deployment for this resource"}},
		{"azure_401_invalid_subscription_key.http", want{Auth, Unauthenticated, 401, "", 0, NoWait, "invalid subscription key"}},
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
		// Bedrock's event-stream exceptions as the provider passes them on:
		// an Anthropic error event, an OpenAI error chunk, an event named
		// after the exception.
		{"bedrock_stream_throttling_exception.sse", want{Throttle, NoSub, 0, "ThrottlingException", 0, NoWait, "Too many tokens"}},
		{"bedrock_stream_model_stream_error_exception.sse", want{Outage, NoSub, 0, "ModelStreamErrorException", 0, NoWait, "interrupted"}},
		{"bedrock_stream_internal_server_exception.sse", want{Outage, NoSub, 0, "InternalServerException", 0, NoWait, "internal error"}},
		{"bedrock_stream_validation_exception.sse", want{ClientError, ContextLength, 0, "ValidationException", 0, NoWait, "Input is too long"}},
		// Gemini's stream error as a JSON array.
		{"gemini_stream_error_array.sse", want{Outage, NoSub, 503, "UNAVAILABLE", 0, NoWait, "overloaded"}},
		// A Gemini safety stop as the provider translates it.
		{"gemini_translated_stream_content_filter.sse", want{ClientError, ContentFilter, 0, "content_filter", 0, NoWait, ""}},
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
