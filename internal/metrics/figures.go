package metrics

import (
	"math"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Figures reads the counters the request path already keeps, for the
// dashboard's sampler: nothing here is recorded, so reading costs requests
// nothing. Each read walks a few collectors; call it every few seconds,
// not per request.

// Histogram is a cumulative histogram as Prometheus keeps it: Counts[i]
// observations at or below Bounds[i], Count in all (the +Inf bucket).
type Histogram struct {
	Bounds []float64
	Counts []uint64
	Count  uint64
	Sum    float64
}

// Sub returns h minus an earlier reading of the same histogram, the
// observations made in between. A reading that went down (the series was
// made again after a reload) counts from zero.
func (h Histogram) Sub(prev Histogram) Histogram {
	if prev.Count > h.Count || len(prev.Counts) != len(h.Counts) {
		return h
	}
	d := Histogram{Bounds: h.Bounds, Counts: make([]uint64, len(h.Counts)), Count: h.Count - prev.Count, Sum: h.Sum - prev.Sum}
	for i := range h.Counts {
		d.Counts[i] = h.Counts[i] - min(prev.Counts[i], h.Counts[i])
	}
	return d
}

// Quantile estimates the q-quantile (0 < q < 1) in seconds by linear
// interpolation inside the bucket that holds it, as Prometheus's
// histogram_quantile does. It returns NaN with no observations, and the
// highest finite bound when the quantile lies above it.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 || len(h.Bounds) == 0 {
		return math.NaN()
	}
	rank := q * float64(h.Count)
	lower, below := 0.0, uint64(0)
	for i, upper := range h.Bounds {
		c := h.Counts[i]
		if float64(c) >= rank {
			in := c - below
			if in == 0 {
				return upper
			}
			return lower + (upper-lower)*(rank-float64(below))/float64(in)
		}
		lower, below = upper, c
	}
	return h.Bounds[len(h.Bounds)-1]
}

// TargetFigures are a target's cumulative counters since its series began.
type TargetFigures struct {
	TokensIn, TokensOut float64
	CostUSD             float64
	// Duration is the upstream attempts' durations; TTFB the streamed
	// answers' times to first content.
	Duration, TTFB Histogram
}

// Target reads t's counters; zero when nothing was recorded for it yet or
// m is nil.
func (m *Metrics) Target(t *router.Target) TargetFigures {
	if m == nil {
		return TargetFigures{}
	}
	v, ok := m.bound.Load(t)
	if !ok {
		return TargetFigures{}
	}
	tm := v.(*targetMetrics)
	return TargetFigures{
		TokensIn: counterValue(tm.tokensIn), TokensOut: counterValue(tm.tokensOut), CostUSD: counterValue(tm.cost),
		Duration: histogramOf(tm.duration), TTFB: histogramOf(tm.ttfb),
	}
}

// Totals are the gateway's own counts since it started.
type Totals struct {
	// Requests are the client requests answered; Status4xx and Status5xx
	// those answered with an error status.
	Requests, Status4xx, Status5xx uint64
	// Failovers are the failed attempts after which the next target was
	// tried.
	Failovers uint64
	// CacheHits, CacheStale and CacheLookups count response-cache results
	// (lookups: hit, miss and stale).
	CacheHits, CacheStale, CacheLookups uint64
	// ClientCostUSD is the spend of each client key by name ("" when the
	// gateway has no client keys).
	ClientCostUSD map[string]float64
}

// Totals reads the gateway's totals; zero when m is nil.
func (m *Metrics) Totals() Totals {
	t := Totals{ClientCostUSD: map[string]float64{}}
	if m == nil {
		return t
	}
	each(m.clientRequests, func(labels map[string]string, v float64) {
		n := uint64(v)
		t.Requests += n
		code, _ := strconv.Atoi(labels["code"])
		switch {
		case code >= 500:
			t.Status5xx += n
		case code >= 400:
			t.Status4xx += n
		}
	})
	each(m.failovers, func(_ map[string]string, v float64) { t.Failovers += uint64(v) })
	each(m.cacheResults, func(labels map[string]string, v float64) {
		switch labels["result"] {
		case "hit":
			t.CacheHits += uint64(v)
		case "stale":
			t.CacheStale += uint64(v)
		}
		if r := labels["result"]; r == "hit" || r == "miss" || r == "stale" {
			t.CacheLookups += uint64(v)
		}
	})
	each(m.clientCost, func(labels map[string]string, v float64) { t.ClientCostUSD[labels["client"]] += v })
	return t
}

// each calls fn with the labels and value of every counter of vec.
func each(vec *prometheus.CounterVec, fn func(labels map[string]string, v float64)) {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		vec.Collect(ch)
		close(ch)
	}()
	for c := range ch {
		var d dto.Metric
		if c.Write(&d) != nil || d.Counter == nil {
			continue
		}
		labels := make(map[string]string, len(d.Label))
		for _, l := range d.Label {
			labels[l.GetName()] = l.GetValue()
		}
		fn(labels, d.Counter.GetValue())
	}
}

func counterValue(c prometheus.Counter) float64 {
	var d dto.Metric
	if c == nil || c.Write(&d) != nil || d.Counter == nil {
		return 0
	}
	return d.Counter.GetValue()
}

func histogramOf(o prometheus.Observer) Histogram {
	pm, ok := o.(prometheus.Metric)
	var d dto.Metric
	if !ok || pm.Write(&d) != nil || d.Histogram == nil {
		return Histogram{}
	}
	h := Histogram{Count: d.Histogram.GetSampleCount(), Sum: d.Histogram.GetSampleSum()}
	for _, b := range d.Histogram.Bucket {
		if math.IsInf(b.GetUpperBound(), 1) {
			continue
		}
		h.Bounds = append(h.Bounds, b.GetUpperBound())
		h.Counts = append(h.Counts, b.GetCumulativeCount())
	}
	return h
}
