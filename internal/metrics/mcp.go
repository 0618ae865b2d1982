package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fuseboxhq/fusebox/breaker"
)

// MCP are the metrics of the /mcp endpoint's tool calls. A nil *MCP
// records nothing.
type MCP struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// Buckets for tool calls: from a local lookup to a long-running tool.
var toolBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// NewMCP registers the MCP metrics: fusebox_mcp_calls_total, the call
// latency, and the state of the MCP servers' breakers, read from breakers
// at scrape time. Call it once; on a nil *Metrics it returns nil.
func (m *Metrics) NewMCP(breakers func() []*breaker.Breaker) *MCP {
	if m == nil {
		return nil
	}
	x := &MCP{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fusebox_mcp_calls_total",
			Help: "MCP tool calls answered, by server, tool (its name on the server) and outcome (ok, tool_error, timeout, outage, throttle, auth, client_error, canceled, open, limited).",
		}, []string{"server", "tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fusebox_mcp_call_duration_seconds", Help: "Time to answer an MCP tool call, every attempt included, by server and tool.",
			Buckets: toolBuckets,
		}, []string{"server", "tool"}),
	}
	m.reg.MustRegister(x.calls, x.duration, mcpBreakerCollector(breakers))
	return x
}

// Call records one answered tool call.
func (x *MCP) Call(server, tool, outcome string, d time.Duration) {
	if x == nil {
		return
	}
	x.calls.WithLabelValues(server, tool, outcome).Inc()
	x.duration.WithLabelValues(server, tool).Observe(d.Seconds())
}

var descMCPBreaker = prometheus.NewDesc("fusebox_mcp_breaker_state",
	"State of an MCP server replica's (or tool's) breaker: 1 for the state it is in, 0 for the others, by breaker name and state.", []string{"breaker", "state"}, nil)

// mcpStates are the states the gauge has a series for.
var mcpStates = []breaker.State{breaker.StateClosed, breaker.StateOpen, breaker.StateHalfOpen,
	breaker.StateForcedOpen, breaker.StateForcedClosed, breaker.StateDisabled}

type mcpBreakerCollector func() []*breaker.Breaker

func (c mcpBreakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descMCPBreaker }

func (c mcpBreakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c() {
		now := b.State()
		for _, st := range mcpStates {
			v := 0.0
			if st == now {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descMCPBreaker, prometheus.GaugeValue, v, b.Name(), st.String())
		}
	}
}
