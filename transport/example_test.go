package transport_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/transport"
)

// Two equivalent endpoints: the primary is down, so requests fail over to
// the secondary, and after three failures the primary's breaker opens and
// it is skipped without a call.
func Example() {
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	defer primary.Close()
	secondary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"hi from secondary"}}]}`)
	}))
	defer secondary.Close()

	rt, err := transport.New(transport.Config{
		Endpoints: []transport.Endpoint{
			{Name: "primary", BaseURL: primary.URL + "/v1"},
			{Name: "secondary", BaseURL: secondary.URL + "/v1", APIKey: "sk-secondary"},
		},
		Breaker: breaker.Config{ConsecutiveFailures: 3},
		OnAttempt: func(a transport.Attempt) {
			if a.Skipped != nil {
				fmt.Printf("  %s skipped (breaker open)\n", a.Endpoint)
				return
			}
			fmt.Printf("  %s: %v, %v\n", a.Endpoint, a.Verdict.Kind, a.Next)
		},
	})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: rt}
	for i := 1; i <= 4; i++ {
		fmt.Println("request", i)
		resp, err := client.Post(primary.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(" ", resp.StatusCode, string(body))
	}
	// Output:
	// request 1
	//   primary: outage, failover
	//   secondary: success, return
	//   200 {"choices":[{"message":{"content":"hi from secondary"}}]}
	// request 2
	//   primary: outage, failover
	//   secondary: success, return
	//   200 {"choices":[{"message":{"content":"hi from secondary"}}]}
	// request 3
	//   primary: outage, failover
	//   secondary: success, return
	//   200 {"choices":[{"message":{"content":"hi from secondary"}}]}
	// request 4
	//   primary skipped (breaker open)
	//   secondary: success, return
	//   200 {"choices":[{"message":{"content":"hi from secondary"}}]}
}
