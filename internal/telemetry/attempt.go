package telemetry

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// AttemptInfo describes an upstream attempt as it starts.
type AttemptInfo struct {
	Target string // the Fusebox target, provider/model (fusebox.target)
	// Provider is the GenAI provider's well-known name (openai, anthropic,
	// azure.ai.openai, gcp.gemini, aws.bedrock, …; see ProviderName).
	// "": ProviderName(ProviderType, "http://"+ServerAddress).
	Provider      string
	ProviderType  string // the configured provider type (fusebox.provider.type)
	Model         string // the model sent upstream (gen_ai.request.model)
	ServerAddress string // the upstream's host (server.address)
	ServerPort    int    // its port (server.port); 0: left out
	Number        int    // 1 for the request's first attempt, then 2, … (fusebox.attempt)
	BreakerState  string // the target's breaker state when admitted
	// FailoverReason is the verdict of the attempt this one fails over
	// from ("" for the first, a retry or a hedge).
	FailoverReason string
	Stream         bool
	MaxTokens      int // the max_tokens sent upstream; 0: none
}

// AttemptResult is how an upstream attempt ended.
type AttemptResult struct {
	ResponseModel string   // the model the answer names (gen_ai.response.model)
	ResponseID    string   // the answer's id (gen_ai.response.id)
	FinishReasons []string // one per choice (gen_ai.response.finish_reasons)
	// Token counts from the answer's usage; 0 when it had none (a failed
	// attempt records 0).
	InputTokens, OutputTokens         int
	CacheReadTokens, CacheWriteTokens int
	Cost                              float64 // USD at the alias's prices (fusebox.cost_usd)
	// ErrType is the attempt's failure class, the aierr verdict kind
	// (outage, throttle, capacity, auth, quota, client_error, canceled);
	// "" on success. It becomes error.type on the span and the metrics;
	// a canceled attempt (a hedge's loser) is not marked as an error.
	ErrType string
	Status  int // the upstream's HTTP status; 0: no answer
}

// Attempt is one upstream attempt's span. FirstChunk and Chunk are called
// by the goroutine relaying the stream; End may come from another (a
// watchdog's cut) and only its first call counts. A nil *Attempt does
// nothing.
type Attempt struct {
	t    *Telemetry
	span trace.Span
	// base are the attributes every metric point of the attempt carries;
	// chunkOpt is them as a measurement option, for the stream metrics.
	base     []attribute.KeyValue
	chunkOpt metric.MeasurementOption
	start    time.Time
	// first is when the first chunk came (UnixNano, 0: none yet); last
	// when the latest one did.
	first, last atomic.Int64
	ended       atomic.Bool
}

// StartAttempt starts the CLIENT span of an upstream attempt, a child of
// the request's span. The gateway calls it as the attempt is sent, and
// must call End. On a nil *Request it returns a nil *Attempt.
func (r *Request) StartAttempt(a AttemptInfo) *Attempt {
	if r == nil {
		return nil
	}
	return r.startAttempt(&a)
}

func (r *Request) startAttempt(a *AttemptInfo) *Attempt {
	r.attempts.Add(1)
	provider := a.Provider
	if provider == "" {
		provider = ProviderName(a.ProviderType, "http://"+a.ServerAddress)
	}
	at := &Attempt{t: r.t, start: r.t.clk.Now()}
	at.base = make([]attribute.KeyValue, 0, 5)
	at.base = append(at.base, keyOperation.String(r.operation), keyProvider.String(provider), keyRequestModel.String(a.Model))
	if a.ServerAddress != "" {
		at.base = append(at.base, keyServerAddress.String(a.ServerAddress))
		if a.ServerPort > 0 {
			at.base = append(at.base, keyServerPort.Int(a.ServerPort))
		}
	}
	attrs := make([]attribute.KeyValue, 0, len(at.base)+10)
	attrs = append(attrs, at.base...)
	attrs = append(attrs, requestParams(a.Stream, a.MaxTokens)...)
	attrs = append(attrs, keyTarget.String(a.Target), keyAttempt.Int(a.Number))
	if a.ProviderType != "" {
		attrs = append(attrs, keyProviderType.String(a.ProviderType))
	}
	if a.BreakerState != "" {
		attrs = append(attrs, keyBreakerState.String(a.BreakerState))
	}
	if a.FailoverReason != "" {
		attrs = append(attrs, keyFailoverReason.String(a.FailoverReason))
	}
	if r.input != "" {
		attrs = append(attrs, keyInputMessages.String(r.input))
		if r.inputTruncated {
			attrs = append(attrs, keyContentTruncated.Bool(true))
		}
	}
	parent := trace.ContextWithSpan(context.Background(), r.span)
	_, at.span = r.t.tracer.Start(parent, spanName(r.operation, a.Model),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(at.start), trace.WithAttributes(attrs...))
	if a.Stream {
		at.chunkOpt = metric.WithAttributeSet(attribute.NewSet(at.base...))
	}
	return at
}

// Inject writes the attempt's traceparent (and tracestate) into h, the
// upstream request's headers, so the upstream's spans join the trace.
func (a *Attempt) Inject(h http.Header) {
	if a != nil {
		a.inject(h)
	}
}

func (a *Attempt) inject(h http.Header) {
	ctx := trace.ContextWithSpan(context.Background(), a.span)
	a.t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// FirstChunk records that a streamed answer's first chunk arrived: the
// time to first chunk, from the attempt's start. Later calls do nothing.
func (a *Attempt) FirstChunk() {
	if a != nil {
		a.firstChunk()
	}
}

func (a *Attempt) firstChunk() {
	now := a.t.clk.Now()
	if !a.first.CompareAndSwap(0, now.UnixNano()) {
		return
	}
	a.last.Store(now.UnixNano())
	d := now.Sub(a.start).Seconds()
	a.span.SetAttributes(keyTimeToFirstChunk.Float64(d))
	if a.chunkOpt != nil {
		a.t.inst.ttfc.Record(context.Background(), d, a.chunkOpt)
	}
}

// Chunk records a further chunk of a streamed answer: the time since the
// chunk before it. Before FirstChunk it counts as the first.
func (a *Attempt) Chunk() {
	if a != nil {
		a.chunk()
	}
}

func (a *Attempt) chunk() {
	if a.first.Load() == 0 {
		a.firstChunk()
		return
	}
	now := a.t.clk.Now().UnixNano()
	d := time.Duration(now - a.last.Swap(now)).Seconds()
	if a.chunkOpt != nil {
		a.t.inst.perChunk.Record(context.Background(), d, a.chunkOpt)
	}
}

// Output captures the answer's text and finish reason on the span
// (gen_ai.output.messages) when CaptureContent is on; otherwise it does
// nothing. Call it before End.
func (a *Attempt) Output(text, finishReason string) {
	if a != nil && a.t.capture {
		a.output(text, finishReason)
	}
}

func (a *Attempt) output(text, finishReason string) {
	out, truncated := outputMessages(text, finishReason, MaxContentBytes)
	a.span.SetAttributes(keyOutputMessages.String(out))
	if truncated {
		a.span.SetAttributes(keyContentTruncated.Bool(true))
	}
}
