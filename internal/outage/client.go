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

	"github.com/fuseboxhq/fusebox/internal/sse"
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
	stream             bool // requests are streamed
	// cross: the requests are Anthropic Messages, to Claude on Anthropic
	// and on Bedrock (Scenario.crossCloud).
	cross bool
	// records are the client's requests, filled in by Run.
	records []record
	// counts are the requests ended so far, for Progress.
	counts counts
}

// record is one request as the client saw it.
type record struct {
	start    time.Duration // since the start of the run
	latency  time.Duration // to the end of the answer
	ttfb     time.Duration // to the first byte of the answer it ended with; 0 when none came
	served   string        // "primary" or "secondary"; "" when it failed
	failed   bool
	canceled bool // cut short by the end of the run: not counted
	usage    usage
}

// usage is the tokens an answer billed.
type usage struct{ in, out int }

// answer is what one call brought back.
type answer struct {
	target    string // Fusebox's X-Fusebox-Target; "" from a provider
	usage     usage
	firstByte time.Time // the headers (JSON) or first event (stream); zero when none came
}

// newRig starts the providers (and gateway) of client c.
func newRig(c Client, o Options) (_ *rig, err error) {
	r := &rig{kind: c, stream: o.Stream, cross: o.Scenario.crossCloud(), http: &http.Client{
		Timeout:   o.clientTimeout,
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
func drive(ctx context.Context, t0 time.Time, o Options, send func(context.Context) (string, answer, error), c *counts) []record {
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
			served, a, err := send(ctx)
			recs[i] = record{
				start: start.Sub(t0), latency: time.Since(start), served: served, usage: a.usage,
				failed: err != nil, canceled: ctx.Err() != nil,
			}
			if !a.firstByte.IsZero() {
				recs[i].ttfb = a.firstByte.Sub(start)
			}
			c.add(err != nil)
		})
	}
	wg.Wait()
	return recs[:sent]
}

// send sends one request the client's way and returns who served it and
// the answer it ended with: for a client that retries, its last call's.
func (r *rig) send(ctx context.Context) (string, answer, error) {
	ctx, cancel := context.WithTimeout(ctx, r.http.Timeout)
	defer cancel()
	post, secondary := r.post, func(ctx context.Context) (answer, error) { return r.post(ctx, r.secondary.url, model) }
	primaryModel := model
	if r.cross {
		post, secondary, primaryModel = r.postMessages, r.invokeBedrock, claudeModel
	}
	primary := func(ctx context.Context) (answer, error) { return post(ctx, r.primary.url, primaryModel) }
	switch r.kind {
	case Naive:
		a, err := retriedWith(ctx, primary)
		return served("primary", err), a, err
	case RetryFailover:
		a, err := retriedWith(ctx, primary)
		if err == nil || ctx.Err() != nil {
			return served("primary", err), a, err
		}
		a, err = retriedWith(ctx, secondary)
		return served("secondary", err), a, err
	}
	a, err := post(ctx, r.gw.url(), alias)
	name, _, _ := strings.Cut(a.target, "/")
	return served(name, err), a, err
}

// served is who served a request: name, or "" when it failed.
func served(name string, err error) string {
	if err != nil {
		return ""
	}
	return name
}

// post sends one chat completion to base, streamed when the rig streams,
// and reads the whole answer.
func (r *rig) post(ctx context.Context, base, model string) (answer, error) {
	req := map[string]any{
		"model":    model,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	}
	if r.stream {
		req["stream"] = true
		req["stream_options"] = map[string]bool{"include_usage": true}
	}
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer sim-key")
	resp, err := r.http.Do(hr)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return answer{}, &statusError{status: resp.StatusCode, wait: retryAfter(resp.Header), body: string(msg)}
	}
	a := answer{target: resp.Header.Get("X-Fusebox-Target")}
	if r.stream {
		err = readStream(resp.Body, &a)
		return a, err
	}
	a.firstByte = time.Now()
	var completion struct {
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&completion); err != nil {
		return a, fmt.Errorf("outage: reading the answer: %w", err)
	}
	if completion.Usage == nil {
		return a, errors.New("outage: answer without usage")
	}
	a.usage = usage{completion.Usage.Prompt, completion.Usage.Completion}
	return a, nil
}

// streamChunk is the part of a chat.completion.chunk (or of an error
// event) that the clients read.
type streamChunk struct {
	Choices []struct {
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Why a stream failed.
var (
	errStreamBroke    = errors.New("outage: the stream broke")
	errStreamError    = errors.New("outage: error event in the stream")
	errStreamNoFinish = errors.New("outage: the stream ended without a finish_reason")
)

// readStream reads a chat completion stream into a until data: [DONE] or
// the end of the body, as OpenAI's SDKs do: a stream that ends without
// [DONE] is complete if it carried a finish_reason. It fails when the
// stream broke (a read error, an event cut short), carried an error event
// or ended without a finish_reason.
func readStream(body io.Reader, a *answer) error {
	rd := sse.NewReader(body, sse.Options{})
	finished := false
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errStreamBroke, err)
		}
		if a.firstByte.IsZero() {
			a.firstByte = time.Now()
		}
		if sse.IsDone(ev) {
			break
		}
		var c streamChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			return fmt.Errorf("%w: an event is not JSON: %w", errStreamBroke, err)
		}
		if ev.Name == "error" || (len(c.Error) > 0 && string(c.Error) != "null") {
			return fmt.Errorf("%w: %s", errStreamError, ev.Data)
		}
		for _, ch := range c.Choices {
			finished = finished || (ch.FinishReason != nil && *ch.FinishReason != "")
		}
		if c.Usage != nil {
			a.usage = usage{c.Usage.Prompt, c.Usage.Completion}
		}
	}
	if !finished {
		return errStreamNoFinish
	}
	return nil
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
