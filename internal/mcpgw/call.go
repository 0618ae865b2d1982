package mcpgw

import (
	"context"
	"errors"
	"maps"
	"math"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// policy is how one tool's calls are made.
type policy struct {
	// repeat: the call may be sent again, to the next replica, after an
	// outage (the tool is read-only or idempotent).
	repeat bool
	// total bounds one attempt; deadline the whole call.
	total, deadline time.Duration
}

// policy returns the policy of the server's tool: its config's retry mode,
// else its annotations' hints; its timeouts, else the server's.
func (s *server) policy(tool string) policy {
	tc := s.cfg.Tool(tool)
	p := policy{repeat: tc.Retry == config.MCPRetryYes, total: tc.Timeouts.Total, deadline: tc.Timeouts.Deadline}
	if tc.Retry == config.MCPRetryAuto {
		s.mu.Lock()
		for _, t := range s.cat.tools {
			if t.Name == tool && t.Annotations != nil {
				p.repeat = t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint
			}
		}
		s.mu.Unlock()
	}
	if p.deadline == 0 {
		p.deadline = p.total * time.Duration(min(s.cfg.Attempts, len(s.replicas)))
	}
	return p
}

// callTool answers a client's tools/call of server s's tool, and records
// it.
func (g *Gateway) callTool(ctx context.Context, t *tenant, s *server, tool string, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := g.clk.Now()
	ctx, span := g.o.Telemetry.StartTool(ctx, federated(s.cfg.Name, tool), s.cfg.Name, "")
	c := Call{Client: t.name, Server: s.cfg.Name, Tool: tool}
	res, err := g.call(ctx, t, s, tool, req, &c)
	c.Duration = g.clk.Now().Sub(start)
	errType := c.Outcome
	if errType == "ok" || errType == "tool_error" {
		errType = ""
	}
	span.End(errType, c.Attempts)
	g.record(ctx, c)
	return res, err
}

// call makes the call under the client's rate limit and the tool's
// policy; c gets its outcome.
func (g *Gateway) call(ctx context.Context, t *tenant, s *server, tool string, req *mcp.CallToolRequest, c *Call) (*mcp.CallToolResult, error) {
	name := federated(s.cfg.Name, tool)
	if t.pacer != nil {
		if ok, wait := t.pacer.Allow(0); !ok {
			c.Outcome = "limited"
			return toolError("Tool " + name + " was not called: this client's tool calls are over their rate limit (" +
				strconv.Itoa(t.rights.RPM) + " a minute). Retry after " + seconds(wait) + " s."), nil
		}
	}
	pol := s.policy(tool)
	params := &mcp.CallToolParams{Meta: maps.Clone(req.Params.Meta), Name: tool, Arguments: req.Params.Arguments}
	if tok := req.Params.GetProgressToken(); tok != nil {
		id := g.progress.add(ctx, req.Session, tok)
		defer g.progress.remove(id)
		params.SetProgressToken(id)
	}
	var res *mcp.CallToolResult
	tr := s.try(ctx, tool, pol, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.CallTool(ctx, params)
		return err
	})
	c.Attempts, c.Replica, c.Outcome = tr.attempts, tr.replica, outcome(tr.v)
	switch {
	case tr.attempts == 0 && tr.open != nil:
		c.Outcome = "open"
		return toolError("Tool " + name + " is unavailable: server " + s.cfg.Name +
			" is failing and calls to it are paused. Retry after " + seconds(tr.open.RetryAfter()) + " s."), nil
	case tr.v.Kind == aierr.Success:
		if res.IsError {
			c.Outcome = "tool_error"
		} else {
			c.Outcome = "ok"
		}
		return res, nil
	case tr.v.Kind == aierr.ClientError, tr.v.Kind == aierr.Canceled:
		return nil, tr.err // the caller's bug (the server's JSON-RPC error, as it sent it) or its leaving
	}
	return toolError("Tool " + name + " failed: server " + s.cfg.Name + " " + failure(tr.v, pol) + "."), nil
}

// failure says in words why a call failed, for the model to read.
func failure(v aierr.Verdict, pol policy) string {
	switch {
	case v.Kind == aierr.Throttle:
		return "is rate-limiting the gateway; retry later"
	case v.Sub == aierr.Timeout:
		return "did not answer within " + pol.total.String()
	case v.Kind == aierr.Auth:
		return "refused the gateway's credentials"
	}
	return "had an error (" + v.Code + "); retry later"
}

// tried is how a call's attempts went.
type tried struct {
	v        aierr.Verdict
	err      error
	attempts int
	replica  string
	// open is the refusal of the breaker that opens again soonest, when
	// a replica was skipped.
	open *breaker.OpenError
}

// try sends fn to the server's replicas in order, skipping those whose
// breakers are open: the first that is closed gets it, and after an
// outage (or a throttle) the next gets it too if the call may be
// repeated, up to the server's attempts. A call never sent (a session that
// could not be opened) may always go on. ctx is the caller's.
func (s *server) try(ctx context.Context, tool string, pol policy, fn func(context.Context, *mcp.ClientSession) error) tried {
	dctx, cancel := context.WithTimeout(ctx, pol.deadline)
	defer cancel()
	var tr tried
	sent := false
	for _, r := range s.replicas {
		if tr.attempts >= s.cfg.Attempts || sent && !pol.repeat || dctx.Err() != nil {
			break
		}
		ps, oe := r.allow(tool)
		if oe != nil {
			if tr.open == nil || oe.RetryAfter() < tr.open.RetryAfter() {
				tr.open = oe
			}
			continue
		}
		tr.attempts++
		tr.replica = r.name
		var was bool
		tr.err, was = r.run(dctx, pol.total, fn)
		sent = sent || was
		tr.v = classify(ctx, tr.err)
		ps.report(tr.v, !was || tr.v.Code == "connection_closed" || tr.v.Code == "session_missing")
		if k := tr.v.Kind; k != aierr.Outage && k != aierr.Throttle {
			break
		}
	}
	if tr.attempts == 0 && tr.open == nil && tr.err == nil {
		tr.v, tr.err = aierr.Verdict{Kind: aierr.Outage, Code: "no_replica"}, errors.New("mcpgw: no replica to call")
	}
	return tr
}

// do runs a read (prompts/get, resources/read) on the server with the
// policy of a read-only tool; it returns the error the client should see.
func (s *server) do(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error {
	pol := policy{repeat: true, total: s.cfg.Timeouts.Total}
	pol.deadline = pol.total * time.Duration(min(s.cfg.Attempts, len(s.replicas)))
	tr := s.try(ctx, "", pol, fn)
	switch {
	case tr.attempts == 0 && tr.open != nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "server " + s.cfg.Name + " is unavailable; retry after " + seconds(tr.open.RetryAfter()) + " s"}
	case tr.v.Kind == aierr.Success, tr.v.Kind == aierr.ClientError, tr.v.Kind == aierr.Canceled:
		return tr.err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server " + s.cfg.Name + " " + failure(tr.v, pol)}
}

// run makes one attempt on the replica, the call within total. A call the session
// refused before writing it (the session had ended: the server restarted
// and no longer knows it, or the process exited) never reached the server:
// a session is opened again and the call sent once more. sent reports
// whether the call may have reached the server.
func (r *replica) run(ctx context.Context, total time.Duration, fn func(context.Context, *mcp.ClientSession) error) (err error, sent bool) {
	// Opening a session is bounded by connect (and the call's deadline),
	// the call itself by total.
	cs, err := r.session(ctx)
	if err != nil {
		return err, false
	}
	if err = r.send(ctx, total, cs, fn); notSent(err) {
		r.drop(cs)
		if cs, err = r.session(ctx); err != nil {
			return err, false
		}
		err = r.send(ctx, total, cs, fn)
	}
	if notSent(err) {
		r.drop(cs) // the next call opens another
		return err, false
	}
	return err, true
}

// send makes the call on session cs within total.
func (r *replica) send(ctx context.Context, total time.Duration, cs *mcp.ClientSession, fn func(context.Context, *mcp.ClientSession) error) error {
	actx, cancel := context.WithTimeout(ctx, total)
	defer cancel()
	return fn(actx, cs)
}

// notSent reports an error of a call that was never written: the SDK
// answers ErrConnectionClosed for a call made on a session that is
// closing (an in-flight call whose connection breaks gets the read error
// instead), and ErrSessionMissing for a session the server does not know.
func notSent(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing)
}

// permits are an attempt's admissions: its replica's breaker's and, with
// breaker_per_tool, its tool's (a zero Permit ignores reports).
type permits struct {
	srv, tool breaker.Permit
	perTool   bool
}

// allow asks the replica's breakers to admit a call of tool.
func (r *replica) allow(tool string) (permits, *breaker.OpenError) {
	p, err := r.breaker.Allow()
	if err != nil {
		return permits{}, openError(err)
	}
	tb := r.toolBreaker(tool)
	if tb == nil || tool == "" {
		return permits{srv: p}, nil
	}
	q, err := tb.Allow()
	if err != nil {
		p.Ignore()
		return permits{}, openError(err)
	}
	return permits{p, q, true}, nil
}

// report records an attempt's verdict with both breakers. With a breaker
// per tool, a tool's failure is its own breaker's: the replica's counts
// only the failures of the replica itself (a session that could not be
// opened or was lost), so one broken tool leaves the others callable.
func (ps permits) report(v aierr.Verdict, replicaFault bool) {
	o := verdictOutcome(v)
	ps.tool.Report(o)
	if ps.perTool && o.Result == breaker.Failure && !replicaFault {
		ps.srv.Ignore()
		return
	}
	ps.srv.Report(o)
}

// verdictOutcome is what a breaker records for a verdict.
func verdictOutcome(v aierr.Verdict) breaker.Outcome {
	switch v.Breaker() {
	case aierr.BreakerSuccess:
		return breaker.Outcome{Result: breaker.Success}
	case aierr.BreakerFailure:
		return breaker.Outcome{Result: breaker.Failure}
	}
	return breaker.Outcome{Result: breaker.Ignored}
}

// openError returns a breaker's refusal as an *OpenError.
func openError(err error) *breaker.OpenError {
	var oe *breaker.OpenError
	if errors.As(err, &oe) {
		return oe
	}
	return &breaker.OpenError{}
}

// toolError is a tool result saying that the call failed, in words a model
// reads: a result, not a JSON-RPC error, so the model can act on it.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// seconds renders a wait as whole seconds, at least 1.
func seconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
