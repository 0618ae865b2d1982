package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// fake is an Upstream answering from a script: status codes in turn (the
// last repeats); 0 means a transport error.
type fake struct {
	mu     sync.Mutex
	script []int
	header http.Header
	calls  []*Call
}

func (f *fake) Send(ctx context.Context, c *Call) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	code := f.script[min(len(f.calls), len(f.script))-1]
	if code == 0 {
		return nil, errors.New("dial tcp: connection refused")
	}
	body := `{"choices":[{"message":{"content":"ok"}}]}`
	if code >= 400 {
		body = fmt.Sprintf(`{"error":{"message":"e","type":"t%d","code":null}}`, code)
		switch code {
		case 400:
			body = `{"error":{"message":"bad","type":"invalid_request_error"}}`
		case 401:
			body = `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`
		}
	}
	h := f.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body))}, nil
}

func (f *fake) n() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func newRouter(t *testing.T, clk *clocktest.Clock, aliases []AliasSpec, provs ...ProviderSpec) *Router {
	t.Helper()
	r, err := New(Spec{Providers: provs, Aliases: aliases, Clock: clk, Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func request(model string) *Request {
	body := []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`)
	return &Request{Path: "/chat/completions", Body: body, Fields: aireq.Scan(body)}
}

// walkAll runs a walk to its end, succeeding delivered attempts.
func walkAll(t *testing.T, r *Router, model string) (*Attempt, *Walk, error) {
	t.Helper()
	a, ok := r.Lookup(model)
	if !ok {
		t.Fatalf("no alias %q", model)
	}
	w := r.Start(a, request(model))
	at, err := w.Next(t.Context())
	if at != nil && !at.Final {
		at.Succeed()
	}
	return at, w, err
}

func ladder(targets ...TargetSpec) []AliasSpec {
	return []AliasSpec{{Name: "smart", Targets: targets, Breaker: breaker.Config{ConsecutiveFailures: 2, OpenDuration: 10 * time.Second},
		Retry: retry.Policy{Attempts: 1}}}
}

func TestFallbackFailsOverAndRewritesModel(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := &fake{script: []int{503}}, &fake{script: []int{200}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "a", Model: "m1"}, TargetSpec{Provider: "b", Model: "m2"}),
		ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	at, w, err := walkAll(t, r, "smart")
	if err != nil || at.Target.Name != "b/m2" {
		t.Fatalf("served by %v, %v", at, err)
	}
	if !strings.Contains(string(b.calls[0].Body), `"model":"m2"`) || !strings.Contains(string(a.calls[0].Body), `"model":"m1"`) {
		t.Fatalf("bodies %s / %s", a.calls[0].Body, b.calls[0].Body)
	}
	if w.Attempts != 2 || len(w.Skips) != 1 || w.Skips[0].Reason != "503 outage (t503)" {
		t.Fatalf("attempts %d skips %+v", w.Attempts, w.Skips)
	}
	// the second failure opens a's breaker; then a is skipped without a call
	walkAll(t, r, "smart")
	walkAll(t, r, "smart")
	if a.n() != 2 {
		t.Fatalf("a called %d times; want 2, then its breaker opened", a.n())
	}
}

func TestNoTargetErrorNamesEachAndRetryAfter(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := &fake{script: []int{503}}, &fake{script: []int{0}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "a", Model: "m"}, TargetSpec{Provider: "b", Model: "m"}),
		ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	// The first walk's failures open nothing, and no upstream said when to
	// come back: the breakers' open period is the wait all the same. The
	// second's open both breakers: their open period is the wait, though
	// nothing was skipped.
	for i, want := range []time.Duration{10 * time.Second, 10 * time.Second} {
		_, _, err := walkAll(t, r, "smart")
		var nt *NoTargetError
		if !errors.As(err, &nt) || nt.RetryAfter != want {
			t.Fatalf("walk %d: %v (%+v); want a RetryAfter of %v", i+1, err, nt, want)
		}
	}
	clk.Advance(4 * time.Second)
	_, _, err := walkAll(t, r, "smart")
	var nt *NoTargetError
	if !errors.As(err, &nt) {
		t.Fatalf("err %v", err)
	}
	if nt.RetryAfter != 6*time.Second || len(nt.Skips) != 2 || nt.Skips[0].Reason != "breaker open" {
		t.Fatalf("%+v", nt)
	}
	if got := nt.Error(); got != "no target of model smart could answer: a/m breaker open; b/m breaker open" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestClientErrorIsFinal(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := &fake{script: []int{400}}, &fake{script: []int{200}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "a", Model: "m"}, TargetSpec{Provider: "b", Model: "m"}),
		ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	at, _, err := walkAll(t, r, "smart")
	if err != nil || !at.Final || at.Resp.StatusCode != 400 || b.n() != 0 {
		t.Fatalf("%+v %v, b called %d", at, err, b.n())
	}
	body, _ := io.ReadAll(at.Resp.Body)
	if !strings.Contains(string(body), "invalid_request_error") {
		t.Fatalf("body %s", body)
	}
}

// An auth failure on one key takes that key out; the same target goes on
// with the next key.
func TestAuthFailureRotatesKeys(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a := &fake{script: []int{401, 200}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "a", Model: "m"}),
		ProviderSpec{Name: "a", Upstream: a, Keys: []string{"k1", "k2"}})
	at, _, err := walkAll(t, r, "smart")
	if err != nil || at.Final {
		t.Fatalf("%v %v", at, err)
	}
	if a.calls[0].Key == a.calls[1].Key {
		t.Fatalf("same key twice: %q", a.calls[0].Key)
	}
	bad := a.calls[0].Key
	for range 4 {
		walkAll(t, r, "smart")
	}
	for _, c := range a.calls[2:] {
		if c.Key == bad {
			t.Fatal("the refused key came back before its cooldown")
		}
	}
	if s := r.Targets()[0].Breaker().Snapshot(); s.Totals.Failed != 0 {
		t.Fatalf("auth counted against the breaker: %+v", s.Totals)
	}
}

// A throttle with a long wait and a single key fails over; the breaker is
// untouched and the key rests.
func TestThrottleFailsOverWithoutTripping(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a := &fake{script: []int{429}, header: http.Header{"Retry-After": {"30"}}}
	b := &fake{script: []int{200}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "a", Model: "m"}, TargetSpec{Provider: "b", Model: "m"}),
		ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	for range 3 {
		at, _, err := walkAll(t, r, "smart")
		if err != nil || at.Target.Provider != "b" {
			t.Fatalf("%v %v", at, err)
		}
	}
	if a.n() != 1 {
		t.Fatalf("throttled key called %d times within its wait", a.n())
	}
	if s := r.Targets()[0].Breaker().State(); s != breaker.StateClosed {
		t.Fatalf("a throttle tripped the breaker: %v", s)
	}
}

// A stream that fails before commit is reported with Fail and the walk goes
// on to the next target.
func TestFailBeforeCommitContinues(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := &fake{script: []int{200}}, &fake{script: []int{200}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "a", Model: "m"}, TargetSpec{Provider: "b", Model: "m"}),
		ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	al, _ := r.Lookup("smart")
	w := r.Start(al, request("smart"))
	at, err := w.Next(t.Context())
	if err != nil || at.Target.Provider != "a" {
		t.Fatal(at, err)
	}
	at.Fail(aierr.ClassifyError(aierr.ErrFirstByteTimeout))
	at2, err := w.Next(t.Context())
	if err != nil || at2.Target.Provider != "b" {
		t.Fatal(at2, err)
	}
	at2.Succeed()
	if len(w.Skips) != 1 || !strings.HasPrefix(w.Skips[0].Reason, "outage") {
		t.Fatalf("skips %+v: want the stream's failure recorded", w.Skips)
	}
	if s := r.Targets()[0].Breaker().Snapshot(); s.Totals.Failed != 1 {
		t.Fatalf("pre-commit failure not counted: %+v", s.Totals)
	}
}

func TestDirectProviderModel(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a := &fake{script: []int{200}}
	r := newRouter(t, clk, nil, ProviderSpec{Name: "openai", Upstream: a})
	at, _, err := walkAll(t, r, "openai/gpt-4.1-mini")
	if err != nil || at.Target.Name != "openai/gpt-4.1-mini" || a.calls[0].Model != "gpt-4.1-mini" {
		t.Fatalf("%v %v", at, err)
	}
	if _, ok := r.Lookup("nope/x"); ok {
		t.Fatal("unknown provider resolved")
	}
	if _, ok := r.Lookup("smart"); ok {
		t.Fatal("unknown alias resolved")
	}
	if len(r.Aliases()) != 0 {
		t.Fatal("direct aliases listed as configured")
	}
}

func TestStrategies(t *testing.T) {
	clk := clocktest.New(time.Time{})
	provs := []ProviderSpec{{Name: "a", Upstream: &fake{script: []int{200}}}, {Name: "b", Upstream: &fake{script: []int{200}}}, {Name: "c", Upstream: &fake{script: []int{200}}}}
	targets := []TargetSpec{
		{Provider: "a", Model: "m", Weight: 1, Price: Price{Input: 15, Output: 75}},
		{Provider: "b", Model: "m", Weight: 3, Price: Price{Input: 2, Output: 8}},
		{Provider: "c", Model: "m", Weight: 0, Price: Price{Input: 0.3, Output: 1}},
	}
	r, err := New(Spec{Providers: provs, Clock: clk, Aliases: []AliasSpec{
		{Name: "cheap", Strategy: CheapestHealthy, Targets: targets},
		{Name: "weighted", Strategy: Weighted, Targets: targets},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cheap, _ := r.Lookup("cheap")
	if got := names(cheap.order(nil)); got != "c/m,b/m,a/m" {
		t.Fatalf("cheapest order %s", got)
	}
	cheap.Targets[2].breaker.ForceOpen()
	if got := names(cheap.order(nil)); got != "b/m,a/m,c/m" {
		t.Fatalf("cheapest order with c open: %s", got)
	}
	wa, _ := r.Lookup("weighted")
	first := map[string]int{}
	for i := range 5000 {
		x := float64(i) / 5000
		first[wa.order(func() float64 { return x })[0].Name]++
	}
	// weights 1:3:1 (0 counts as 1)
	if first["a/m"] != 1000 || first["b/m"] != 3000 || first["c/m"] != 1000 {
		t.Fatalf("weighted first picks %v", first)
	}
}

func names(ts []*Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Name)
	}
	return strings.Join(s, ",")
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2, Output: 8, CachedInput: 0.5}
	if got := p.Cost(1000, 200, 500); got != (800*2+200*0.5+500*8)/1e6 {
		t.Fatalf("cost %v", got)
	}
}

// The last target of the ladder is retried with backoff on an outage.
func TestLastTargetRetried(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a := &fake{script: []int{503, 502, 200}}
	r := newRouter(t, clk, []AliasSpec{{Name: "smart", Targets: []TargetSpec{{Provider: "a", Model: "m"}},
		Breaker: breaker.Config{ConsecutiveFailures: 5}, Retry: retry.Policy{Attempts: 3, Base: time.Second}}},
		ProviderSpec{Name: "a", Upstream: a})
	done := make(chan error)
	go func() {
		_, _, err := walkAll(t, r, "smart")
		done <- err
	}()
	for range 2 {
		clk.WaitForTimers(1)
		clk.AdvanceToNext()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a.n() != 3 {
		t.Fatalf("%d calls; want 3", a.n())
	}
	if k1, k2 := a.calls[0].IdempotencyKey, a.calls[1].IdempotencyKey; k1 == "" || k1 != k2 {
		t.Fatalf("outage retries should keep the idempotency key: %q %q", k1, k2)
	}
}

// A router built to replace another takes over the providers and targets
// whose settings did not change, with their breakers and keys as they are,
// and starts the others fresh.
func TestKeepTakesOverUnchangedTargets(t *testing.T) {
	clk := clocktest.New(time.Unix(0, 0))
	p1, p2 := &fake{script: []int{200}}, &fake{script: []int{200}}
	provs := []ProviderSpec{
		{Name: "p1", Upstream: p1, Keys: []string{"a", "b"}, Fingerprint: "p1-v1"},
		{Name: "p2", Upstream: p2, Fingerprint: "p2-v1"},
	}
	aliases := []AliasSpec{{Name: "m", Fingerprint: "br-v1",
		Targets: []TargetSpec{{Provider: "p1", Model: "x"}, {Provider: "p2", Model: "y"}}}}
	old, err := New(Spec{Providers: provs, Aliases: aliases, Clock: clk, Direct: AliasSpec{Fingerprint: "direct-v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := old.Lookup("p1/z"); !ok {
		t.Fatal("no direct alias")
	}
	byName := func(r *Router) map[string]*Target {
		m := map[string]*Target{}
		for _, t := range r.Targets() {
			m[t.Name] = t
		}
		return m
	}
	was := byName(old)
	was["p1/x"].Breaker().ForceOpen()
	if err := old.SetKeyEnabled("p1#1", false); err != nil {
		t.Fatal(err)
	}

	// p2's settings change; the alias gains a target.
	provs[1].Fingerprint = "p2-v2"
	aliases[0].Targets = append(aliases[0].Targets, TargetSpec{Provider: "p1", Model: "w"})
	r, err := New(Spec{Providers: provs, Aliases: aliases, Clock: clk, Keep: old, Direct: AliasSpec{Fingerprint: "direct-v1"}})
	if err != nil {
		t.Fatal(err)
	}
	now := byName(r)
	if now["p1/x"] != was["p1/x"] || now["p1/x"].Breaker().State() != breaker.StateForcedOpen {
		t.Error("p1/x was not taken over with its forced-open breaker")
	}
	if now["p1/z"] != was["p1/z"] {
		t.Error("the direct target p1/z was not taken over")
	}
	if now["p2/y"] == was["p2/y"] {
		t.Error("p2/y was taken over though its provider changed")
	}
	if keys := r.Keys(); keys[1].ID != "p1#1" || keys[1].State != "disabled" {
		t.Errorf("keys %+v: p1#1 should still be disabled", keys)
	}
	u := r.ReuseFrom(old)
	if fmt.Sprint(u.Kept) != "[p1/x p1/z]" || fmt.Sprint(u.Rebuilt) != "[p2/y]" || len(u.Removed) != 0 || u.Removed == nil || fmt.Sprint(u.Added) != "[p1/w]" {
		t.Errorf("reuse %+v", u)
	}
	if u := old.ReuseFrom(r); fmt.Sprint(u.Removed) != "[p1/w]" || u.Added == nil || len(u.Added) != 0 {
		t.Errorf("the other way: %+v; want p1/w removed, nothing added", u)
	}

	// Changed breaker settings rebuild every target of the alias.
	aliases[0].Fingerprint = "br-v2"
	r2, err := New(Spec{Providers: provs, Aliases: aliases, Clock: clk, Keep: r, Direct: AliasSpec{Fingerprint: "direct-v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if u := r2.ReuseFrom(r); fmt.Sprint(u.Kept) != "[p1/z]" || fmt.Sprint(u.Rebuilt) != "[p1/w p1/x p2/y]" {
		t.Errorf("after a breaker change: %+v", u)
	}
	// A provider that is gone takes its targets with it.
	r3, err := New(Spec{Providers: provs[1:], Aliases: []AliasSpec{{Name: "m", Fingerprint: "br-v2",
		Targets: []TargetSpec{{Provider: "p2", Model: "y"}}}}, Clock: clk, Keep: r2})
	if err != nil {
		t.Fatal(err)
	}
	if u := r3.ReuseFrom(r2); fmt.Sprint(u.Kept) != "[p2/y]" || fmt.Sprint(u.Removed) != "[p1/w p1/x p1/z]" {
		t.Errorf("after removing p1: %+v", u)
	}
}

// A client's own Idempotency-Key reaches the upstream tagged with the
// client, so that two clients that chose the same key never share an
// upstream's stored answer; one too long to send on goes as its hash; and
// a walk without one draws a random key.
func TestUpstreamIdempotencyKeysAreTheClients(t *testing.T) {
	a := newStub(status(200))
	r := build(t, clocktest.New(time.Time{}), nil, []AliasSpec{{Name: "solo", Targets: []TargetSpec{{Provider: "a", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: a})
	key := func(flow, idem string) string {
		req := request("solo")
		req.Flow, req.IdempotencyKey = flow, idem
		return start(t, r, "solo", req).idempotencyKey()
	}
	alice, bob := key("alice", "order-42"), key("bob", "order-42")
	if !strings.HasPrefix(alice, "order-42-") || alice == bob || alice != key("alice", "order-42") {
		t.Errorf("keys %q (alice) and %q (bob); want the client's key, tagged apart per client, and the same for the same client", alice, bob)
	}
	if open := key("", "order-42"); open != "order-42-0" {
		t.Errorf("without clients: %q; want order-42-0", open)
	}
	long := strings.Repeat("k", maxClientIdem+1)
	if got := key("alice", long); len(got) > maxClientIdem || strings.Contains(got, "kkk") || got != key("alice", long) || got == key("bob", long) {
		t.Errorf("a %d-byte key went as %q; want its per-client hash", len(long), got)
	}
	if r1, r2 := key("alice", ""), key("alice", ""); r1 == r2 || len(r1) != 26 {
		t.Errorf("random keys %q, %q; want 24 hex digits and a generation, new each walk", r1, r2)
	}
}
