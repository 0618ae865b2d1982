package mcpgw

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/aierr"
)

// codeResourceNotFound is MCP's JSON-RPC code for a resource that does not
// exist.
const codeResourceNotFound = -32002

// classify says what a call's error means, as aierr does for providers: a
// JSON-RPC error the server answered with is the caller's bug (a parse,
// request, method or params error, an unknown resource) or the server's
// outage (an internal or implementation-defined server error), or a
// throttle when its message says so; a transport failure is an outage,
// unless ctx, the caller's own context, ended first. A tool's own error
// result (isError) is not an error at all: it is the tool's answer.
func classify(ctx context.Context, err error) aierr.Verdict {
	if err == nil {
		return aierr.Verdict{Kind: aierr.Success}
	}
	if ctx.Err() != nil {
		return aierr.Verdict{Kind: aierr.Canceled, Code: "canceled"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.Timeout, Code: "timeout"}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return classifyWire(we)
	}
	msg := err.Error()
	switch {
	case errors.Is(err, mcp.ErrSessionMissing):
		return aierr.Verdict{Kind: aierr.Outage, Code: "session_missing"}
	case errors.Is(err, mcp.ErrConnectionClosed):
		return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.ConnReset, Code: "connection_closed"}
	case strings.Contains(msg, "Too Many Requests"): // the SDK's text for an HTTP 429
		return aierr.Verdict{Kind: aierr.Throttle, Status: 429, Code: "too_many_requests"}
	case strings.Contains(msg, "Unauthorized"), strings.Contains(msg, "Forbidden"):
		return aierr.Verdict{Kind: aierr.Auth, Code: "unauthorized"}
	}
	v := aierr.ClassifyError(err)
	if v.Kind == aierr.Success || v.Kind == aierr.Canceled {
		v.Kind = aierr.Outage // the caller's context is live: the upstream failed
	}
	return v
}

// classifyWire reads a JSON-RPC error object.
func classifyWire(we *jsonrpc.Error) aierr.Verdict {
	v := aierr.Verdict{Message: we.Message}
	lower := strings.ToLower(we.Message)
	switch {
	case strings.Contains(lower, "rate limit"), strings.Contains(lower, "too many requests"):
		v.Kind, v.Code = aierr.Throttle, "rate_limited"
	case we.Code == jsonrpc.CodeParseError, we.Code == jsonrpc.CodeInvalidRequest,
		we.Code == jsonrpc.CodeMethodNotFound, we.Code == jsonrpc.CodeInvalidParams:
		v.Kind, v.Code = aierr.ClientError, "invalid_request"
	case we.Code == codeResourceNotFound:
		v.Kind, v.Sub, v.Code = aierr.ClientError, aierr.NotFound, "not_found"
	default: // -32603 internal error, -32000…-32099 server errors, the rest
		v.Kind, v.Code = aierr.Outage, "server_error"
	}
	return v
}

// outcome names a verdict for metrics and logs.
func outcome(v aierr.Verdict) string {
	if v.Kind == aierr.Outage && v.Sub == aierr.Timeout {
		return "timeout"
	}
	return v.Kind.String()
}
