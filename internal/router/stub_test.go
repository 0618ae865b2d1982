package router

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// This file holds the fakes the watchdog, retry, hedge and probe tests
// share: an upstream that plays a script of answers, each a function of the
// call, on the fake clock.

// answer is one scripted upstream answer.
type answer func(ctx context.Context, c *Call) (*http.Response, error)

// stub is an Upstream that plays its answers in turn (the last repeats),
// records every call with its context, and tells sent of each call.
type stub struct {
	mu      sync.Mutex
	answers []answer
	calls   []*Call
	ctxs    []context.Context
	// sent receives every call as it arrives (buffered; never blocks).
	sent chan *Call
}

func newStub(answers ...answer) *stub {
	return &stub{answers: answers, sent: make(chan *Call, 256)}
}

func (s *stub) Send(ctx context.Context, c *Call) (*http.Response, error) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.ctxs = append(s.ctxs, ctx)
	a := s.answers[min(len(s.calls), len(s.answers))-1]
	s.mu.Unlock()
	s.sent <- c
	return a(ctx, c)
}

// n returns the number of calls so far.
func (s *stub) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// call returns the i-th call and the context it was sent with.
func (s *stub) call(i int) (*Call, context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[i], s.ctxs[i]
}

// models is an Upstream that sends each call to the stub of its model: one
// provider, one key, several models.
type models map[string]*stub

func (m models) Send(ctx context.Context, c *Call) (*http.Response, error) {
	return m[c.Model].Send(ctx, c)
}

const okBody = `{"choices":[{"message":{"content":"ok"}}]}`

// status answers at once with code and the given header pairs.
func status(code int, header ...string) answer {
	return func(ctx context.Context, c *Call) (*http.Response, error) {
		return response(code, header...), nil
	}
}

func response(code int, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	body := okBody
	switch {
	case code == 401:
		body = `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`
	case code >= 400:
		body = fmt.Sprintf(`{"error":{"message":"e","type":"t%d","code":null}}`, code)
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

// hang never answers: it returns the context's error when the attempt's
// context ends, as an HTTP client does.
func hang() answer {
	return func(ctx context.Context, c *Call) (*http.Response, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

// later waits d on clk (or for the attempt's end) before answering with a.
func later(clk *clocktest.Clock, d time.Duration, a answer) answer {
	return func(ctx context.Context, c *Call) (*http.Response, error) {
		t := clk.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C():
			return a(ctx, c)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// withBody answers code at once, with body as its body.
func withBody(code int, body func(ctx context.Context) io.ReadCloser) answer {
	return func(ctx context.Context, c *Call) (*http.Response, error) {
		return &http.Response{StatusCode: code, Header: http.Header{}, Body: body(ctx)}, nil
	}
}

// silent is a body that sends nothing until the attempt's context ends.
func silent(ctx context.Context) io.ReadCloser { return &scriptedBody{ctx: ctx} }

// firstThenSilent is a body that sends first at once, then nothing until
// the attempt's context ends: a stream that stalls after its first event.
func firstThenSilent(first string) func(ctx context.Context) io.ReadCloser {
	return func(ctx context.Context) io.ReadCloser {
		return &scriptedBody{ctx: ctx, chunks: []string{first}}
	}
}

// trickle is a body that sends one byte at once, then one byte every
// `every` on clk, for ever.
func trickle(clk *clocktest.Clock, every time.Duration) func(ctx context.Context) io.ReadCloser {
	return func(ctx context.Context) io.ReadCloser {
		return &scriptedBody{ctx: ctx, chunks: []string{"{"}, clk: clk, every: every}
	}
}

// scriptedBody sends its chunks at once, then (with a clock) a byte every
// `every`, else nothing; a read fails with the context's error once it
// ends.
type scriptedBody struct {
	ctx    context.Context
	chunks []string
	clk    *clocktest.Clock
	every  time.Duration
}

func (b *scriptedBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if len(b.chunks) > 0 {
		n := copy(p, b.chunks[0])
		b.chunks = b.chunks[1:]
		return n, nil
	}
	if b.clk == nil {
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	t := b.clk.NewTimer(b.every)
	defer t.Stop()
	select {
	case <-t.C():
		return copy(p, " "), nil
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
}

func (b *scriptedBody) Close() error { return nil }

// events records what the router reports through its Spec hooks; the hooks
// may run on the clock's goroutine (a watchdog's cut) or a race's.
type events struct {
	mu        sync.Mutex
	attempts  []AttemptEvent
	failovers []string // "target: verdict"
	skips     []Skip
	keys      []KeyEvent
	// attempted, probed and keyed receive each event as it comes.
	attempted chan AttemptEvent
	probed    chan aierr.Verdict
	keyed     chan KeyEvent
	skipped   chan Skip
}

func newEvents() *events {
	return &events{attempted: make(chan AttemptEvent, 256), probed: make(chan aierr.Verdict, 16),
		keyed: make(chan KeyEvent, 16), skipped: make(chan Skip, 256)}
}

// hook installs the recorder in s.
func (e *events) hook(s *Spec) {
	s.OnAttempt = func(ev AttemptEvent) {
		e.mu.Lock()
		e.attempts = append(e.attempts, ev)
		e.mu.Unlock()
		e.attempted <- ev
	}
	s.OnFailover = func(t *Target, v aierr.Verdict) {
		e.mu.Lock()
		e.failovers = append(e.failovers, t.Name+": "+describe(v))
		e.mu.Unlock()
	}
	s.OnSkip = func(t *Target, reason string) {
		e.mu.Lock()
		e.skips = append(e.skips, Skip{Target: t.Name, Reason: reason})
		e.mu.Unlock()
		e.skipped <- Skip{Target: t.Name, Reason: reason}
	}
	s.OnProbe = func(t *Target, v aierr.Verdict) { e.probed <- v }
	s.OnKeyDisabled = func(k KeyEvent) {
		e.mu.Lock()
		e.keys = append(e.keys, k)
		e.mu.Unlock()
		e.keyed <- k
	}
}

// attemptsSoFar returns the attempts reported so far.
func (e *events) attemptsSoFar() []AttemptEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]AttemptEvent(nil), e.attempts...)
}

func (e *events) failoversSoFar() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.failovers...)
}

// build makes a router on clk from aliases and providers, with ev's hooks.
func build(t *testing.T, clk *clocktest.Clock, ev *events, aliases []AliasSpec, provs ...ProviderSpec) *Router {
	t.Helper()
	s := Spec{Providers: provs, Aliases: aliases, Clock: clk, Rand: func() float64 { return 0 }}
	if ev != nil {
		ev.hook(&s)
	}
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// two returns an alias "smart" over a/m then b/m with the given settings
// (Name and Targets filled in), and the providers a and b.
func two(as AliasSpec, a, b *stub) ([]AliasSpec, []ProviderSpec) {
	as.Name = "smart"
	if as.Retry.Rand == nil {
		as.Retry.Rand = noJitter // backoffs of 0: no wait unless a test asks
	}
	as.Targets = []TargetSpec{{Provider: "a", Model: "m"}, {Provider: "b", Model: "m"}}
	return []AliasSpec{as}, []ProviderSpec{{Name: "a", Upstream: a}, {Name: "b", Upstream: b}}
}

// noJitter makes every retry backoff 0.
func noJitter() float64 { return 0 }

// target returns r's target name.
func target(t *testing.T, r *Router, name string) *Target {
	t.Helper()
	for _, x := range r.Targets() {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("no target %q", name)
	return nil
}

// start begins a walk on alias for req (a plain chat request if nil).
func start(t *testing.T, r *Router, alias string, req *Request) *Walk {
	t.Helper()
	a, ok := r.Lookup(alias)
	if !ok {
		t.Fatalf("no alias %q", alias)
	}
	if req == nil {
		req = request(alias)
	}
	return r.Start(a, req)
}

// streamRequest is a streamed chat request whose Prepare reads the first
// chunk and reports it as progress, as the gateway does with the first
// content event.
func streamRequest(model string) *Request {
	req := request(model)
	req.Stream = true
	req.Prepare = PrepareFunc(func(a *Attempt) aierr.Verdict {
		buf := make([]byte, 256)
		n, err := a.Resp.Body.Read(buf)
		if n == 0 && err != nil {
			if cut := a.Cut(); cut != nil {
				return *cut
			}
			return aierr.ClassifyError(err)
		}
		a.Held = string(buf[:n])
		a.Progress()
		return aierr.Verdict{Kind: aierr.Success}
	})
	return req
}

// result is what a Next call returned.
type result struct {
	a   *Attempt
	err error
}

// goNext runs w.Next on its own goroutine, for tests that move the clock
// while it waits.
func goNext(ctx context.Context, w *Walk) <-chan result {
	ch := make(chan result, 1)
	go func() {
		a, err := w.Next(ctx)
		ch <- result{a, err}
	}()
	return ch
}

// await returns the Next call's result. The real-time bound only turns a
// walk stuck on the fake clock into a failure instead of a hung test.
func await(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return")
		return result{}
	}
}

// served checks that a Next result is a delivered answer from target name.
func served(t *testing.T, res result, name string) *Attempt {
	t.Helper()
	if res.err != nil {
		t.Fatalf("Next: got error %v; want an answer from %s", res.err, name)
	}
	if res.a == nil || res.a.Final {
		t.Fatalf("Next: got %+v; want a 2xx from %s", res.a, name)
	}
	if got := res.a.Target.Name; got != name {
		t.Fatalf("served by %s; want %s", got, name)
	}
	return res.a
}

// totals returns the breaker totals of r's target name.
func totals(t *testing.T, r *Router, name string) (failed, succeeded, ignored uint64) {
	t.Helper()
	tt := target(t, r, name).Breaker().Snapshot().Totals
	return tt.Failed, tt.Succeeded, tt.Ignored
}

// nextEvent returns the next attempt event, bounded in real time like await.
func nextEvent(t *testing.T, ev *events) AttemptEvent {
	t.Helper()
	return recv(t, ev.attempted, "attempt was reported")
}

// settle returns the Next call's result. A walk that should have answered
// without waiting but sleeps on the fake clock instead is woken by moving
// the clock on by unstick (after a real-time grace period, only ever spent
// when the walk is wrong), and stuck reports that it had to be.
func settle(t *testing.T, clk *clocktest.Clock, ch <-chan result, unstick time.Duration) (res result, stuck bool) {
	t.Helper()
	select {
	case r := <-ch:
		return r, false
	case <-time.After(time.Second):
	}
	clk.Advance(unstick)
	return await(t, ch), true
}

// prober is a stub upstream that is also a Prober: its probes play the
// probes stub's answers.
type prober struct {
	*stub
	probes *stub
}

func (p prober) Probe(ctx context.Context, key string) (*http.Response, error) {
	return p.probes.Send(ctx, &Call{Key: key})
}

// signalled answers code at once with a body whose Close is told on closed:
// the moment the router has finished with the answer.
func signalled(code int, closed chan<- struct{}) answer {
	return func(ctx context.Context, c *Call) (*http.Response, error) {
		resp := response(code)
		resp.Body = closeSignal{resp.Body, closed}
		return resp, nil
	}
}

type closeSignal struct {
	io.ReadCloser
	closed chan<- struct{}
}

func (c closeSignal) Close() error {
	err := c.ReadCloser.Close()
	c.closed <- struct{}{}
	return err
}

// recv returns the next value from ch, bounded in real time like await.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}
