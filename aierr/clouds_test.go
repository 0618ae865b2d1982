package aierr

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAWSErrorType: the exception name is read from x-amzn-ErrorType
// (any case of the header name, with or without the URL after ':' and a
// namespace before '#') and from __type, the header first; an unknown
// name is kept as the code, cleaned, and a name of any other shape is none.
func TestAWSErrorType(t *testing.T) {
	tests := []struct {
		name   string
		status int
		h      http.Header
		body   string
		kind   Kind
		sub    SubKind
		code   string
	}{
		{"header with URL", 429, http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}, `{"message":"m"}`, Throttle, NoSub, "ThrottlingException"},
		{"header without URL", 429, http.Header{"X-Amzn-Errortype": {"ModelNotReadyException"}}, ``, Outage, NotReady, "ModelNotReadyException"},
		{"header set with a lower-case key", 404, http.Header{"x-amzn-errortype": {"ResourceNotFoundException:"}}, ``, ClientError, NotDeployed, "ResourceNotFoundException"},
		{"header with namespace", 400, http.Header{"X-Amzn-Errortype": {"com.amazon.coral.validate#ValidationException:http://internal.amazon.com/coral/com.amazon.coral.validate/"}}, ``, ClientError, NoSub, "ValidationException"},
		{"header padded", 403, http.Header{"X-Amzn-Errortype": {"  AccessDeniedException  "}}, ``, Auth, PermissionDenied, "AccessDeniedException"},
		{"header beats __type", 503, http.Header{"X-Amzn-Errortype": {"ServiceUnavailableException"}}, `{"__type":"ThrottlingException"}`, Outage, NoSub, "ServiceUnavailableException"},
		{"__type beats error.code", 429, nil, `{"__type":"com.amazonaws.bedrock#ModelNotReadyException","error":{"code":"rate_limit_exceeded"}}`, Outage, NotReady, "ModelNotReadyException"},
		{"escaped __type", 424, nil, `{"__type":"ModelError\u0045xception","message":"m"}`, Outage, NoSub, "ModelErrorException"},
		{"last __type wins", 429, nil, `{"__type":"ModelNotReadyException","__type":"ThrottlingException"}`, Throttle, NoSub, "ThrottlingException"},
		{"unknown exception kept", 500, http.Header{"X-Amzn-Errortype": {"BrandNewException:http://internal.amazon.com/"}}, ``, Outage, NoSub, "BrandNewException"},
		{"unknown __type kept without namespace", 400, nil, `{"__type":"com.amazon#SomethingException"}`, ClientError, NoSub, "SomethingException"},
		{"header of spaces and quotes is no code", 500, http.Header{"X-Amzn-Errortype": {`"a b" <c>`}}, ``, Outage, NoSub, ""},
		{"header too long is no code", 429, http.Header{"X-Amzn-Errortype": {strings.Repeat("A", 200) + "ModelNotReadyException"}}, ``, Throttle, NoSub, ""},
		{"header past its bound is not read", 503, http.Header{"X-Amzn-Errortype": {"ThrottlingException:" + strings.Repeat("u", 600)}}, ``, Outage, NoSub, ""},
		{"header within its bound is", 503, http.Header{"X-Amzn-Errortype": {"ThrottlingException:" + strings.Repeat("u", 400)}}, ``, Throttle, NoSub, "ThrottlingException"},
		{"empty header", 429, http.Header{"X-Amzn-Errortype": {""}}, ``, Throttle, NoSub, ""},
		{"case does not matter", 408, http.Header{"X-Amzn-Errortype": {"modelTimeoutException"}}, ``, Outage, Timeout, "ModelTimeoutException"},
		{"Message as the message", 400, http.Header{"X-Amzn-Errortype": {"ValidationException"}}, `{"Message":"Input is too long for requested model."}`, ClientError, ContextLength, "ValidationException"},
	}
	c := testClassifier()
	for _, tt := range tests {
		v := c.Classify(tt.status, tt.h, []byte(tt.body))
		if v.Kind != tt.kind || v.Sub != tt.sub || v.Code != tt.code {
			t.Errorf("%s: got %v/%v code %q; want %v/%v code %q", tt.name, v.Kind, v.Sub, v.Code, tt.kind, tt.sub, tt.code)
		}
	}
	// On a 2xx the header means nothing.
	if v := c.Classify(200, http.Header{"X-Amzn-Errortype": {"ThrottlingException"}}, []byte(`{"id":"x"}`)); v.Kind != Success {
		t.Errorf("2xx with x-amzn-ErrorType: %v", v)
	}
	// message beats Message; either is the message.
	if v := c.Classify(500, nil, []byte(`{"Message":"upper","message":"lower"}`)); v.Message != "lower" {
		t.Errorf("message = %q; want lower", v.Message)
	}
}

func TestAWSName(t *testing.T) {
	for in, want := range map[string]string{
		"ThrottlingException": "ThrottlingException",
		"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/": "ThrottlingException",
		"aws.protocoltests.restjson#FooError:http://internal.amazon.com/coral/":    "FooError",
		"com.amazon.coral.service#UnrecognizedClientException":                     "UnrecognizedClientException",
		"a#b#C":  "C",
		"#":      "",
		":x#y":   "",
		"":       "",
		"X:#Y:Z": "X",
	} {
		if got := awsName(in); got != want {
			t.Errorf("awsName(%q) = %q; want %q", in, got, want)
		}
		if got := awsName([]byte(in)); string(got) != want {
			t.Errorf("awsName([]byte(%q)) = %q; want %q", in, got, want)
		}
	}
}

// TestBedrockStreamExceptions: each of Bedrock's in-stream exceptions, in
// each form a provider passes it on, gets its verdict: server, stream and
// timeout errors are outages, throttling a throttle, validation the
// client's.
func TestBedrockStreamExceptions(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		sub  SubKind
	}{
		{"throttlingException", Throttle, NoSub},
		{"modelStreamErrorException", Outage, NoSub},
		{"internalServerException", Outage, NoSub},
		{"serviceUnavailableException", Outage, NoSub},
		{"validationException", ClientError, NoSub},
		{"modelTimeoutException", Outage, Timeout},
		{"modelNotReadyException", Outage, NotReady},
		{"someFutureException", Outage, NoSub}, // unknown: the stream broke
	}
	c := testClassifier()
	for _, tt := range tests {
		forms := []struct{ form, event, data string }{
			{"anthropic error event", "error", `{"type":"error","error":{"type":"` + tt.name + `","message":"m"}}`},
			{"openai error chunk", "", `{"error":{"message":"m","type":"` + tt.name + `","param":null,"code":"` + tt.name + `"}}`},
			{"named event", tt.name, `{"message":"m"}`},
			{"named event, no payload", tt.name, ``},
			{"named event, text payload", tt.name, `stream broke`},
		}
		for _, f := range forms {
			v := c.ClassifyEvent(f.event, []byte(f.data))
			if v.Kind != tt.kind || v.Sub != tt.sub {
				t.Errorf("%s as %s: got %v/%v (%v); want %v/%v", tt.name, f.form, v.Kind, v.Sub, v, tt.kind, tt.sub)
			}
			checkBounded(t, tt.name, v)
		}
	}
	// Events that merely end in "Exception"-like words, or are named so
	// without the capital, are content as before.
	for _, ev := range []string{"Exception", "exception", "content_block_delta", "message_stop"} {
		if v := c.ClassifyEvent(ev, []byte(`{"type":"content_block_delta","delta":{"text":"hi"}}`)); v.Kind != Success {
			t.Errorf("event %q: %v; want success", ev, v)
		}
	}
	// The payload's own code does not hide the event's name.
	if v := c.ClassifyEvent("throttlingException", []byte(`{"code":"internal_error","message":"m"}`)); v.Kind != Throttle {
		t.Errorf("named event with a code in its payload: %v", v)
	}
}

// TestGoogleDetails: RetryInfo's protobuf durations, quota ids and
// ErrorInfo metadata per day, and the JSON array Google streams errors in.
func TestGoogleDetails(t *testing.T) {
	c := testClassifier()
	for _, d := range []struct {
		delay string
		want  time.Duration
	}{
		{`"37s"`, 37 * time.Second},
		{`"0.5s"`, 500 * time.Millisecond},
		{`"1.250s"`, 1250 * time.Millisecond},
		{`"0.000000001s"`, time.Nanosecond},
		{`"0s"`, 0},
		{`12`, 12 * time.Second}, // a number is seconds
		{`"86400000s"`, MaxWait},
	} {
		body := `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":` + d.delay + `}]}}`
		if v := c.Classify(429, nil, []byte(body)); v.Kind != Throttle || v.Wait != d.want || v.WaitFrom != WaitBody {
			t.Errorf("retryDelay %s: %v from %v; want throttle %v from body", d.delay, v, v.WaitFrom, d.want)
		}
	}
	for _, tt := range []struct {
		name string
		body string
		kind Kind
		sub  SubKind
	}{
		{"quotaId per minute", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]}]}}`, Throttle, NoSub},
		{"quotaId per day", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]}]}}`, Quota, DailyQuota},
		{"ErrorInfo quota_limit per day", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"RequestsPerDayPerProject"}}]}}`, Quota, DailyQuota},
		{"ErrorInfo quota_metric per_day", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_metric":"x.googleapis.com/requests_per_day"}}]}}`, Quota, DailyQuota},
		{"ErrorInfo quota per minute beats a quota message", `{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"RequestsPerMinutePerProject"}}]}}`, Throttle, NoSub},
		{"other metadata is not quota", `{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED","details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"service":"PerDay","quota_location":"PerDay"}}]}}`, Throttle, NoSub},
		{"a quota message alone on RESOURCE_EXHAUSTED stays a throttle", `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}}`, Throttle, NoSub},
		{"billing off on 403", `{"error":{"code":403,"message":"m","status":"PERMISSION_DENIED","details":[{"reason":"BILLING_DISABLED"}]}}`, Quota, Billing},
		{"service disabled", `{"error":{"code":403,"message":"m","status":"PERMISSION_DENIED","details":[{"reason":"SERVICE_DISABLED"}]}}`, Auth, PermissionDenied},
		{"FAILED_PRECONDITION otherwise the client's", `{"error":{"code":400,"message":"Precondition check failed.","status":"FAILED_PRECONDITION"}}`, ClientError, NoSub},
	} {
		v := c.Classify(429, nil, []byte(tt.body))
		if strings.Contains(tt.body, `"code":403`) {
			v = c.Classify(403, nil, []byte(tt.body))
		} else if strings.Contains(tt.body, `"code":400`) {
			v = c.Classify(400, nil, []byte(tt.body))
		}
		if v.Kind != tt.kind || v.Sub != tt.sub {
			t.Errorf("%s: got %v/%v; want %v/%v", tt.name, v.Kind, v.Sub, tt.kind, tt.sub)
		}
	}
	// Streamed as a JSON array, in an SSE event or a 200 body.
	arr := `[{"error":{"code":429,"message":"Resource exhausted.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.5s"}]}}]`
	if v := c.ClassifyEvent("", []byte(arr)); v.Kind != Throttle || v.Status != 429 || v.Wait != 500*time.Millisecond {
		t.Errorf("array event: %v status %d", v, v.Status)
	}
	if v := c.ClassifyFinish([]byte(arr)); v.Kind != Throttle || v.Status != 429 {
		t.Errorf("array body: %v status %d", v, v.Status)
	}
	if v := c.ClassifyEvent("", []byte(`[{"candidates":[{"finishReason":"STOP"}]}]`)); v.Kind != Success {
		t.Errorf("array of answers: %v", v)
	}
}

// TestTargetLacksModel: a model missing on a target (Bedrock, Azure,
// Vertex AI) is never an outage, never the key's fault, and always lets
// the ladder go on; a model not ready yet is an outage of that target.
func TestTargetLacksModel(t *testing.T) {
	for _, name := range []string{
		"bedrock_404_resource_not_found_exception.http",
		"bedrock_403_access_denied_exception_model_access.http",
		"bedrock_400_validation_exception_on_demand_not_supported.http",
		"azure_404_deployment_not_found.http",
		"vertex_404_publisher_model_not_found.http",
	} {
		status, h, body := readFixture(t, name)
		v := testClassifier().Classify(status, h, body)
		if v.Sub != NotDeployed || v.Breaker() != BreakerIgnore || !v.OtherTarget || v.SameTarget || v.Kind == Auth || v.Kind == Quota {
			t.Errorf("%s: %v breaker %v same %v other %v", name, v, v.Breaker(), v.SameTarget, v.OtherTarget)
		}
	}
	// OpenAI's unknown model stays the client's: the walk stops there.
	status, h, body := readFixture(t, "openai_404_model_not_found.http")
	if v := Classify(status, h, body); v.Sub != NotFound || v.OtherTarget {
		t.Errorf("openai model_not_found: %v other %v", v, v.OtherTarget)
	}
	status, h, body = readFixture(t, "bedrock_429_model_not_ready_exception.http")
	if v := Classify(status, h, body); v.Breaker() != BreakerFailure || !v.OtherTarget {
		t.Errorf("model not ready: %v breaker %v", v, v.Breaker())
	}
	// A Bedrock AccessDeniedException about IAM stays Auth.
	status, h, body = readFixture(t, "bedrock_403_access_denied_exception.http")
	if v := Classify(status, h, body); v.Kind != Auth {
		t.Errorf("IAM access denied: %v", v)
	}
}

// TestSafetyIsNeverAnOutage: every safety stop (Gemini's finish and block
// reasons, as sent or as the provider translates them, Azure's and
// OpenAI's content filters) is a ClientError/ContentFilter the breaker
// ignores.
func TestSafetyIsNeverAnOutage(t *testing.T) {
	c := testClassifier()
	check := func(name string, v Verdict) {
		t.Helper()
		if v.Kind != ClientError || v.Sub != ContentFilter || v.Breaker() != BreakerIgnore || !v.OtherTarget {
			t.Errorf("%s: %v breaker %v", name, v, v.Breaker())
		}
	}
	for _, name := range []string{"gemini_200_safety.http", "gemini_200_prompt_blocked.http", "openai_200_content_filter.http",
		"azure_400_content_filter.http", "openai_400_content_filter.http"} {
		status, h, body := readFixture(t, name)
		check(name, c.Classify(status, h, body))
	}
	for _, name := range []string{"gemini_stream_safety.sse", "gemini_translated_stream_content_filter.sse", "openai_stream_content_filter.sse"} {
		var last Verdict
		for _, ev := range readSSE(t, name) {
			if v := c.ClassifyEvent(ev.name, ev.data); v.Kind != Success {
				last = v
			}
		}
		check(name, last)
	}
	// A translated Gemini refusal as a finished chat completion.
	translated := `{"id":"chatcmpl-gem","object":"chat.completion","model":"gemini-2.5-flash","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":12,"completion_tokens":0,"total_tokens":12}}`
	check("translated finish", c.ClassifyFinish([]byte(translated)))
	// Bedrock Converse's own stop reasons; the last one given counts.
	for _, r := range converseFilterReasons {
		check(r, c.ClassifyFinish([]byte(`{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"`+r+`"}`)))
		check(r+" event", c.ClassifyEvent("", []byte(`{"stopReason":"`+r+`"}`)))
	}
	for _, body := range []string{`{"stopReason":"end_turn"}`, `{"stopReason":"guardrail_intervened","stopReason":"end_turn"}`, `{"stopReason":"max_tokens"}`} {
		if v := c.ClassifyFinish([]byte(body)); v.Kind != Success {
			t.Errorf("%s: %v", body, v)
		}
	}
	for _, r := range geminiBlockReasons {
		check(r, c.ClassifyFinish([]byte(`{"candidates":[{"finishReason":"`+r+`"}]}`)))
	}
}

// TestCloudFixturesClassifyAlike: a fixture's verdict does not depend on
// the case of its header names, as net/http canonicalizes them or a
// caller sets them.
func TestCloudFixturesClassifyAlike(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.http"))
	c := testClassifier()
	for _, f := range files {
		status, h, body := readFixture(t, filepath.Base(f))
		lower := http.Header{}
		for k, vs := range h {
			lower[strings.ToLower(k)] = vs
		}
		a, b := c.Classify(status, h, body), c.Classify(status, lower, body)
		if a != b {
			t.Errorf("%s: %v with canonical headers, %v with lower-case ones", f, a, b)
		}
	}
}

// TestCloudAllocs: a Bedrock error costs what an OpenAI one does: the
// message, nothing for the header or __type.
func TestCloudAllocs(t *testing.T) {
	for _, name := range []string{
		"bedrock_429_throttling_exception.http",
		"bedrock_400_incomplete_signature.http",
		"azure_404_deployment_not_found.http",
		"vertex_429_quota_per_day_error_info.http",
	} {
		status, h, body := readFixture(t, name)
		if n := testing.AllocsPerRun(100, func() { Classify(status, h, body) }); n > 1 {
			t.Errorf("%s: %v allocations; want 1", name, n)
		}
	}
	ev := []byte(`{"message":"Too many tokens, please wait before trying again."}`)
	if n := testing.AllocsPerRun(100, func() { ClassifyEvent("throttlingException", ev) }); n > 1 {
		t.Errorf("named exception event: %v allocations; want 1", n)
	}
}
