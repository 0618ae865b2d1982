package outage

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// MCPHang is the MCP scenario: an agent calls a read-only tool through
// the gateway's /mcp at a steady rate while the first of the tool
// server's two replicas hangs.
const MCPHang Scenario = "mcp-hang"

// MCPOptions configure the mcp-hang scenario. Zero fields take the
// defaults shown.
type MCPOptions struct {
	Rate     float64       // tool calls a second; 20
	Duration time.Duration // of the whole run; 30s
	// HangStart and HangLength place the hang of the first replica; 5s
	// and 10s.
	HangStart, HangLength time.Duration
	// Total is the tool's deadline per attempt (timeouts.total); 1s.
	Total time.Duration
	// Latency is the replicas' own answer time; 5ms.
	Latency time.Duration
}

// MCPResult is what the agent saw.
type MCPResult struct {
	Options  MCPOptions    `json:"options"`
	Calls    int           `json:"calls"`
	Failures int           `json:"failures"` // errors and error results the agent saw
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
	// HungCalls are the calls the hung replica received during its hang.
	HungCalls int64 `json:"hung_calls"`
	// Opened reports whether the hung replica's breaker opened, and
	// OpenedAfter how long into the hang.
	Opened      bool          `json:"opened"`
	OpenedAfter time.Duration `json:"opened_after"`
}

// Goals reports the scenario's goals: no failure the agent sees, p99
// within the tool's deadline + 100ms, the hung replica's breaker open.
func (r *MCPResult) Goals() []string {
	var missed []string
	if r.Failures > 0 {
		missed = append(missed, fmt.Sprintf("%d client-visible failures (goal 0)", r.Failures))
	}
	if r.P99 > r.Options.Total+100*time.Millisecond {
		missed = append(missed, fmt.Sprintf("p99 %v over the deadline + 100ms (%v)", r.P99, r.Options.Total+100*time.Millisecond))
	}
	if !r.Opened {
		missed = append(missed, "the hung replica's breaker never opened")
	}
	return missed
}

// Markdown renders the result as a table and the goals.
func (r *MCPResult) Markdown() string {
	var b strings.Builder
	o := r.Options
	fmt.Fprintf(&b, "mcp-hang: %g calls/s of a read-only tool for %v; replica 1 of 2 hangs from %v for %v; deadline %v\n\n",
		o.Rate, o.Duration, o.HangStart, o.HangLength, o.Total)
	b.WriteString("| calls | client-visible failures | p50 | p99 | max | calls to the hung replica | its breaker opened |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---|\n")
	opened := "no"
	if r.Opened {
		opened = "after " + r.OpenedAfter.Round(time.Millisecond).String()
	}
	fmt.Fprintf(&b, "| %d | %d | %v | %v | %v | %d | %s |\n\n", r.Calls, r.Failures,
		r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond), r.Max.Round(100*time.Microsecond), r.HungCalls, opened)
	if missed := r.Goals(); len(missed) > 0 {
		b.WriteString("Goals missed: " + strings.Join(missed, "; ") + "\n")
	} else {
		b.WriteString("Goals met: 0 failures, p99 within the deadline + 100ms, the hung replica's breaker opened.\n")
	}
	return b.String()
}

func (o *MCPOptions) defaults() {
	o.Rate = cmp.Or(o.Rate, 20)
	o.Duration = cmp.Or(o.Duration, 30*time.Second)
	o.HangStart = cmp.Or(o.HangStart, 5*time.Second)
	o.HangLength = cmp.Or(o.HangLength, 10*time.Second)
	o.Total = cmp.Or(o.Total, time.Second)
	o.Latency = cmp.Or(o.Latency, 5*time.Millisecond)
}

// RunMCP runs the mcp-hang scenario through a whole gateway.
func RunMCP(ctx context.Context, o MCPOptions) (*MCPResult, error) {
	o.defaults()
	a, b := sim.NewMCP("replica-a"), sim.NewMCP("replica-b")
	a.SetFaults(sim.MCPFaults{Slow: o.Latency})
	b.SetFaults(sim.MCPFaults{Slow: o.Latency})
	sa, sb := httptest.NewServer(a.Handler()), httptest.NewServer(b.Handler())
	defer func() {
		a.Close()
		b.Close()
		sa.CloseClientConnections()
		sb.CloseClientConnections()
		sa.Close()
		sb.Close()
	}()
	none := func(string) (string, bool) { return "", false }
	cfg, err := config.Parse("bench-mcp", []byte(mcpConfig(sa.URL+"/mcp", sb.URL+"/mcp", o.Total)), none)
	if err != nil {
		return nil, fmt.Errorf("outage: mcp configuration: %w", err)
	}
	var opened atomic.Int64 // unix ns of the first trip of replica a
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		NoMetrics: true, OnTransition: func(t breaker.Transition) {
			if t.Name == "tools#0" && t.To == breaker.StateOpen {
				opened.CompareAndSwap(0, time.Now().UnixNano())
			}
		}})
	if err != nil {
		return nil, err
	}
	defer gw.Close()
	hs := httptest.NewServer(gw.Handler())
	defer hs.Close()
	defer hs.CloseClientConnections()

	c := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return nil, err
	}
	lat, failures, hangAt, hungCalls := mcpTraffic(ctx, cs, o, a)
	r := &MCPResult{Options: o, Calls: len(lat), Failures: failures, HungCalls: hungCalls}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.P50, r.P99, r.Max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	if t := opened.Load(); t != 0 {
		r.Opened, r.OpenedAfter = true, time.Unix(0, t).Sub(hangAt)
	}
	return r, ctx.Err()
}

// mcpTraffic sends the calls, open loop, and hangs replica a on schedule;
// it returns each call's latency, the failures, when the hang began and
// how many calls a got during it.
func mcpTraffic(ctx context.Context, cs *mcp.ClientSession, o MCPOptions, a *sim.MCP) ([]time.Duration, int, time.Time, int64) {
	var (
		mu       sync.Mutex
		lat      []time.Duration
		failures int
		wg       sync.WaitGroup
	)
	start := time.Now()
	hangAt := start.Add(o.HangStart)
	var before int64
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
	defer tick.Stop()
	hanging, healed := false, false
	var during int64
	for now := range tick.C {
		if ctx.Err() != nil || now.Sub(start) >= o.Duration {
			break
		}
		switch {
		case !hanging && now.After(hangAt):
			hanging, before = true, a.Calls("search")
			a.SetFaults(sim.MCPFaults{Hang: time.Hour})
		case hanging && !healed && now.After(hangAt.Add(o.HangLength)):
			healed, during = true, a.Calls("search")-before
			a.SetFaults(sim.MCPFaults{Slow: o.Latency})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tools__search", Arguments: map[string]any{"q": "fox"}})
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, d)
			if err != nil || res.IsError {
				failures++
			}
		}()
	}
	wg.Wait()
	if !healed {
		during = a.Calls("search") - before
	}
	return lat, failures, hangAt, during
}

// mcpConfig is the gateway's configuration for the mcp-hang scenario.
func mcpConfig(a, b string, total time.Duration) string {
	return `providers: {openai: {keys: [unused]}}
models: [{name: chat, targets: [{provider: openai, model: m}]}]
mcp:
  servers:
    - name: tools
      replicas: ["` + a + `", "` + b + `"]
      breaker: {consecutive: 3, open: 2s, max_open: 4s}
      timeouts: {total: ` + total.String() + `, deadline: 30s}
`
}
