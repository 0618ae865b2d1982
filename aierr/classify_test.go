package aierr

import (
	"net/http"
	"strings"
	"testing"
)

func TestClassifyStatusOnly(t *testing.T) {
	tests := []struct {
		status int
		kind   Kind
		sub    SubKind
		breakr BreakerOutcome
	}{
		{200, Success, NoSub, BreakerSuccess},
		{204, Success, NoSub, BreakerSuccess},
		{301, Outage, NoSub, BreakerFailure},
		{400, ClientError, NoSub, BreakerIgnore},
		{401, Auth, Unauthenticated, BreakerIgnore},
		{402, Quota, Billing, BreakerIgnore},
		{403, Auth, PermissionDenied, BreakerIgnore},
		{404, ClientError, NotFound, BreakerIgnore},
		{408, Outage, Timeout, BreakerFailure},
		{413, ClientError, RequestTooLarge, BreakerIgnore},
		{422, ClientError, NoSub, BreakerIgnore},
		{429, Throttle, NoSub, BreakerIgnore},
		{499, Canceled, NoSub, BreakerIgnore},
		{500, Outage, NoSub, BreakerFailure},
		{502, Outage, NoSub, BreakerFailure},
		{503, Outage, NoSub, BreakerFailure},
		{504, Outage, Timeout, BreakerFailure},
		{529, Outage, Overloaded, BreakerFailure},
		{0, Outage, NoSub, BreakerFailure},
		{-1, Outage, NoSub, BreakerFailure},
		{1000, Outage, NoSub, BreakerFailure},
	}
	for _, tt := range tests {
		v := Classify(tt.status, nil, nil)
		if v.Kind != tt.kind || v.Sub != tt.sub || v.Breaker() != tt.breakr {
			t.Errorf("Classify(%d) = %v/%v breaker %v; want %v/%v breaker %v",
				tt.status, v.Kind, v.Sub, v.Breaker(), tt.kind, tt.sub, tt.breakr)
		}
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		kind                Kind
		sub                 SubKind
		same, other, newKey bool
		breaker             BreakerOutcome
	}{
		{Success, NoSub, false, false, false, BreakerSuccess},
		{Outage, NoSub, true, true, false, BreakerFailure},
		{Throttle, NoSub, true, true, false, BreakerIgnore},
		{Capacity, NoSub, true, true, true, BreakerIgnore},
		{Auth, NoSub, false, true, false, BreakerIgnore},
		{Quota, DailyQuota, false, true, false, BreakerIgnore},
		{ClientError, NoSub, false, false, false, BreakerIgnore},
		{ClientError, NotFound, false, false, false, BreakerIgnore},
		{ClientError, ContextLength, false, true, false, BreakerIgnore},
		{ClientError, ContentFilter, false, true, false, BreakerIgnore},
		{ClientError, NotDeployed, false, true, false, BreakerIgnore},
		{Outage, NotReady, true, true, false, BreakerFailure},
		{Canceled, NoSub, false, false, false, BreakerIgnore},
	}
	for _, tt := range tests {
		v := Verdict{Kind: tt.kind, Sub: tt.sub}
		v.policy()
		if v.SameTarget != tt.same || v.OtherTarget != tt.other || v.NewIdempotencyKey != tt.newKey || v.Breaker() != tt.breaker {
			t.Errorf("%v/%v: same %v other %v newKey %v breaker %v; want %v %v %v %v", tt.kind, tt.sub,
				v.SameTarget, v.OtherTarget, v.NewIdempotencyKey, v.Breaker(), tt.same, tt.other, tt.newKey, tt.breaker)
		}
	}
}

// TestClassifyBodies covers shapes and clues not in the fixture files.
func TestClassifyBodies(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   Kind
		sub    SubKind
		code   string
	}{
		{"specific code beats status", 500, `{"error":{"code":"context_length_exceeded"}}`, ClientError, ContextLength, "context_length_exceeded"},
		{"status beats generic code", 503, `{"error":{"type":"invalid_request_error","message":"x"}}`, Outage, NoSub, "invalid_request_error"},
		{"unknown code kept", 418, `{"error":{"code":"teapot_error","message":"short and stout"}}`, ClientError, NoSub, "teapot_error"},
		{"code with spaces not kept", 400, `{"error":{"code":"not a code","message":"m"}}`, ClientError, NoSub, ""},
		{"code case-insensitive", 429, `{"error":{"code":"Rate_Limit_Exceeded"}}`, Throttle, NoSub, "rate_limit_exceeded"},
		{"gemini array body", 503, `[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`, Outage, NoSub, "UNAVAILABLE"},
		{"plain text context length", 400, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`", ClientError, ContextLength, ""},
		{"detail field", 400, `{"detail":"This model's maximum context length is 2048 tokens"}`, ClientError, ContextLength, ""},
		{"anthropic context limit", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 197202 + 8192 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`, ClientError, ContextLength, "invalid_request_error"},
		{"422 context window", 422, `{"error":{"message":"prompt exceeds the context window"}}`, ClientError, ContextLength, ""},
		{"capacity message on 503", 503, `{"error":{"message":"Model is at capacity, please retry"}}`, Capacity, NoSub, ""},
		{"capacity message on 429", 429, `model out of capacity`, Capacity, NoSub, ""},
		{"overloaded 529 stays outage", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded: no capacity"}}`, Outage, Overloaded, "overloaded_error"},
		{"quota message on 429", 429, `{"error":{"message":"You exceeded your current quota"}}`, Quota, Billing, ""},
		{"daily message on 429", 429, `{"error":{"message":"daily limit reached"}}`, Quota, DailyQuota, ""},
		{"job top-level code", 503, `{"code":"queue_full","message":"queue is full"}`, Capacity, NoSub, "queue_full"},
		{"job batch errors", 0, `{"errors":{"object":"list","data":[{"code":"provider_capacity_exceeded","message":"m","line":3}]}}`, Capacity, NoSub, "provider_capacity_exceeded"},
		{"TGI error_type", 503, `{"error":"Model is overloaded","error_type":"overloaded"}`, Outage, Overloaded, "overloaded"},
		{"string error code", 500, `{"error":"queue_full"}`, Capacity, NoSub, "queue_full"},
		{"gemini cancelled", 499, `{"error":{"code":499,"message":"The operation was cancelled.","status":"CANCELLED"}}`, Canceled, NoSub, "CANCELLED"},
		{"truncated body keeps leading fields", 429, `{"error":{"code":"insufficient_quota","message":"You exceeded your cur`, Quota, Billing, "insufficient_quota"},
		{"not JSON at all", 502, "\x00\xff\xfe garbage", Outage, NoSub, ""},
		{"empty object", 400, `{}`, ClientError, NoSub, ""},
		{"access terminated", 403, `{"error":{"code":"access_terminated","message":"m"}}`, Auth, PermissionDenied, "access_terminated"},
	}
	for _, tt := range tests {
		v := Classify(tt.status, nil, []byte(tt.body))
		if v.Kind != tt.kind || v.Sub != tt.sub || v.Code != tt.code {
			t.Errorf("%s: got %v/%v code %q; want %v/%v code %q", tt.name, v.Kind, v.Sub, v.Code, tt.kind, tt.sub, tt.code)
		}
	}
}

func TestMessageDecoding(t *testing.T) {
	tests := []struct {
		body, want string
	}{
		{`{"error":{"message":"a \"quoted\" word\nand a tab\there"}}`, `a "quoted" word and a tab here`},
		{`{"error":{"message":"caf\u00e9 \ud83d\ude00 \/ok"}}`, "café 😀 /ok"},
		{`{"error":{"message":"bad \u12 escape"}}`, "bad \ufffd12 escape"},
		{`{"error":{"message":"  padded  "}}`, "padded"},
		{`{"message":"top","error":{"message":"inner"}}`, "inner"},
		{"<html><head><title> 502 Bad Gateway </title></head></html>", "502 Bad Gateway"},
		{"\n\n  first line\nsecond", "first line"},
	}
	for _, tt := range tests {
		if got := Classify(500, nil, []byte(tt.body)).Message; got != tt.want {
			t.Errorf("message of %q = %q; want %q", tt.body, got, tt.want)
		}
	}
	long := `{"error":{"message":"` + strings.Repeat("é", 2000) + `"}}`
	m := Classify(500, nil, []byte(long)).Message
	if len(m) > MaxMessageLen || !strings.HasPrefix(m, "éé") || strings.ContainsRune(m, '\ufffd') {
		t.Errorf("long message: len %d, %q…", len(m), m[:10])
	}
}

func TestOverrides(t *testing.T) {
	c := &Classifier{Overrides: Overrides{
		Status: map[int]Kind{429: Outage, 400: Outage},
		Code:   map[string]Kind{"insufficient_quota": Throttle, "content_filter": Outage, CodeConnReset: Throttle, "ResponsibleAIPolicyViolation": Success},
	}}
	tests := []struct {
		name   string
		status int
		body   string
		kind   Kind
	}{
		{"429 as outage", 429, `{"error":{"code":"rate_limit_exceeded"}}`, Outage},
		{"code beats status", 429, `{"error":{"code":"insufficient_quota"}}`, Throttle},
		{"400 as outage", 400, `{"error":{"code":"context_length_exceeded"}}`, Outage},
		{"inner code matched too", 400, `{"error":{"code":"x_y","innererror":{"code":"ResponsibleAIPolicyViolation"}}}`, Success},
		{"untouched", 500, ``, Outage},
		{"finish reason code", 200, `{"choices":[{"finish_reason":"content_filter"}]}`, Outage},
	}
	for _, tt := range tests {
		v := c.Classify(tt.status, nil, []byte(tt.body))
		if v.Kind != tt.kind {
			t.Errorf("%s: kind = %v; want %v", tt.name, v.Kind, tt.kind)
		}
		p := Verdict{Kind: v.Kind, Sub: v.Sub}
		p.policy()
		if v.SameTarget != p.SameTarget || v.OtherTarget != p.OtherTarget {
			t.Errorf("%s: policy fields do not follow the overridden kind", tt.name)
		}
	}
	if v := c.ClassifyError(errReset); v.Kind != Throttle {
		t.Errorf("transport override: kind = %v; want throttle", v.Kind)
	}
	// An empty code never matches an override for "".
	c2 := &Classifier{Overrides: Overrides{Code: map[string]Kind{"": Success}}}
	if v := c2.Classify(500, nil, nil); v.Kind != Outage {
		t.Errorf("empty-code override applied: %v", v.Kind)
	}
}

func TestClassifyJobError(t *testing.T) {
	tests := []struct {
		code, msg string
		kind      Kind
		newKey    bool
	}{
		{"queue_full", "queue is full, try again in 10s", Capacity, true},
		{"provider_capacity_exceeded", "", Capacity, true},
		{"runtime_unavailable", "runtime is gone", Outage, false},
		{"context_length_exceeded", "", ClientError, false},
		{"something_new", "", Outage, false},
	}
	for _, tt := range tests {
		v := ClassifyJobError(tt.code, tt.msg)
		if v.Kind != tt.kind || v.NewIdempotencyKey != tt.newKey || v.Message != tt.msg {
			t.Errorf("ClassifyJobError(%q) = %v newKey %v msg %q", tt.code, v, v.NewIdempotencyKey, v.Message)
		}
	}
	if v := ClassifyJobError(strings.Repeat("x", 1000), strings.Repeat("y", 100000)); v.Kind != Outage || len(v.Message) != MaxMessageLen || v.Code != "" {
		t.Errorf("long job record: %v, message %d bytes", v, len(v.Message))
	}
	if !Classify(200, nil, nil).OK() || Classify(500, nil, nil).OK() {
		t.Error("OK() wrong")
	}
	if v := ClassifyJobError("queue_full", "try again in 10s"); v.Wait.Seconds() != 10 || v.WaitFrom != WaitMessage {
		t.Errorf("job wait = %v from %v", v.Wait, v.WaitFrom)
	}
}

func TestKindText(t *testing.T) {
	for k := Success; k < numKinds; k++ {
		b, _ := k.MarshalText()
		var got Kind
		if err := got.UnmarshalText(b); err != nil || got != k {
			t.Errorf("round trip of %v: %v, %v", k, got, err)
		}
	}
	if _, err := ParseKind("explosion"); err == nil {
		t.Error("ParseKind accepted an unknown name")
	}
	if s := Kind(200).String(); s != "kind(200)" {
		t.Errorf("unknown kind string %q", s)
	}
	for s := NoSub; s <= numSubKinds; s++ {
		if s != NoSub && s.String() == "" {
			t.Errorf("sub-kind %d has no name", s)
		}
	}
	for o := BreakerIgnore; o <= BreakerFailure+1; o++ {
		if o.String() == "" {
			t.Errorf("outcome %d has no name", o)
		}
	}
	for w := NoWait; w <= WaitMessage+1; w++ {
		if w.String() == "" {
			t.Errorf("wait source %d has no name", w)
		}
	}
}

func TestCodeTableUnique(t *testing.T) {
	seen := map[string]bool{}
	for k, ci := range codeTable {
		if seen[k] {
			t.Errorf("duplicate code %q", k)
		}
		seen[k] = true
		if len(ci.name) > MaxCodeLen {
			t.Errorf("code %q longer than MaxCodeLen", ci.name)
		}
		if got, ok := lookupCode([]byte(strings.ToUpper(ci.name))); !ok || got != ci {
			t.Errorf("lookupCode(%q) = %+v, %v", strings.ToUpper(ci.name), got, ok)
		}
	}
	// 95 entries are declared; a duplicate spelling would shadow one.
	if len(codeTable) < 95 {
		t.Errorf("code table has %d entries", len(codeTable))
	}
}

func TestVerdictString(t *testing.T) {
	v := Classify(429, http.Header{"Retry-After": {"20"}}, []byte(`{"error":{"code":"rate_limit_exceeded"}}`))
	if got, want := v.String(), "throttle 429 rate_limit_exceeded wait=20s"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	v = ClassifyError(ErrStreamStalled)
	if got, want := v.String(), "outage/stream_stalled stream_stalled"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}

// TestBodyReadAsEncodingJSON: keys and the values compared are decoded,
// and of a key given twice the last counts, as encoding/json reads them.
func TestBodyReadAsEncodingJSON(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   Kind
		sub    SubKind
		code   string
		msg    string
	}{
		{"escaped key", 429, `{"error":{"c\u006fde":"insufficient_quota"}}`, Quota, Billing, "insufficient_quota", ""},
		{"escaped code", 429, `{"error":{"code":"insufficient\u005fquota"}}`, Quota, Billing, "insufficient_quota", ""},
		{"escaped unknown code", 400, `{"error":{"code":"n\u0065w_c\u006fde"}}`, ClientError, NoSub, "new_code", ""},
		{"non-ASCII unknown code dropped", 400, `{"error":{"code":"n\u00e9w"}}`, ClientError, NoSub, "", ""},
		{"last code wins", 429, `{"error":{"code":"insufficient_quota","code":"rate_limit_exceeded"}}`, Throttle, NoSub, "rate_limit_exceeded", ""},
		{"last code wins, null", 429, `{"error":{"code":"insufficient_quota","code":null}}`, Throttle, NoSub, "", ""},
		{"last message wins", 500, `{"error":{"message":"first","message":"second"}}`, Outage, NoSub, "", "second"},
		{"last message wins, null", 500, `{"error":{"message":"first","message":null},"detail":"d"}`, Outage, NoSub, "", "d"},
		{"escaped message key", 400, `{"error":{"m\u0065ssage":"maximum context length exceeded"}}`, ClientError, ContextLength, "", "maximum context length"},
		{"keys are exact", 429, `{"error":{"Code":"insufficient_quota"}}`, Throttle, NoSub, "", ""},
		{"a dotted key is one key", 429, `{"error.code":"insufficient_quota"}`, Throttle, NoSub, "", ""},
		{"an empty key is not the root", 500, `{"":{"error":{"code":"queue_full"}}}`, Outage, NoSub, "", ""},
		{"key with invalid UTF-8", 500, "{\"error\":{\"code\xff\":\"queue_full\"}}", Outage, NoSub, "", ""},
		{"escaped gemini reason", 429, `{"error":{"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quota\u0049d":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}`, Quota, DailyQuota, "RESOURCE_EXHAUSTED", ""},
	}
	for _, tt := range tests {
		v := Classify(tt.status, nil, []byte(tt.body))
		if v.Kind != tt.kind || v.Sub != tt.sub || v.Code != tt.code || !strings.Contains(v.Message, tt.msg) {
			t.Errorf("%s: got %v/%v code %q message %q; want %v/%v code %q message %q",
				tt.name, v.Kind, v.Sub, v.Code, v.Message, tt.kind, tt.sub, tt.code, tt.msg)
		}
	}
	// Finish reasons: the last of a choice counts, and a filtered choice
	// counts in any position; an escaped key is seen in a stream too.
	for _, tt := range []struct {
		body string
		kind Kind
	}{
		{`{"choices":[{"finish_reason":"content_filter","finish_reason":"stop"}]}`, Success},
		{`{"choices":[{"finish_reason":"stop","finish_reason":"content_filter"}]}`, ClientError},
		{`{"choices":[{"finish_reason":"content_filter"},{"finish_reason":"stop"}]}`, ClientError},
		{`{"choices":[{"finish_r\u0065ason":"content_filter"}]}`, ClientError},
		{`{"\u0065rror":{"code":503,"message":"overloaded"}}`, Outage},
	} {
		if v := ClassifyEvent("", []byte(tt.body)); v.Kind != tt.kind {
			t.Errorf("ClassifyEvent(%s) = %v; want %v", tt.body, v.Kind, tt.kind)
		}
	}
	if v := ClassifyEvent("", []byte(`{"error":{"code":429,"code":503}}`)); v.Status != 503 {
		t.Errorf("last numeric code: status %d; want 503", v.Status)
	}
}

// TestClassifyAllocs: reading a body allocates nothing, however it spells
// its keys and strings; what allocates is the message, a code that is not
// a known one, and a wait read from text.
func TestClassifyAllocs(t *testing.T) {
	for _, tc := range []struct {
		body   string
		allocs float64
	}{
		{string(bench429Body), 2}, // message, "4.924s"
		{`{"error":{"m\u0065ssage":"Rate limit \"reached\"\n","c\u006fde":"rate_limit_exceeded","type":"tokens"}}`, 1},
		{`{"error":"Input validation error: ` + strings.Repeat(`\"inputs\" tokens + \"max_new_tokens\" must be <= 4096.\n`, 20) + `","error_type":"validation"}`, 2},
		{`[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"35s"}]}}]`, 2},
	} {
		b := []byte(tc.body)
		if n := testing.AllocsPerRun(100, func() { Classify(429, nil, b) }); n > tc.allocs {
			t.Errorf("%.40s…: %v allocations, want %v", tc.body, n, tc.allocs)
		}
	}
}
