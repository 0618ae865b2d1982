package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Request is one client request's span. Its methods are safe for
// concurrent use (hedged attempts run on their own goroutines), except
// that Input must come before the attempts it is to appear on. A nil
// *Request does nothing.
type Request struct {
	t         *Telemetry
	span      trace.Span
	operation string
	attempts  atomic.Int32
	ended     atomic.Bool
	// input is the captured gen_ai.input.messages ("" unless
	// CaptureContent), set by Input before the attempts.
	input          string
	inputTruncated bool
}

// StartRequest starts the SERVER span of a client request, continuing the
// trace of the request's traceparent and tracestate headers when it has
// them. operation is the GenAI operation ("chat", "embeddings"), model
// the model the client asked for (an alias or provider/model), stream and
// maxTokens what its body says (0: not given); r may be nil (a request
// the gateway makes itself). The gateway calls it once the body has been
// read, and must call End.
//
// On a nil *Telemetry it returns ctx and a nil *Request, allocating
// nothing.
func (t *Telemetry) StartRequest(ctx context.Context, r *http.Request, operation, model string, stream bool, maxTokens int) (_ context.Context, req *Request) {
	if t != nil {
		ctx, req = t.startRequest(ctx, r, operation, model, stream, maxTokens)
	}
	return ctx, req
}

func (t *Telemetry) startRequest(ctx context.Context, r *http.Request, operation, model string, stream bool, maxTokens int) (context.Context, *Request) {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, keyOperation.String(operation), keyRequestModel.String(model))
	if r != nil {
		ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		attrs = append(attrs, keyHTTPMethod.String(r.Method), keyURLPath.String(r.URL.Path))
	}
	attrs = append(attrs, requestParams(stream, maxTokens)...)
	ctx, span := t.tracer.Start(ctx, spanName(operation, model),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(t.clk.Now()), trace.WithAttributes(attrs...))
	return ctx, &Request{t: t, span: span, operation: operation}
}

// spanName is the conventions' "{gen_ai.operation.name} {gen_ai.request.model}".
func spanName(operation, model string) string {
	if model == "" {
		return operation
	}
	return operation + " " + model
}

// requestParams are the request attributes both spans carry:
// gen_ai.request.stream only when true (the conventions' "if and only if
// streaming"), max_tokens only when given.
func requestParams(stream bool, maxTokens int) []attribute.KeyValue {
	var kv []attribute.KeyValue
	if stream {
		kv = append(kv, keyRequestStream.Bool(true))
	}
	if maxTokens > 0 {
		kv = append(kv, keyRequestMaxTokens.Int(maxTokens))
	}
	return kv
}

// SetAlias records the configured alias the request's model resolved to
// (fusebox.alias), once the router has looked it up.
func (r *Request) SetAlias(alias string) {
	if r != nil {
		r.setAlias(alias)
	}
}

func (r *Request) setAlias(alias string) { r.span.SetAttributes(keyAlias.String(alias)) }

// Skip records a target passed over without an attempt (its breaker open,
// no usable key, …) as a fusebox.skip event on the request's span.
func (r *Request) Skip(target, reason string) {
	if r != nil {
		r.skip(target, reason)
	}
}

func (r *Request) skip(target, reason string) {
	r.span.AddEvent(eventSkip, trace.WithTimestamp(r.t.clk.Now()),
		trace.WithAttributes(keyTarget.String(target), keySkipReason.String(reason)))
}

// Input captures the request's messages from its chat-completions body
// for the attempt spans started after it (gen_ai.input.messages), when
// CaptureContent is on; otherwise it does nothing and body is not read.
func (r *Request) Input(body []byte) {
	if r == nil || !r.t.capture {
		return
	}
	r.input, r.inputTruncated = inputMessages(body, MaxContentBytes)
}

// End ends the request's span with the status code sent to the client
// and, when the request failed, errType: a short class of the failure
// (the last attempt's verdict, "no_target", "over_budget", …) recorded as
// error.type. A status of 500 or more, or 0 with an errType, marks the
// span as an error; a 4xx does not (the client's fault, not the
// gateway's). Later calls do nothing.
func (r *Request) End(status int, errType string) {
	if r != nil {
		r.end(status, errType)
	}
}

func (r *Request) end(status int, errType string) {
	if !r.ended.CompareAndSwap(false, true) {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, keyAttempts.Int(int(r.attempts.Load())))
	if status > 0 {
		attrs = append(attrs, keyHTTPStatus.Int(status))
	}
	if errType == "" && status >= 500 {
		errType = strconv.Itoa(status)
	}
	if errType != "" {
		attrs = append(attrs, keyErrorType.String(errType))
	}
	r.span.SetAttributes(attrs...)
	if status >= 500 || (status == 0 && errType != "") {
		r.span.SetStatus(codes.Error, errType)
	}
	r.span.End(trace.WithTimestamp(r.t.clk.Now()))
}

// SpanContext returns the request span's identity, for logs that want to
// name the trace. A nil *Request's is the zero (invalid) SpanContext.
func (r *Request) SpanContext() trace.SpanContext {
	if r == nil {
		return trace.SpanContext{}
	}
	return r.span.SpanContext()
}
