package gateway

import (
	"context"
	"net/http"
	"sync"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

// With otel enabled, an exchange traces itself: a span for the request
// (started once its model is known), one per upstream attempt (through the
// walk's Observer), the targets passed over as events. An attempt's span
// ends when both its verdict and, for a success, its usage are known; the
// rest end with the request. Off, none of this runs.

// newTelemetry starts the configured exporter; nil when it is off.
func newTelemetry(c config.OTel, o Options) (*telemetry.Telemetry, error) {
	headers := map[string]string(nil)
	if len(c.Headers) > 0 {
		headers = map[string]string{}
		for k, v := range c.Headers {
			headers[k] = v.Value()
		}
	}
	return telemetry.New(context.Background(), telemetry.Config{
		Enabled: c.Enabled, Endpoint: c.Endpoint, Protocol: c.Protocol, ServiceName: c.ServiceName,
		Headers: headers, SampleRatio: c.SampleRatio, CaptureContent: c.CaptureContent, Timeout: c.Timeout,
	}, telemetry.Options{Clock: o.Clock, SpanExporter: o.Telemetry.SpanExporter, MetricReader: o.Telemetry.MetricReader})
}

// upstreamInfo is what a span says of a provider: its well-known name, its
// type and its address.
type upstreamInfo struct {
	name, kind, host string
	port             int
}

// upstreams describes each provider of cfg for the spans.
func upstreams(cfg *config.Config) map[string]upstreamInfo {
	out := make(map[string]upstreamInfo, len(cfg.Providers))
	for name, p := range cfg.Providers {
		host, port := telemetry.ServerAddress(p.BaseURL)
		out[name] = upstreamInfo{name: telemetry.ProviderName(string(p.Type), p.BaseURL), kind: string(p.Type), host: host, port: port}
	}
	return out
}

// trace is an exchange's tracing.
type trace struct {
	x   *exchange
	req *telemetry.Request
	mu  sync.Mutex
	all []*attemptTrace // the attempts started, in order
}

// attemptTrace is one attempt's span and what ends it.
type attemptTrace struct {
	span      *telemetry.Attempt
	mu        sync.Mutex
	result    telemetry.AttemptResult
	succeeded bool // its verdict: a success, waiting for its usage
	priced    bool // its usage is known
}

// startTrace begins the request's span, once its model is known, and
// observes the walk.
func (x *exchange) startTrace(req *router.Request, operation string) {
	if x.s.tel == nil {
		return
	}
	ctx, tr := x.s.tel.StartRequest(x.r.Context(), x.r, operation, x.fields.ModelName(), x.stream, x.fields.MaxTokens)
	_ = ctx // the upstream's trace context goes in each attempt's headers
	tr.SetAlias(x.alias.Name)
	x.trace = &trace{x: x, req: tr}
	req.Observer = x.trace
}

// Sending starts an attempt's span and puts its trace context in the call.
func (t *trace) Sending(a *router.Attempt, c *router.Call) {
	x := t.x
	info := x.st.upstreams[a.Target.Provider]
	at := &attemptTrace{}
	t.mu.Lock()
	t.all = append(t.all, at)
	n := len(t.all)
	t.mu.Unlock()
	at.span = t.req.StartAttempt(telemetry.AttemptInfo{
		Target: a.Target.Name, Provider: info.name, ProviderType: info.kind, Model: c.Model,
		ServerAddress: info.host, ServerPort: info.port, Number: n,
		BreakerState: a.Target.Breaker().State().String(), Stream: c.Stream, MaxTokens: x.fields.MaxTokens,
	})
	at.span.Inject(c.Header)
	a.Trace = at
}

// Ended ends a failed attempt's span at once; a success waits for its
// usage, unless it is known already (a stream's comes before its end).
func (t *trace) Ended(a *router.Attempt, e router.AttemptEvent) {
	at, _ := a.Trace.(*attemptTrace)
	if at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if e.Verdict.Kind != aierr.Success {
		at.result.ErrType, at.result.Status = e.Verdict.Kind.String(), e.Verdict.Status
		at.span.End(at.result)
		return
	}
	at.succeeded = true
	if a.Resp != nil {
		at.result.Status = a.Resp.StatusCode
	}
	if at.priced {
		at.span.End(at.result)
	}
}

// Skipped records a target passed over.
func (t *trace) Skipped(target *router.Target, reason string) { t.req.Skip(target.Name, reason) }

// priced records an attempt's usage and cost on its span.
func (t *trace) priced(a *router.Attempt, u *usage, cost float64) {
	at, _ := a.Trace.(*attemptTrace)
	if t == nil || at == nil {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	at.result.InputTokens, at.result.OutputTokens = u.PromptTokens, u.CompletionTokens
	at.result.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	at.result.Cost, at.priced = cost, true
	if at.succeeded {
		at.span.End(at.result)
	}
}

// chunk tells a streamed attempt's span of an event of its answer.
func (t *trace) chunk(a *router.Attempt, first bool) {
	at, _ := a.Trace.(*attemptTrace)
	if t == nil || at == nil {
		return
	}
	if first {
		at.span.FirstChunk()
	} else {
		at.span.Chunk()
	}
}

// end ends every span still open, then the request's.
func (t *trace) end(status int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	all := t.all
	t.mu.Unlock()
	for _, at := range all {
		at.mu.Lock()
		at.span.End(at.result) // only the first End counts
		at.mu.Unlock()
	}
	errType := ""
	if status >= http.StatusInternalServerError {
		errType = "no_target"
		if status == http.StatusGatewayTimeout {
			errType = "timeout"
		}
	}
	t.req.End(status, errType)
}

// operation is the GenAI operation name of a path.
func operation(path string) string {
	if path == "/embeddings" {
		return "embeddings"
	}
	return "chat"
}
