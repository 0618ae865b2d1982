package router

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/latency"
	"github.com/fuseboxhq/fusebox/limit"
	"github.com/fuseboxhq/fusebox/retry"
)

// Spec is everything a Router is built from; the gateway makes it from the
// configuration.
type Spec struct {
	Providers []ProviderSpec
	Aliases   []AliasSpec
	// Direct is the alias settings for a request naming "provider/model"
	// directly (its Name and Targets are ignored).
	Direct AliasSpec
	// MaxDirect bounds the "provider/model" targets made for such
	// requests, so that a client naming models at random cannot grow the
	// router (breakers, metrics series) without end: past it, the one
	// least recently used that no configured alias lists and no attempt
	// is using is removed. 0: 256.
	MaxDirect int
	// OnRemove, if set, is told of each target removed that way.
	OnRemove func(*Target)
	// OnKeyDisabled, if set, is told when a key leaves the rotation after
	// an auth or quota refusal, so the operator hears of it.
	OnKeyDisabled func(KeyEvent)
	// OnAttempt, if set, is told of every finished upstream attempt, and
	// OnSkip of every target passed over without one. They run on the
	// request's goroutine, or on a watchdog's or a hedged race's: keep
	// them cheap and safe for concurrent use.
	OnAttempt func(AttemptEvent)
	OnSkip    func(target *Target, reason string)
	// OnFailover, if set, is told when an attempt on target failed and the
	// walk went on to the next target.
	OnFailover func(target *Target, v aierr.Verdict)
	// OnTransition, if set, is told of every breaker state change.
	OnTransition func(breaker.Transition)
	// OnProbe, if set, is told of every background probe's outcome.
	OnProbe func(target *Target, v aierr.Verdict)
	// Share, if set, is given each new target's breaker settings before
	// the breaker is built (to hook them, as the fleet does to share the
	// breaker with other replicas) and returns a function to call with
	// the breaker once built.
	Share func(target string, bc *breaker.Config) func(*breaker.Breaker)
	// SharePacer, if set, is given each new target's pacer (its rpm/tpm)
	// and the limits it was built with, as the fleet does to pace it at
	// the replica's share.
	SharePacer func(target string, p *limit.Pacer, l limit.Limits)
	// Sessions, if set, shares the targets that served sessions with
	// other processes: a session this router has not seen is looked up
	// there, and every session served is told to it.
	Sessions SessionStore
	Clock    clock.Clock
	// Rand returns uniform numbers in [0, 1) for weighted choice. nil:
	// math/rand/v2.
	Rand func() float64
	// Keep, when set, is the router this one replaces (a configuration
	// reload). A provider whose Fingerprint is unchanged is taken over
	// whole: its upstream with its open connections, its keys with their
	// state. A target of such a provider whose alias's Fingerprint is
	// unchanged is taken over too: its breaker, limits and health carry
	// on. Everything else starts fresh. Keep must share this Spec's Clock.
	Keep *Router
}

// ProviderSpec is one upstream and its keys.
type ProviderSpec struct {
	Name     string
	Upstream Upstream
	// Keys rotate; none means one empty key (a host with no auth).
	Keys       []string
	Limits     Limits
	Classifier *aierr.Classifier
	// Price is the price of a "provider/model" request to this provider
	// (configured aliases price their targets themselves).
	Price Price
	// AuthRest is how long a key refused with Auth or Quota stays out.
	// 0: 5 minutes.
	AuthRest time.Duration
	// AuthProbe, if set, checks a refused key this often with a request
	// that costs no tokens (the upstream must be a Prober), and puts it
	// back in rotation when it works.
	AuthProbe time.Duration
	// Fingerprint identifies the provider's settings for Spec.Keep; ""
	// never matches.
	Fingerprint string
}

// Limits pace each target of a provider, with bursts of
// RequestBurstWindow's and TokenBurstWindow's worth. Zero fields are "no
// limit".
type Limits struct {
	RequestsPerMinute, TokensPerMinute float64
	MaxInFlight                        int
	// MaxWait bounds a wait for a limit; past it the target is skipped.
	// 0: 1 s.
	MaxWait time.Duration
}

// AliasSpec is one model alias.
type AliasSpec struct {
	Name     string
	Strategy Strategy
	Targets  []TargetSpec
	// Breaker is the settings of each target's breaker (the first alias to
	// list a target sets them).
	Breaker breaker.Config
	Retry   retry.Policy
	Budget  retry.BudgetConfig
	// SameTargetWait bounds the same-target retry: a transient failure
	// (one 5xx, a reset) on a target whose breaker is closed, or a
	// throttle whose wait is at most this, is tried once more on the same
	// target before the walk fails over. 0: fail over at once.
	SameTargetWait time.Duration
	// FailoverOn lists client-error sub-kinds that go to the next target.
	FailoverOn []aierr.SubKind
	// Budgets are the attempt budgets of targets whose TargetSpec leaves
	// them zero.
	Budgets
	// Deadline bounds a whole request, every attempt and wait included.
	// 0: none but the client's.
	Deadline time.Duration
	// Hedge, when After or AfterQuantile is set, sends the request to the
	// next target too when the first has not produced its first content
	// after the hedge delay; the first to answer wins.
	Hedge Hedge
	// BackgroundProbe: when a target's breaker opens, a cheap request
	// (max_tokens 1) is sent to it as the open period ends, off the
	// client path, so recovery is seen without a client paying for it.
	BackgroundProbe bool
	// Continue: a stream that breaks after part of its answer reached the
	// client is continued on the next target (the gateway's
	// continue_on_failure).
	Continue bool
	// Fingerprint identifies the Breaker settings for Spec.Keep; ""
	// never matches.
	Fingerprint string
}

// TargetSpec is one rung of an alias's ladder.
type TargetSpec struct {
	Provider, Model string
	Weight          float64
	Price           Price
	// Budgets are this rung's attempt budgets; a zero field takes the
	// alias's.
	Budgets
	// Keys, when set, are the API keys this target uses instead of its
	// provider's (the first alias to list the target sets them).
	Keys []string
}

// Budgets bound one upstream attempt, each counted by a watchdog on the
// router's clock from the moment the request is sent. 0: no bound.
type Budgets struct {
	// TTFB bounds the wait for the response headers and the first
	// content: the first byte of a plain answer, the first event that
	// carries content of a stream (Request.Prepare tells).
	TTFB time.Duration
	// Idle bounds the silence between two chunks once content flows.
	Idle time.Duration
	// Total bounds the whole attempt.
	Total time.Duration
	// AutoTTFB and AutoIdle make those budgets follow the target's own
	// recent distribution, max(1s, 3 × p99), never above TTFB and Idle.
	AutoTTFB, AutoIdle bool
	// SuspectAfter: when every stream on the target whose content has
	// flowed this long has then been silent this long, new requests skip
	// it while a later target exists (but for one now and then, to see it
	// recover); the target is not tripped by suspicion alone. AutoSuspect
	// makes it follow the target's own gaps between chunks: 4 × their
	// recent p99, at least 250ms, never above SuspectAfter.
	SuspectAfter time.Duration
	AutoSuspect  bool
	// MinRate is the least rate, in content events per second (a lower
	// bound on tokens per second: an event carries at least one token),
	// at which a stream must deliver once its first content has come: it
	// may fall behind that pace by rateSlack, and its whole answer may
	// take at most rateSlack + max_tokens / MinRate after its first
	// content. A stream that falls behind is cut as too slow, an outage
	// of its target like a stall. AutoRate raises the floor to a third
	// of the target's own recent pace (its slower streams', p90), once it
	// has autoMinSamples of them, never below MinRate. 0 with AutoRate
	// unset: no floor.
	MinRate  float64
	AutoRate bool
	// CommitAfter holds a stream's first content events until this many
	// have come (or the answer ended), each within the suspicion
	// threshold of the one before (the idle budget without one), while
	// a later target could take the request: a stream that stalls,
	// drips or breaks before then fails over as if it had not begun,
	// for the price of the time those events take. 0 or 1: the first
	// content commits.
	CommitAfter int
}

// hedgeFloor is the hedges per second an alias may send whatever its
// traffic (one in a 10 s window), so that a quiet alias can hedge at all.
const hedgeFloor = 0.1

// Hedge configures hedged requests.
type Hedge struct {
	// After is a fixed hedge delay; AfterQuantile (in (0, 1)) takes the
	// delay from the first target's recent times to first content at
	// that quantile instead (until it has enough of them, After, or 1 s).
	After         time.Duration
	AfterQuantile float64
	// Max is how many hedges one request may send. 0: 1.
	Max int
	// Budget caps hedges at this fraction of the alias's recent requests.
	// 0: 0.1.
	Budget float64
}

// KeyEvent reports a key taken out of the rotation, or put back by a probe.
type KeyEvent struct {
	// Back is set when a probe found a refused key working again; the
	// other fields but Key are then zero.
	Back bool
	// Key is the key's ID ("provider#index"), never the key itself.
	Key    string
	Target string
	// Verdict is the refusal: aierr.Auth or aierr.Quota, with the
	// provider's code and message.
	Verdict aierr.Verdict
	// For is how long the key stays out.
	For time.Duration
}

// AttemptEvent reports one finished upstream attempt.
type AttemptEvent struct {
	Alias    string
	Target   *Target
	Verdict  aierr.Verdict
	Duration time.Duration
	// Retry is true for an attempt that repeated the one before it on
	// the same target; Hedge for one sent as a hedge.
	Retry, Hedge bool
	// Queued is how long the attempt waited for the target's rate and
	// concurrency limits before it was sent.
	Queued time.Duration
}

// Router routes requests. It is safe for concurrent use.
type Router struct {
	clk          clock.Clock
	sw           clock.Stopwatch
	rand         func() float64
	onKey        func(KeyEvent)
	onAttempt    func(AttemptEvent)
	onSkip       func(*Target, string)
	onFailover   func(*Target, aierr.Verdict)
	onTransition func(breaker.Transition)
	onProbe      func(*Target, aierr.Verdict)
	providers    map[string]*provider
	direct       AliasSpec
	maxDirect    int
	onRemove     func(*Target)
	share        func(string, *breaker.Config) func(*breaker.Breaker)
	sharePacer   func(string, *limit.Pacer, limit.Limits)
	sticky       *sticky
	keep         *Router // the router replaced, while New runs

	// mu guards targets and aliases, which grow when a request names a
	// provider/model directly.
	mu      sync.RWMutex
	targets map[string]*Target
	aliases map[string]*Alias
}

// Alias is a model name clients use, with its ladder of targets.
type Alias struct {
	Name     string
	Strategy Strategy
	Targets  []*Target
	weights  []float64
	prices   []Price
	rungs    []Budgets // per target
	spec     AliasSpec
	budget   *retry.Budget
	hedges   *retry.Budget // nil: no hedging
	// Direct is true for an alias made for a "provider/model" request.
	Direct bool
	// used is when a direct alias was last looked up (stopwatch ns).
	used atomic.Int64
}

// Price returns the price of the alias's i-th target.
func (a *Alias) Price(t *Target) Price {
	for i, x := range a.Targets {
		if x == t {
			return a.prices[i]
		}
	}
	return Price{}
}

// Continues reports whether the alias's broken streams are continued on
// the next target.
func (a *Alias) Continues() bool { return a.spec.Continue }

// Deadline returns the alias's bound on a whole request; 0 means none.
func (a *Alias) Deadline() time.Duration { return a.spec.Deadline }

// New builds a Router. It fails on an alias naming an unknown provider or on
// settings the library packages refuse.
func New(s Spec) (*Router, error) {
	r := &Router{
		clk:          clock.Or(s.Clock),
		sw:           clock.NewStopwatch(s.Clock),
		rand:         s.Rand,
		onKey:        s.OnKeyDisabled,
		onAttempt:    s.OnAttempt,
		onSkip:       s.OnSkip,
		onFailover:   s.OnFailover,
		onTransition: s.OnTransition,
		onProbe:      s.OnProbe,
		providers:    map[string]*provider{},
		direct:       s.Direct,
		maxDirect:    cmp.Or(s.MaxDirect, 256),
		onRemove:     s.OnRemove,
		share:        s.Share,
		sharePacer:   s.SharePacer,
		sticky:       newSticky(s.Sessions),
		targets:      map[string]*Target{},
		aliases:      map[string]*Alias{},
	}
	if r.rand == nil {
		r.rand = rand.Float64
	}
	if s.Keep != nil {
		// Key and sticky times are kept on the stopwatch; a provider
		// taken over keeps its times only on the same one.
		r.sw, r.keep = s.Keep.sw, s.Keep
		defer func() { r.keep = nil }()
	}
	for _, p := range s.Providers {
		if old := r.keptProvider(p); old != nil {
			r.providers[p.Name] = old
			continue
		}
		keys := p.Keys
		if len(keys) == 0 {
			keys = []string{""}
		}
		pr := &provider{name: p.Name, up: p.Upstream, classifier: p.Classifier, limits: p.Limits, fp: p.Fingerprint,
			authRest: cmp.Or(p.AuthRest, 5*time.Minute), authProbe: p.AuthProbe, price: p.Price}
		if pr.classifier == nil {
			pr.classifier = &aierr.Classifier{}
		}
		for i, k := range keys {
			pr.keys = append(pr.keys, &Key{secret: k, ID: fmt.Sprintf("%s#%d", p.Name, i), idx: i})
		}
		r.providers[p.Name] = pr
	}
	for _, as := range s.Aliases {
		if _, err := r.addAlias(as, false); err != nil {
			return nil, err
		}
	}
	if s.Keep != nil {
		r.keepDirect()
	}
	return r, nil
}

// keepDirect carries over the replaced router's "provider/model" aliases
// whose provider is still there, so their targets can be taken over.
func (r *Router) keepDirect() {
	r.keep.mu.RLock()
	var old []*Alias
	for _, a := range r.keep.aliases {
		if a.Direct {
			old = append(old, a)
		}
	}
	r.keep.mu.RUnlock()
	slices.SortFunc(old, func(a, b *Alias) int { return cmp.Compare(b.used.Load(), a.used.Load()) })
	for _, a := range old[:min(len(old), r.maxDirect)] { // the most recently used
		t := a.Targets[0]
		if _, taken := r.aliases[a.Name]; taken || r.providers[t.Provider] == nil {
			continue
		}
		spec := r.direct
		spec.Name = a.Name
		spec.Targets = []TargetSpec{{Provider: t.Provider, Model: t.Model, Price: r.providers[t.Provider].price}}
		if n, err := r.addAlias(spec, true); err == nil {
			n.used.Store(a.used.Load())
		}
	}
}

// keptProvider returns the replaced router's provider p when its settings
// are unchanged.
func (r *Router) keptProvider(p ProviderSpec) *provider {
	if r.keep == nil || p.Fingerprint == "" {
		return nil
	}
	old, ok := r.keep.providers[p.Name]
	if !ok || old.fp != p.Fingerprint {
		return nil
	}
	return old
}

// keptTarget returns the replaced router's target name when its provider
// was taken over and its breaker settings are unchanged.
func (r *Router) keptTarget(name, prov, fp string) *Target {
	if r.keep == nil || fp == "" {
		return nil
	}
	r.keep.mu.RLock()
	old, ok := r.keep.targets[name]
	r.keep.mu.RUnlock()
	if !ok || old.fp != fp || old.prov != r.providers[prov] {
		return nil
	}
	return old
}

// Reuse describes what a router built with Spec.Keep took over. Each
// list is empty, never nil, when nothing is in it.
type Reuse struct {
	// Added are the targets new in this router; Kept those whose breaker,
	// limits and health carried on; Rebuilt those that started fresh;
	// Removed those of the old router that are gone.
	Added   []string `json:"added"`
	Kept    []string `json:"kept"`
	Rebuilt []string `json:"rebuilt"`
	Removed []string `json:"removed"`
}

// ReuseFrom compares r with the router it replaced.
func (r *Router) ReuseFrom(old *Router) Reuse {
	u := Reuse{Added: []string{}, Kept: []string{}, Rebuilt: []string{}, Removed: []string{}}
	now := map[string]*Target{}
	for _, t := range r.Targets() {
		now[t.Name] = t
	}
	before := map[string]bool{}
	for _, t := range old.Targets() {
		before[t.Name] = true
	}
	for _, t := range r.Targets() {
		if !before[t.Name] {
			u.Added = append(u.Added, t.Name)
		}
	}
	for _, t := range old.Targets() {
		switch n, ok := now[t.Name]; {
		case !ok:
			u.Removed = append(u.Removed, t.Name)
		case n == t:
			u.Kept = append(u.Kept, t.Name)
		default:
			u.Rebuilt = append(u.Rebuilt, t.Name)
		}
	}
	return u
}

func (r *Router) addAlias(as AliasSpec, direct bool) (*Alias, error) {
	budget, err := retry.NewBudget(withClock(as.Budget, r.clk))
	if err != nil {
		return nil, fmt.Errorf("router: alias %q: %w", as.Name, err)
	}
	if as.Retry.Clock == nil {
		as.Retry.Clock = r.clk
	}
	a := &Alias{Name: as.Name, Strategy: as.Strategy, spec: as, budget: budget, Direct: direct}
	if h := as.Hedge; h.After > 0 || h.AfterQuantile > 0 {
		if a.hedges, err = retry.NewBudget(retry.BudgetConfig{Ratio: cmp.Or(h.Budget, 0.1), MinPerSecond: hedgeFloor, Clock: r.clk}); err != nil {
			return nil, fmt.Errorf("router: alias %q: hedge: %w", as.Name, err)
		}
	}
	for _, ts := range as.Targets {
		t, err := r.target(ts, as.Breaker, as.Fingerprint, as.BackgroundProbe)
		if err != nil {
			return nil, fmt.Errorf("router: alias %q: %w", as.Name, err)
		}
		a.Targets = append(a.Targets, t)
		a.weights = append(a.weights, ts.Weight)
		a.prices = append(a.prices, ts.Price)
		a.rungs = append(a.rungs, ts.Budgets.or(as.Budgets))
		t.probeBudgets(a.rungs[len(a.rungs)-1])
	}
	r.aliases[as.Name] = a
	return a, nil
}

func withClock(b retry.BudgetConfig, c clock.Clock) retry.BudgetConfig {
	if b.Clock == nil {
		b.Clock = c
	}
	return b
}

// target returns the (provider, model) target, made on first use or taken
// over from the router replaced. fp is the breaker settings' fingerprint.
func (r *Router) target(ts TargetSpec, bc breaker.Config, fp string, background bool) (*Target, error) {
	prov, model := ts.Provider, ts.Model
	name := prov + "/" + model
	if fp != "" && len(ts.Keys) > 0 {
		fp += "|keys:" + keysDigest(ts.Keys)
	}
	if t, ok := r.targets[name]; ok {
		return t, nil
	}
	p, ok := r.providers[prov]
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", prov)
	}
	if t := r.keptTarget(name, prov, fp); t != nil {
		r.targets[name] = t
		return t, nil
	}
	bc.Name = name
	if bc.Clock == nil {
		bc.Clock = r.clk
	}
	var t *Target
	on, user, probe := r.onTransition, bc.OnStateChange, background
	bc.OnStateChange = func(tr breaker.Transition) {
		if on != nil {
			on(tr)
		}
		if user != nil {
			user(tr)
		}
		if probe {
			r.scheduleProbe(t, tr)
		}
		r.breakerMoved(t, tr)
	}
	var joined func(*breaker.Breaker)
	if r.share != nil {
		joined = r.share(name, &bc)
	}
	br, err := breaker.New(bc)
	if err != nil {
		return nil, err
	}
	if joined != nil {
		joined(br)
	}
	keys := p.keys
	if len(ts.Keys) > 0 {
		keys = make([]*Key, len(ts.Keys))
		for i, k := range ts.Keys {
			keys[i] = &Key{secret: k, ID: fmt.Sprintf("%s#%d", name, i), idx: i}
		}
	}
	t = &Target{Name: name, Provider: prov, Model: model, prov: p, breaker: br, fp: fp, keys: keys, ownKeys: len(ts.Keys) > 0,
		openFor:     openPeriod(bc),
		openBackoff: bc.OpenBackoff, maxOpen: maxOpenPeriod(bc), background: background,
		paces:       latency.New(latency.Settings{Clock: r.clk}),
		rests:       make([]atomic.Int64, len(keys)),
		firstStream: latency.New(latency.Settings{Clock: r.clk}),
		firstPlain:  latency.New(latency.Settings{Clock: r.clk}),
		gaps:        latency.New(latency.Settings{Clock: r.clk}),
	}
	l := p.limits
	if l.MaxWait == 0 {
		l.MaxWait = time.Second
	}
	t.maxWait = l.MaxWait
	if l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 {
		rates := providerRates(l.RequestsPerMinute, l.TokensPerMinute)
		if t.pacer, err = limit.NewPacer(limit.PacerSettings{Limits: rates, MaxWait: l.MaxWait, Clock: r.clk}); err != nil {
			return nil, err
		}
		if r.sharePacer != nil {
			r.sharePacer(name, t.pacer, rates)
		}
		if t.turn, err = limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: 1, MaxWait: l.MaxWait, Clock: r.clk}); err != nil {
			return nil, err
		}
	}
	if l.MaxInFlight > 0 {
		if t.bulk, err = limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: l.MaxInFlight, MaxWait: l.MaxWait, Clock: r.clk}); err != nil {
			return nil, err
		}
	}
	r.targets[name] = t
	return t, nil
}

// Lookup returns the alias for a request's "model": a configured alias, or
// for "provider/model" an alias made on first use that goes to that
// provider directly, still behind its breaker. A direct name must be
// printable ASCII of at most maxDirectName bytes: it becomes the target's
// name, which the gateway sends in X-Fusebox-Target.
func (r *Router) Lookup(model string) (*Alias, bool) {
	r.mu.RLock()
	a, ok := r.aliases[model]
	r.mu.RUnlock()
	if ok {
		if a.Direct {
			a.used.Store(r.now())
		}
		return a, true
	}
	prov, m, found := strings.Cut(model, "/")
	if !found || m == "" || !directName(model) {
		return nil, false
	}
	if _, ok := r.providers[prov]; !ok {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.aliases[model]; ok {
		return a, true
	}
	r.evictDirect()
	spec := r.direct
	spec.Name = model
	spec.Targets = []TargetSpec{{Provider: prov, Model: m, Price: r.providers[prov].price}}
	a, err := r.addAlias(spec, true)
	if err != nil {
		return nil, false
	}
	a.used.Store(r.now())
	return a, true
}

// evictDirect makes room for one more direct alias: while there are
// maxDirect or more, it removes the least recently used one whose target
// no configured alias lists and no attempt is using. r.mu is held.
func (r *Router) evictDirect() {
	for {
		var oldest *Alias
		n := 0
		for _, a := range r.aliases {
			if !a.Direct {
				continue
			}
			n++
			if r.removable(a) && (oldest == nil || a.used.Load() < oldest.used.Load()) {
				oldest = a
			}
		}
		if n < r.maxDirect || oldest == nil {
			return
		}
		delete(r.aliases, oldest.Name)
		t := oldest.Targets[0]
		delete(r.targets, t.Name)
		if r.onRemove != nil {
			r.onRemove(t)
		}
	}
}

// removable reports whether direct alias a's target can go: no attempt
// is using it and no configured alias lists it. r.mu is held.
func (r *Router) removable(a *Alias) bool {
	t := a.Targets[0]
	if t.InFlight() > 0 {
		return false
	}
	for _, o := range r.aliases {
		if !o.Direct && slices.Contains(o.Targets, t) {
			return false
		}
	}
	return true
}

// Aliases returns the configured aliases (not the direct ones), by name.
func (r *Router) Aliases() []*Alias {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*Alias
	for _, a := range r.aliases {
		if !a.Direct {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Targets returns every target, by name.
func (r *Router) Targets() []*Target {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Target, 0, len(r.targets))
	for _, t := range r.targets {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *Router) now() int64 { return int64(r.sw.Elapsed()) }

// KeyState is a key as the admin API shows it: its ID, never the key.
type KeyState struct {
	ID string `json:"id"`
	// State is "in rotation", "disabled" (by hand), "resting" (after a
	// throttle) or "refused" (after an auth or quota answer, until
	// RetryIn has passed).
	State   string        `json:"state"`
	RetryIn time.Duration `json:"retry_in_ns"`
}

// Keys returns the state of every provider key, by ID.
func (r *Router) Keys() []KeyState {
	now := r.now()
	var out []KeyState
	for _, k := range r.allKeys() {
		{
			d, th := k.disabledUntil.Load(), r.restOf(k)
			ks := KeyState{ID: k.ID, State: "in rotation"}
			switch {
			case d < 0:
				ks.State = "disabled"
			case d > now:
				ks.State, ks.RetryIn = "refused", time.Duration(d-now)
			case th > now:
				ks.State, ks.RetryIn = "resting", time.Duration(th-now)
			}
			out = append(out, ks)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// allKeys returns every key: the providers' and the targets' own.
func (r *Router) allKeys() []*Key {
	var out []*Key
	for _, p := range r.providers {
		out = append(out, p.keys...)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.targets {
		if t.ownKeys {
			out = append(out, t.keys...)
		}
	}
	return out
}

// keysDigest identifies a list of keys without revealing them.
func keysDigest(keys []string) string {
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// SetKeyEnabled takes a key out of the rotation until enabled again, or
// puts it back at once (clearing a refusal or a rest). It fails for an
// unknown ID.
func (r *Router) SetKeyEnabled(id string, enabled bool) error {
	for _, k := range r.allKeys() {
		{
			if k.ID != id {
				continue
			}
			if enabled {
				k.disabledUntil.Store(0)
				r.clearRests(k)
			} else {
				k.disabledUntil.Store(-1)
			}
			return nil
		}
	}
	return fmt.Errorf("router: no key %q", id)
}
