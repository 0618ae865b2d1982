package outage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/retry"
)

// Client names one of the clients the benchmark compares.
type Client string

// The clients.
const (
	// Naive calls the primary, retrying 3 times with backoff.
	Naive Client = "naive"
	// RetryFailover retries the primary like Naive, then the secondary.
	RetryFailover Client = "retry+failover"
	// Fusebox calls the gateway.
	Fusebox Client = "fusebox"
)

// Clients lists the clients in the order of the report.
var Clients = []Client{Naive, RetryFailover, Fusebox}

// model is the model the clients ask the providers for.
const model = "sim-large"

// clientTimeout bounds one request of a client, retries included.
const clientTimeout = 30 * time.Second

// naivePolicy is the retry policy of the clients without Fusebox: the
// first call and up to 3 retries, full-jitter backoff from 100ms doubling,
// Retry-After honoured up to 30s.
var naivePolicy = retry.Policy{Attempts: 4, Base: 100 * time.Millisecond, Max: 2 * time.Second}

// prompt is every request's user message: about 300 tokens.
var prompt = strings.Repeat("Summarise the incident report below in one paragraph for the on-call engineer. ", 15)

// rig is one client with its own providers (and gateway, for Fusebox).
type rig struct {
	kind               Client
	primary, secondary *provider
	gw                 *fusebox // Fusebox only
	http               *http.Client
	// records are the client's requests, filled in by Run.
	records []record
}

// record is one request as the client saw it.
type record struct {
	start    time.Duration // since the start of the run
	latency  time.Duration
	served   string // "primary" or "secondary"; "" when it failed
	failed   bool
	canceled bool // cut short by the end of the run: not counted
	usage    usage
}

// usage is the tokens an answer billed.
type usage struct{ in, out int }

// newRig starts the providers (and gateway) of client c.
func newRig(c Client, o Options) (_ *rig, err error) {
	r := &rig{kind: c, http: &http.Client{
		Timeout:   clientTimeout,
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second},
	}}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.primary, err = startProvider(simConfig(o, "primary", 1)); err != nil {
		return nil, err
	}
	if r.secondary, err = startProvider(simConfig(o, "secondary", 2)); err != nil {
		return nil, err
	}
	if c == Fusebox {
		if r.gw, err = startFusebox(o, r.primary, r.secondary); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// close stops what newRig started.
func (r *rig) close() {
	r.http.CloseIdleConnections()
	if r.gw != nil {
		r.gw.close()
	}
	for _, p := range []*provider{r.primary, r.secondary} {
		if p != nil {
			p.close()
		}
	}
}

// drive sends o.Rate requests per second with send from t0 for o.Duration,
// each in its own goroutine, and returns them once all have ended.
func drive(ctx context.Context, t0 time.Time, o Options, send func(context.Context) (string, usage, error)) []record {
	n := int(o.Rate * o.Duration.Seconds())
	recs := make([]record, n)
	interval := float64(time.Second) / o.Rate
	var wg sync.WaitGroup
	sent := 0
	for ; sent < n; sent++ {
		if !sleepUntil(ctx, t0.Add(time.Duration(float64(sent)*interval))) {
			break
		}
		i := sent
		wg.Go(func() {
			start := time.Now()
			served, u, err := send(ctx)
			recs[i] = record{
				start: start.Sub(t0), latency: time.Since(start), served: served, usage: u,
				failed: err != nil, canceled: ctx.Err() != nil,
			}
		})
	}
	wg.Wait()
	return recs[:sent]
}

// send sends one request the client's way and returns who served it.
func (r *rig) send(ctx context.Context) (string, usage, error) {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	switch r.kind {
	case Naive:
		u, err := r.retried(ctx, r.primary.url, model)
		return served("primary", err), u, err
	case RetryFailover:
		u, err := r.retried(ctx, r.primary.url, model)
		if err == nil || ctx.Err() != nil {
			return served("primary", err), u, err
		}
		u, err = r.retried(ctx, r.secondary.url, model)
		return served("secondary", err), u, err
	}
	target, u, err := r.post(ctx, r.gw.url, alias)
	name, _, _ := strings.Cut(target, "/")
	return served(name, err), u, err
}

// served is who served a request: name, or "" when it failed.
func served(name string, err error) string {
	if err != nil {
		return ""
	}
	return name
}

// retried calls base with naivePolicy.
func (r *rig) retried(ctx context.Context, base, model string) (usage, error) {
	var u usage
	err := naivePolicy.Do(ctx, func(ctx context.Context, _ int) error {
		var err error
		_, u, err = r.post(ctx, base, model)
		return err
	})
	return u, err
}

// post sends one chat completion to base and returns the target that
// served it (Fusebox's X-Fusebox-Target; "" from a provider) and its usage.
func (r *rig) post(ctx context.Context, base, model string) (string, usage, error) {
	body, _ := json.Marshal(map[string]any{
		"model":    model,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", usage{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sim-key")
	resp, err := r.http.Do(req)
	if err != nil {
		return "", usage{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", usage{}, &statusError{status: resp.StatusCode, wait: retryAfter(resp.Header), body: string(msg)}
	}
	var answer struct {
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return "", usage{}, fmt.Errorf("outage: reading the answer: %w", err)
	}
	if answer.Usage == nil {
		return "", usage{}, errors.New("outage: answer without usage")
	}
	return resp.Header.Get("X-Fusebox-Target"), usage{answer.Usage.Prompt, answer.Usage.Completion}, nil
}

// statusError is an error answer. It tells package retry whether to retry
// (429 and 5xx) and how long the server asked to wait.
type statusError struct {
	status int
	wait   time.Duration
	body   string
}

func (e *statusError) Error() string {
	return "status " + strconv.Itoa(e.status) + ": " + e.body
}

// RetryAfter is the server's Retry-After, 0 without one.
func (e *statusError) RetryAfter() time.Duration { return e.wait }

// Retryable reports whether the answer is worth retrying.
func (e *statusError) Retryable() bool {
	return e.status == http.StatusTooManyRequests || e.status >= 500
}

// retryAfter reads retry-after-ms, else Retry-After in seconds; 0 when
// neither is a number.
func retryAfter(h http.Header) time.Duration {
	if n, err := strconv.ParseInt(h.Get("Retry-After-Ms"), 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	if n, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}
