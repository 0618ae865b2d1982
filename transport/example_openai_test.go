package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
	"github.com/fuseboxhq/fusebox/transport"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// The official openai-go client through the transport. The provider's first
// answer is a 503: the transport classifies it as an outage, counts it
// against the breaker of (endpoint, model) and, the endpoint being the only
// one, retries it after a backoff; the SDK sees only the second answer. The
// SDK's own retries are off, so the transport is the one place that
// retries; the fake clock lets the backoff pass without waiting.
func Example_openai() {
	var calls atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4.1",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`)
	}))
	defer provider.Close()

	fake := clocktest.New(time.Time{})
	rt, err := transport.New(transport.Config{
		Endpoints: []transport.Endpoint{{Name: "openai", BaseURL: provider.URL + "/v1"}},
		Retry:     retry.Policy{Rand: func() float64 { return 0.5 }}, // half the 100ms ceiling
		Clock:     fake,
		OnAttempt: func(a transport.Attempt) {
			fmt.Printf("attempt %d on %s: %v, then %v", a.N, a.Endpoint, a.Verdict.Kind, a.Next)
			if a.Next == transport.Retry {
				fmt.Printf(" in %v", a.Wait)
			}
			fmt.Println()
		},
	})
	if err != nil {
		panic(err)
	}
	client := openai.NewClient(
		option.WithBaseURL(provider.URL+"/v1"),
		option.WithAPIKey("sk-example"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithMaxRetries(0), // the transport owns retries
	)

	type answer struct {
		c   *openai.ChatCompletion
		err error
	}
	done := make(chan answer)
	go func() {
		c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:    "gpt-4.1",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		done <- answer{c, err}
	}()
	fake.WaitForTimers(1) // the request is parked on its backoff
	fake.AdvanceToNext()
	a := <-done
	if a.err != nil {
		panic(a.err)
	}
	fmt.Println("the SDK got:", a.c.Choices[0].Message.Content)
	for _, b := range rt.Breakers() {
		fmt.Printf("breaker %s: %v, %d failed, %d succeeded\n", b.Name, b.State, b.Totals.Failed, b.Totals.Succeeded)
	}
	// Output:
	// attempt 1 on openai: outage, then retry in 50ms
	// attempt 2 on openai: success, then return
	// the SDK got: hello
	// breaker openai/gpt-4.1: closed, 1 failed, 1 succeeded
}
