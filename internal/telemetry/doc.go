// Package telemetry exports the gateway's OpenTelemetry traces and metrics
// over OTLP/HTTP, following the GenAI semantic conventions.
//
// A client request is a SERVER span named "{gen_ai.operation.name}
// {gen_ai.request.model}" (e.g. "chat fast"), continuing the client's W3C
// traceparent; each upstream attempt is a CLIENT span under it, named for
// the upstream's model ("chat gpt-4.1"), whose traceparent goes to the
// upstream. Targets passed over without an attempt are "fusebox.skip"
// events on the request's span. Every attempt, failed ones included,
// records the GenAI client metrics: operation duration, token usage (0
// when the answer had none), and for streams the time to the first chunk
// and the time per output chunk.
//
// The gateway calls it in this order:
//
//	ctx, req := tel.StartRequest(ctx, r, "chat", body.Model, body.Stream, body.MaxTokens)
//	defer req.End(status, errType)
//	req.Skip(target, reason)                     // each target passed over
//	a := req.StartAttempt(telemetry.AttemptInfo{…})
//	a.Inject(upstreamReq.Header)
//	a.FirstChunk(); a.Chunk() …                  // streams
//	a.End(telemetry.AttemptResult{…})
//
// A nil *Telemetry, *Request or *Attempt is valid and does nothing: with
// telemetry off the request path allocates nothing (BenchmarkRequestOff).
//
// Message contents are recorded only with Config.CaptureContent, as the
// conventions' opt-in gen_ai.input.messages and gen_ai.output.messages
// span attributes, each bounded to MaxContentBytes.
//
// docs/OBSERVABILITY.md lists every span, attribute and metric.
package telemetry
