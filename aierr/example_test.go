package aierr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
)

func ExampleClassify() {
	header := http.Header{
		"Retry-After":                  {"3"},
		"X-Ratelimit-Remaining-Tokens": {"0"},
		"X-Ratelimit-Reset-Tokens":     {"2.328s"},
	}
	body := []byte(`{"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM). Please try again in 2.328s.",
		"type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)

	v := aierr.Classify(429, header, body)
	fmt.Println(v.Kind, v.Code)
	fmt.Println("wait:", v.Wait, "from", v.WaitFrom)
	fmt.Println("breaker:", v.Breaker())
	fmt.Println("retry here:", v.SameTarget, "fail over:", v.OtherTarget)
	fmt.Println("tokens left:", v.Limits.Tokens.Remaining, "reset in", v.Limits.Tokens.Reset)
	// Output:
	// throttle rate_limit_exceeded
	// wait: 3s from retry-after
	// breaker: ignore
	// retry here: true fail over: true
	// tokens left: 0 reset in 2.328s
}

func ExampleClassify_anthropicOverloaded() {
	body := []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	v := aierr.Classify(529, nil, body)
	fmt.Println(v)
	fmt.Println("breaker:", v.Breaker())
	// Output:
	// outage/overloaded 529 overloaded_error
	// breaker: failure
}

func ExampleClassify_geminiPerDayQuota() {
	body := []byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded",
		"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure",
		  "violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
		 {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"35s"}]}}`)
	v := aierr.Classify(429, nil, body)
	// A per-day quota is not a short throttle: take the key out of rotation.
	fmt.Println(v.Kind, v.Sub, "retry here:", v.SameTarget, "other key:", v.OtherTarget)
	// Output:
	// quota daily_quota retry here: false other key: true
}

func ExampleClassify_bedrock() {
	// Bedrock names the exception in a header; the body has only a message.
	header := http.Header{"X-Amzn-Errortype": {"ModelNotReadyException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}
	body := []byte(`{"message":"The model specified in the request is not ready to serve inference requests."}`)
	v := aierr.Classify(429, header, body)
	// A 429, but not a throttle of the caller: that target cannot serve yet.
	fmt.Println(v, "breaker:", v.Breaker())

	header = http.Header{"X-Amzn-Errortype": {"ResourceNotFoundException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}
	v = aierr.Classify(404, header, []byte(`{"message":"Model not found."}`))
	// The model is not there on this target: the ladder goes on.
	fmt.Println(v, "breaker:", v.Breaker(), "other target:", v.OtherTarget)
	// Output:
	// outage/not_ready 429 ModelNotReadyException breaker: failure
	// client_error/not_deployed 404 ResourceNotFoundException breaker: ignore other target: true
}

func ExampleClassify_contextLength() {
	// vLLM gives only the message as a clue.
	body := []byte(`{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9010 tokens.","type":"BadRequestError","code":400}`)
	v := aierr.Classify(400, nil, body)
	if v.Kind == aierr.ClientError && v.Sub == aierr.ContextLength {
		fmt.Println("try a longer-context target:", v.OtherTarget)
	}
	// Output:
	// try a longer-context target: true
}

func ExampleClassifier_overrides() {
	// For this target, count throttling as an outage so that it trips.
	c := aierr.Classifier{Overrides: aierr.Overrides{Status: map[int]aierr.Kind{429: aierr.Outage}}}
	v := c.Classify(429, nil, nil)
	fmt.Println(v.Kind, v.Breaker())
	// Output:
	// outage failure
}

func ExampleClassifier_now() {
	// Inject the clock: Retry-After dates and RFC 3339 reset headers need "now".
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	c := aierr.Classifier{Now: func() time.Time { return now }}
	v := c.Classify(503, http.Header{"Retry-After": {"Sun, 01 Jun 2025 12:00:30 GMT"}}, nil)
	fmt.Println(v.Kind, v.Wait)
	// Output:
	// outage 30s
}

func ExampleClassifyEvent() {
	// An Anthropic stream that fails after its 200.
	v := aierr.ClassifyEvent("error", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	fmt.Println(v.Kind, v.Sub)

	// An OpenAI chunk cut by the content filter.
	v = aierr.ClassifyEvent("", []byte(`{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`))
	fmt.Println(v.Kind, v.Sub)

	fmt.Println(aierr.ClassifyEvent("", []byte("[DONE]")).Kind)
	// Output:
	// outage overloaded
	// client_error content_filter
	// success
}

func ExampleClassifyFinish() {
	body := []byte(`{"candidates":[{"finishReason":"SAFETY","index":0}]}`)
	v := aierr.ClassifyFinish(body)
	fmt.Println(v.Kind, v.Sub, v.Code)
	// Output:
	// client_error content_filter SAFETY
}

func ExampleClassifyError() {
	for _, err := range []error{
		context.Canceled,
		fmt.Errorf("guard: %w", aierr.ErrFirstByteTimeout),
		context.DeadlineExceeded,
	} {
		v := aierr.ClassifyError(err)
		fmt.Println(v.Kind, v.Code, v.Breaker())
	}
	// Output:
	// canceled canceled ignore
	// outage first_byte_timeout failure
	// outage timeout failure
}

func ExampleVerdict_Err() {
	v := aierr.Classify(429, http.Header{"Retry-After-Ms": {"250"}}, nil)
	err := fmt.Errorf("calling openai: %w", v.Err())

	// What the retry package looks for:
	var hint interface {
		RetryAfter() time.Duration
		Retryable() bool
	}
	if errors.As(err, &hint) {
		fmt.Println(hint.Retryable(), hint.RetryAfter())
	}
	got, _ := aierr.FromError(err)
	fmt.Println(got.Kind)
	// Output:
	// true 250ms
	// throttle
}

func ExampleClassifyJobError() {
	v := aierr.ClassifyJobError("queue_full", "queue is full")
	fmt.Println(v.Kind, "new idempotency key:", v.NewIdempotencyKey, "breaker:", v.Breaker())
	// Output:
	// capacity new idempotency key: true breaker: ignore
}
