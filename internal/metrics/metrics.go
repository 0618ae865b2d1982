// Package metrics exposes the gateway's Prometheus metrics. Counters on the
// request path are bound once per target and verdict, so recording is an
// atomic add; breaker states, health figures and breaker totals are read
// from the router when Prometheus scrapes, costing requests nothing.
//
// Every metric is described in docs/METRICS.md.
package metrics

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the gateway's collectors, in a registry of its own (no
// global state). It is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests                               *prometheus.CounterVec
	reqDuration                            *prometheus.HistogramVec
	attempts                               *prometheus.CounterVec
	attDuration                            *prometheus.HistogramVec
	ttfb                                   *prometheus.HistogramVec
	skips                                  *prometheus.CounterVec
	transitions                            *prometheus.CounterVec
	cacheResults                           *prometheus.CounterVec
	tokens, cost, clientTokens, clientCost *prometheus.CounterVec
	retries, failovers, clientRequests     *prometheus.CounterVec
	hedges                                 *prometheus.CounterVec
	limiterWait                            *prometheus.HistogramVec

	// bound caches the per-target children, made on first use; answered
	// the per-(model, code) ones.
	bound    sync.Map // *router.Target → *targetMetrics
	answered sync.Map // answerKey → *answerMetrics
}

type targetMetrics struct {
	tokensIn, tokensOut, cost prometheus.Counter
	retries, hedges           prometheus.Counter
	attempts, failovers       [aierr.Canceled + 1]prometheus.Counter
	duration                  prometheus.Observer
	ttfb                      prometheus.Observer
	limiterWait               prometheus.Observer
}

// Buckets for waits at a target's limits: from a millisecond to the
// longest max_wait anyone sets.
var waitBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Buckets for upstream latencies: LLM calls take from tens of milliseconds
// to minutes.
var latencyBuckets = []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80, 160}

// New returns the gateway's metrics, with Go runtime and process metrics.
//
// A nil *Metrics is valid and records nothing; its Handler answers 404.
// The gateway uses one to measure what its metrics cost.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_requests_total", Help: "Client requests answered, by model alias and HTTP status code.",
		}, []string{"model", "code"}),
		reqDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fusebox_request_duration_seconds", Help: "Time from a client request's arrival to the end of its answer, by model alias.",
			Buckets: latencyBuckets,
		}, []string{"model"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_upstream_attempts_total", Help: "Upstream attempts, by target and verdict.",
		}, []string{"target", "verdict"}),
		attDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fusebox_upstream_duration_seconds", Help: "Upstream attempt duration, by target.", Buckets: latencyBuckets,
		}, []string{"target"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fusebox_upstream_ttfb_seconds", Help: "Time to a streamed answer's first content, by target.", Buckets: latencyBuckets,
		}, []string{"target"}),
		skips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_target_skips_total", Help: "Targets passed over without an attempt, by target and reason.",
		}, []string{"target", "reason"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_breaker_transitions_total", Help: "Breaker state changes, by target, from-state and to-state.",
		}, []string{"target", "from", "to"}),
	}
	m.cacheResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_cache_requests_total", Help: "Requests of aliases with a response cache, by result: hit, miss, stale, bypass, degraded.",
	}, []string{"model", "result"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_tokens_total", Help: "Tokens of answered calls, by target and direction (input, output).",
	}, []string{"target", "direction"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_cost_usd_total", Help: "Cost of answered calls in USD, by target, at the configured prices.",
	}, []string{"target"})
	m.clientTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_client_tokens_total", Help: "Tokens of answered calls, by client key name and direction.",
	}, []string{"client", "direction"})
	m.clientCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_client_cost_usd_total", Help: "Cost of answered calls in USD, by client key name.",
	}, []string{"client"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_retries_total", Help: "Upstream attempts that repeated the one before on the same target, by target.",
	}, []string{"target"})
	m.failovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_failovers_total", Help: "Failovers: failed attempts after which the next target was sent the request, by target failed and verdict.",
	}, []string{"target", "verdict"})
	m.hedges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_hedges_total", Help: "Hedged attempts: sent to a target because the one before it was slow to answer, by target.",
	}, []string{"target"})
	m.limiterWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "fusebox_limiter_wait_seconds", Help: "Time an attempt waited for its target's rate and concurrency limits, by target (targets with limits only).",
		Buckets: waitBuckets,
	}, []string{"target"})
	m.clientRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fusebox_client_requests_total", Help: "Client requests answered, by client key name and HTTP status code.",
	}, []string{"client", "code"})
	m.reg.MustRegister(m.cacheResults, m.tokens, m.cost, m.clientTokens, m.clientCost,
		m.retries, m.failovers, m.hedges, m.limiterWait, m.clientRequests)
	m.reg.MustRegister(m.requests, m.reqDuration, m.attempts, m.attDuration, m.ttfb, m.skips, m.transitions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Hooks sets the router hooks that feed the metrics.
func (m *Metrics) Hooks(s *router.Spec) {
	if m == nil {
		return
	}
	s.OnAttempt = m.attempt
	s.OnSkip = func(t *router.Target, reason string) { m.skips.WithLabelValues(t.Name, reason).Inc() }
	s.OnFailover = func(t *router.Target, v aierr.Verdict) {
		if tm := m.target(t); int(v.Kind) < len(tm.failovers) {
			tm.failovers[v.Kind].Inc()
		}
	}
	s.OnTransition = func(t breaker.Transition) {
		m.transitions.WithLabelValues(t.Name, t.From.String(), t.To.String()).Inc()
	}
	s.OnRemove = func(t *router.Target) {
		m.Forget([]string{t.Name}, func(x *router.Target) bool { return x != t })
	}
}

// Watch registers the collector that reads the targets of the router in
// force at scrape time; r returns it (a reload replaces it).
func (m *Metrics) Watch(r func() *router.Router) {
	if m != nil {
		m.reg.MustRegister(&stateCollector{r: r})
	}
}

// BudgetLeft is what a client may still spend, in USD, and its limits;
// NaN (left) or 0 (limit) for a period without a limit.
type BudgetLeft struct {
	Client                   string
	Daily, Monthly           float64
	DailyLimit, MonthlyLimit float64
}

// WatchBudgets registers the gauge of each client's remaining budget, read
// at scrape time from left.
func (m *Metrics) WatchBudgets(left func() []BudgetLeft) {
	if m == nil {
		return
	}
	m.reg.MustRegister(budgetCollector(left))
}

var descBudget = prometheus.NewDesc("fusebox_client_budget_remaining_usd",
	"What a client may still spend in the current UTC day or month before its budget refuses it.", []string{"client", "period"}, nil)

var descBudgetLimit = prometheus.NewDesc("fusebox_client_budget_limit_usd",
	"A client's budget for the UTC day or month, as configured.", []string{"client", "period"}, nil)

type budgetCollector func() []BudgetLeft

func (c budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descBudget
	ch <- descBudgetLimit
}

func (c budgetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c() {
		if !math.IsNaN(b.Daily) {
			ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, b.Daily, b.Client, "daily")
			ch <- prometheus.MustNewConstMetric(descBudgetLimit, prometheus.GaugeValue, b.DailyLimit, b.Client, "daily")
		}
		if !math.IsNaN(b.Monthly) {
			ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, b.Monthly, b.Client, "monthly")
			ch <- prometheus.MustNewConstMetric(descBudgetLimit, prometheus.GaugeValue, b.MonthlyLimit, b.Client, "monthly")
		}
	}
}

// Forget drops the series of targets that a configuration reload removed,
// so /metrics stops showing them, and the children bound to any target
// that is no longer in use. (Targets rebuilt under the same name keep
// their series.) live reports whether a target is still in use.
func (m *Metrics) Forget(removed []string, live func(*router.Target) bool) {
	if m == nil {
		return
	}
	for _, name := range removed {
		match := prometheus.Labels{"target": name}
		for _, v := range []*prometheus.CounterVec{m.attempts, m.skips, m.transitions, m.tokens, m.cost, m.retries, m.failovers, m.hedges} {
			v.DeletePartialMatch(match)
		}
		for _, v := range []*prometheus.HistogramVec{m.attDuration, m.ttfb, m.limiterWait} {
			v.DeletePartialMatch(match)
		}
	}
	m.bound.Range(func(k, _ any) bool {
		if !live(k.(*router.Target)) {
			m.bound.Delete(k)
		}
		return true
	})
}

func (m *Metrics) target(t *router.Target) *targetMetrics {
	if tm, ok := m.bound.Load(t); ok {
		return tm.(*targetMetrics)
	}
	tm := &targetMetrics{
		tokensIn:  m.tokens.WithLabelValues(t.Name, "input"),
		tokensOut: m.tokens.WithLabelValues(t.Name, "output"),
		cost:      m.cost.WithLabelValues(t.Name),
		duration:  m.attDuration.WithLabelValues(t.Name),
		ttfb:      m.ttfb.WithLabelValues(t.Name),
		retries:   m.retries.WithLabelValues(t.Name),
		hedges:    m.hedges.WithLabelValues(t.Name),
	}
	if t.Limited() {
		tm.limiterWait = m.limiterWait.WithLabelValues(t.Name)
	}
	for k := range tm.attempts {
		tm.attempts[k] = m.attempts.WithLabelValues(t.Name, aierr.Kind(k).String())
		tm.failovers[k] = m.failovers.WithLabelValues(t.Name, aierr.Kind(k).String())
	}
	actual, _ := m.bound.LoadOrStore(t, tm)
	return actual.(*targetMetrics)
}

func (m *Metrics) attempt(e router.AttemptEvent) {
	tm := m.target(e.Target)
	if int(e.Verdict.Kind) < len(tm.attempts) {
		tm.attempts[e.Verdict.Kind].Inc()
	}
	if e.Verdict.Kind != aierr.Canceled {
		tm.duration.Observe(e.Duration.Seconds())
	}
	if e.Retry {
		tm.retries.Inc()
	}
	if e.Hedge {
		tm.hedges.Inc()
	}
	if tm.limiterWait != nil {
		tm.limiterWait.Observe(e.Queued.Seconds())
	}
}

// Usage records an answer's tokens and cost for its target and client
// (the client's name, "" with no client keys).
func (m *Metrics) Usage(t *router.Target, client string, in, out int, cost float64) {
	if m == nil {
		return
	}
	tm := m.target(t)
	tm.tokensIn.Add(float64(in))
	tm.tokensOut.Add(float64(out))
	tm.cost.Add(cost)
	m.clientTokens.WithLabelValues(client, "input").Add(float64(in))
	m.clientTokens.WithLabelValues(client, "output").Add(float64(out))
	m.clientCost.WithLabelValues(client).Add(cost)
}

// TTFB records a streamed answer's time to first content.
func (m *Metrics) TTFB(t *router.Target, d time.Duration) {
	if m != nil {
		m.target(t).ttfb.Observe(d.Seconds())
	}
}

// Request records an answered client request: its model alias ("" when
// the request was refused before one was known), its client's name ("" with
// no client keys), its status code and how long it took.
func (m *Metrics) Request(model, client string, code int, d time.Duration) {
	if m == nil {
		return
	}
	k := answerKey{model, client, code}
	am, ok := m.answered.Load(k)
	if !ok {
		am, _ = m.answered.LoadOrStore(k, &answerMetrics{
			requests: m.requests.WithLabelValues(model, strconv.Itoa(code)),
			client:   m.clientRequests.WithLabelValues(client, strconv.Itoa(code)),
			duration: m.reqDuration.WithLabelValues(model),
		})
	}
	a := am.(*answerMetrics)
	if model != "" {
		a.requests.Inc()
		a.duration.Observe(d.Seconds())
	}
	a.client.Inc()
}

// answerKey and answerMetrics cache the children of the request metrics,
// so an answer costs no label hashing. Models are the configured aliases
// and provider/model names, clients the configured keys, codes a few
// dozen: the cache stays small.
type answerKey struct {
	model, client string
	code          int
}

type answerMetrics struct {
	requests, client prometheus.Counter
	duration         prometheus.Observer
}

// Cache records a response-cache result for a request to model.
func (m *Metrics) Cache(model, result string) {
	if m != nil {
		m.cacheResults.WithLabelValues(model, result).Inc()
	}
}

// WatchCaches registers gauges of the entries and bytes held by the
// response caches, read at scrape time from stats.
func (m *Metrics) WatchCaches(stats func() (entries, bytes int64)) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fusebox_cache_entries", Help: "Answers held by the response caches."},
			func() float64 { e, _ := stats(); return float64(e) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fusebox_cache_bytes", Help: "Bytes held by the response caches."},
			func() float64 { _, b := stats(); return float64(b) }),
	)
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// stateCollector reads breaker states, totals and health at scrape time.
type stateCollector struct{ r func() *router.Router }

var (
	descState = prometheus.NewDesc("fusebox_breaker_state",
		"Breaker state by target: 1 for the current state, 0 for the others.", []string{"target", "state"}, nil)
	descCalls = prometheus.NewDesc("fusebox_breaker_calls_total",
		"Calls seen by a target's breaker, by outcome: allowed, rejected, succeeded, failed, ignored, dropped, slow.", []string{"target", "outcome"}, nil)
	descLatency = prometheus.NewDesc("fusebox_target_latency_seconds",
		"Moving average of a target's answer time.", []string{"target"}, nil)
	descInFlight = prometheus.NewDesc("fusebox_target_in_flight",
		"Upstream attempts to a target under way.", []string{"target"}, nil)
	descQueued = prometheus.NewDesc("fusebox_target_queued_requests",
		"Requests waiting for a slot under a target's concurrency limit (max_in_flight).", []string{"target"}, nil)
	descErrRate = prometheus.NewDesc("fusebox_target_error_ratio",
		"Moving average of the share of a target's recent attempts that failed.", []string{"target"}, nil)
)

var states = []breaker.State{breaker.StateClosed, breaker.StateOpen, breaker.StateHalfOpen,
	breaker.StateForcedOpen, breaker.StateForcedClosed, breaker.StateDisabled}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descState
	ch <- descCalls
	ch <- descLatency
	ch <- descErrRate
	ch <- descQueued
	ch <- descInFlight
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.r().Targets() {
		s := t.Breaker().Snapshot()
		for _, st := range states {
			v := 0.0
			if s.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, t.Name, st.String())
		}
		tot := s.Totals
		for _, o := range []struct {
			name string
			n    uint64
		}{{"allowed", tot.Allowed}, {"rejected", tot.Rejected}, {"succeeded", tot.Succeeded}, {"failed", tot.Failed},
			{"ignored", tot.Ignored}, {"dropped", tot.Dropped}, {"slow", tot.Slow}} {
			ch <- prometheus.MustNewConstMetric(descCalls, prometheus.CounterValue, float64(o.n), t.Name, o.name)
		}
		h := t.Health()
		ch <- prometheus.MustNewConstMetric(descLatency, prometheus.GaugeValue, h.Latency.Seconds(), t.Name)
		ch <- prometheus.MustNewConstMetric(descErrRate, prometheus.GaugeValue, h.ErrorRate, t.Name)
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(t.Queued()), t.Name)
		ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(t.InFlight()), t.Name)
	}
}
