package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The GenAI conventions' tool attributes, and Fusebox's MCP server.
var (
	keyToolName    = attribute.Key("gen_ai.tool.name")
	keyToolType    = attribute.Key("gen_ai.tool.type")
	keyToolCallID  = attribute.Key("gen_ai.tool.call.id")
	keyMCPServer   = attribute.Key("fusebox.mcp.server")
	keyMCPAttempts = keyAttempts
)

// Tool is the span of one MCP tool call through the gateway, named as the
// GenAI conventions name tool execution: "execute_tool {gen_ai.tool.name}".
// A nil *Tool does nothing.
type Tool struct {
	t    *Telemetry
	span trace.Span
}

// StartTool starts the span of a call of tool (the name clients see,
// server__tool) on MCP server server; callID is the JSON-RPC request id,
// "" when unknown. On a nil *Telemetry it returns ctx and a nil *Tool.
func (t *Telemetry) StartTool(ctx context.Context, tool, server, callID string) (context.Context, *Tool) {
	if t == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{keyOperation.String("execute_tool"), keyToolName.String(tool),
		keyToolType.String("extension"), keyMCPServer.String(server)}
	if callID != "" {
		attrs = append(attrs, keyToolCallID.String(callID))
	}
	ctx, span := t.tracer.Start(ctx, "execute_tool "+tool, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(t.clk.Now()), trace.WithAttributes(attrs...))
	return ctx, &Tool{t: t, span: span}
}

// End ends the span: errType is the call's failure class ("" on success,
// a tool's own error result included), attempts the replicas it was sent
// to.
func (s *Tool) End(errType string, attempts int) {
	if s == nil {
		return
	}
	s.span.SetAttributes(keyMCPAttempts.Int(attempts))
	if errType != "" {
		s.span.SetAttributes(keyErrorType.String(errType))
		s.span.SetStatus(codes.Error, errType)
	}
	s.span.End(trace.WithTimestamp(s.t.clk.Now()))
}
