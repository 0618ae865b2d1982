package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// errCanceled is the verdict of an attempt the gateway gave up on (a
// hedge's loser, the client gone): recorded, but not an error.
const errCanceled = "canceled"

// End ends the attempt's span with its result and records its metrics:
// the duration (with error.type when it failed) and the token usage, 0
// for an answer without usage. Only the first call counts.
func (a *Attempt) End(res AttemptResult) {
	if a != nil {
		a.end(&res)
	}
}

func (a *Attempt) end(res *AttemptResult) {
	if !a.ended.CompareAndSwap(false, true) {
		return
	}
	now := a.t.clk.Now()
	a.span.SetAttributes(a.resultAttrs(res)...)
	if res.ErrType != "" && res.ErrType != errCanceled {
		a.span.SetStatus(codes.Error, res.ErrType)
	}
	a.span.End(trace.WithTimestamp(now))
	a.record(res, now.Sub(a.start).Seconds())
}

// resultAttrs are the span attributes of how the attempt ended.
func (a *Attempt) resultAttrs(res *AttemptResult) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 10)
	if res.ResponseModel != "" {
		attrs = append(attrs, keyResponseModel.String(res.ResponseModel))
	}
	if res.ResponseID != "" {
		attrs = append(attrs, keyResponseID.String(res.ResponseID))
	}
	reasons := res.FinishReasons
	if len(reasons) == 0 && res.ErrType != "" && a.first.Load() != 0 {
		// A stream that broke after its first chunk: the conventions'
		// "error" for a finish reason expected and never received.
		reasons = []string{"error"}
	}
	if len(reasons) > 0 {
		attrs = append(attrs, keyFinishReasons.StringSlice(reasons))
	}
	attrs = append(attrs, keyInputTokens.Int(res.InputTokens), keyOutputTokens.Int(res.OutputTokens))
	if res.CacheReadTokens > 0 {
		attrs = append(attrs, keyCacheReadTokens.Int(res.CacheReadTokens))
	}
	if res.CacheWriteTokens > 0 {
		attrs = append(attrs, keyCacheWriteTokens.Int(res.CacheWriteTokens))
	}
	if res.Cost > 0 {
		attrs = append(attrs, keyCost.Float64(res.Cost))
	}
	if res.Status > 0 {
		attrs = append(attrs, keyHTTPStatus.Int(res.Status))
	}
	if res.ErrType != "" {
		attrs = append(attrs, keyErrorType.String(res.ErrType))
	}
	return attrs
}

// record adds the attempt's metric points. Every point carries the base
// attributes and gen_ai.response.model when known; the duration and the
// per-operation token histograms also error.type.
func (a *Attempt) record(res *AttemptResult, seconds float64) {
	ctx := trace.ContextWithSpan(context.Background(), a.span) // exemplars name the span
	attrs := make([]attribute.KeyValue, 0, len(a.base)+2)
	attrs = append(attrs, a.base...)
	if res.ResponseModel != "" {
		attrs = append(attrs, keyResponseModel.String(res.ResponseModel))
	}
	withErr := attrs
	if res.ErrType != "" {
		withErr = append(attrs[:len(attrs):len(attrs)], keyErrorType.String(res.ErrType))
	}
	failed := metric.WithAttributeSet(attribute.NewSet(withErr...))
	in := &a.t.inst
	in.duration.Record(ctx, seconds, failed)
	if !in.latest {
		for _, tt := range [2]struct {
			kind string
			n    int
		}{{"input", res.InputTokens}, {"output", res.OutputTokens}} {
			set := attribute.NewSet(append(attrs[:len(attrs):len(attrs)], keyTokenType.String(tt.kind))...)
			in.tokenUsage.Record(ctx, int64(tt.n), metric.WithAttributeSet(set))
		}
		return
	}
	in.opIn.Record(ctx, int64(res.InputTokens), failed)
	in.opOut.Record(ctx, int64(res.OutputTokens), failed)
	// The providers' usage is not broken down by modality.
	usage := metric.WithAttributeSet(attribute.NewSet(append(attrs[:len(attrs):len(attrs)], keyTokenModality.String("unknown"))...))
	in.usageIn.Add(ctx, int64(res.InputTokens), usage)
	in.usageOut.Add(ctx, int64(res.OutputTokens), usage)
	if res.CacheReadTokens > 0 {
		in.cacheRead.Add(ctx, int64(res.CacheReadTokens), usage)
	}
	if res.CacheWriteTokens > 0 {
		in.cacheWrite.Add(ctx, int64(res.CacheWriteTokens), usage)
	}
}

// SpanContext returns the attempt span's identity. A nil *Attempt's is the
// zero (invalid) SpanContext.
func (a *Attempt) SpanContext() trace.SpanContext {
	if a == nil {
		return trace.SpanContext{}
	}
	return a.span.SpanContext()
}
