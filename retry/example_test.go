package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// statusError is how an HTTP client might report a failed response under
// retry's error contract.
type statusError struct {
	code  int
	after time.Duration // from Retry-After; 0 when absent
}

func (e *statusError) Error() string { return http.StatusText(e.code) }

// RetryAfter is the server's hint.
func (e *statusError) RetryAfter() time.Duration { return e.after }

// Retryable: throttling and server errors are worth another try.
func (e *statusError) Retryable() bool {
	return e.code == http.StatusTooManyRequests || e.code >= 500
}

// get fetches url and turns a failed response into a *statusError.
func get(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return "", &statusError{code: resp.StatusCode, after: time.Duration(secs) * time.Second}
	}
	return string(body), nil
}

// Retrying an HTTP call to a server that is unavailable twice, asking each
// time to come back in one second. The fake clock makes the waits instant.
func ExamplePolicy_Do_http() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	begin := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	fake := clocktest.New(begin)
	p := &retry.Policy{
		Clock: fake,
		Rand:  func() float64 { return 0.5 }, // backoff 50ms, then 100ms: the 1s hint wins
		OnRetry: func(a retry.Attempt) {
			fmt.Printf("attempt %d: %v; next in %v\n", a.N, a.Err, a.Wait)
		},
	}

	var body string
	done := make(chan error)
	go func() {
		done <- p.Do(context.Background(), func(ctx context.Context, attempt int) error {
			var err error
			body, err = get(ctx, srv.Client(), srv.URL)
			return err
		})
	}()
	for range 2 { // let each wait pass
		fake.WaitForTimers(1)
		fake.AdvanceToNext()
	}
	err := <-done
	fmt.Println(body, err, fake.Now().Sub(begin))
	// Output:
	// attempt 1: Service Unavailable; next in 1s
	// attempt 2: Service Unavailable; next in 1s
	// hello <nil> 2s
}

// A failover walk runs its own loop and asks Next what to do after each
// failure: a breaker refusal or a long server hint means "try the next
// target now", not "wait here".
func ExamplePolicy_Next() {
	p := &retry.Policy{Rand: func() float64 { return 0.5 }}
	targets := []struct {
		name string
		err  error
	}{
		{"primary", &breaker.OpenError{Name: "primary", State: breaker.StateForcedOpen}},
		{"secondary", &statusError{code: 429, after: time.Minute}},
		{"tertiary", &statusError{code: 503}},
		{"tertiary", &statusError{code: 400}},
	}
	for attempt, t := range targets {
		wait, reason := p.Next(attempt+1, t.err, 10*time.Second)
		fmt.Printf("%s: %v -> %v (wait %v)\n", t.name, t.err, reason, wait)
	}
	// Output:
	// primary: breaker primary: forced open -> breaker open (wait 0s)
	// secondary: Too Many Requests -> server wait hint too long (wait 1m0s)
	// tertiary: Service Unavailable -> attempts exhausted (wait 0s)
	// tertiary: Bad Request -> not retryable (wait 0s)
}

// Without a budget, an outage turns each request into Attempts requests.
// A budget of 20% holds the extra load to a fifth.
func ExampleBudget() {
	fake := clocktest.New(time.Time{})
	budget, err := retry.NewBudget(retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 1, Clock: fake})
	if err != nil {
		panic(err)
	}
	p := &retry.Policy{Budget: budget, Clock: fake, Rand: func() float64 { return 0 }}

	calls, refused := 0, 0
	for range 1000 {
		err := p.Do(context.Background(), func(context.Context, int) error {
			calls++
			return errors.New("503")
		})
		if errors.Is(err, retry.ErrBudgetExhausted) {
			refused++
		}
	}
	requests, retries := budget.Counts()
	fmt.Printf("%d requests, %d retries, %d upstream calls, %d refused\n", requests, retries, calls, refused)
	// Output:
	// 1000 requests, 210 retries, 1210 upstream calls, 995 refused
}

// The backoff ceiling doubles from Base up to Max; each wait is drawn
// uniformly below it.
func ExamplePolicy_Ceiling() {
	p := &retry.Policy{Base: 250 * time.Millisecond, Max: 2 * time.Second}
	for attempt := 1; attempt <= 5; attempt++ {
		fmt.Println(attempt, p.Ceiling(attempt))
	}
	// Output:
	// 1 250ms
	// 2 500ms
	// 3 1s
	// 4 2s
	// 5 2s
}
