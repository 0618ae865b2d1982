package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/cache"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/geminiapi"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
	"github.com/fuseboxhq/fusebox/limit"
)

// exchange is one client request on its way through the gateway.
type exchange struct {
	s      *Server
	st     *state // the configuration in force when the request came
	w      http.ResponseWriter
	r      *http.Request
	id     string
	start  time.Time
	alias  *router.Alias
	walk   *router.Walk
	stream bool
	// messages: the client speaks Anthropic's Messages API; model is the
	// model it asked for, named in translated answers.
	messages bool
	model    string
	native   []byte // the client's Messages body, for targets that take it as it is
	// gem, for a Gemini API request, is what it keeps of itself.
	gem *geminiExchange
	// resp, for a Responses API request, is its translation's state.
	resp *respExchange
	// trace, with otel enabled, is the request's tracing.
	trace     *trace
	fields    aireq.Fields
	client    string  // the client key's name, "" with none
	clientRef *client // the client, nil with none
	// cache is the alias's response cache, when the request may use it.
	cache    *aliasCache
	cacheKey cache.KeyHash
	// idemKey and idemRec are set when this request owns an idempotency
	// key: its answer is kept for replays.
	idemKey [32]byte
	idemRec *idemRecord
	// idemShared: the fleet's record of the key is this request's too.
	idemShared bool
	// hideUsage: the gateway asked a stream for its usage; the usage-only
	// chunk is not passed on.
	hideUsage bool
	// rec is w, for capturing an answer as it is sent; recv is where it
	// lives, in the exchange's own allocation.
	rec  *recorder
	recv recorder
	// nativeStart is the usage of a native Anthropic stream's
	// message_start, priced with its message_delta.
	nativeStart *usage
	// cost is the answer's price in USD, once known; tokensIn and
	// tokensOut its usage.
	cost                float64
	tokensIn, tokensOut int
	// answerUsage holds the usage read from a whole answer (usageInto),
	// so reading it allocates nothing.
	answerUsage usage
	// priorIn and priorOut are the tokens of earlier answers of the
	// exchange (a continued stream's first part).
	priorIn, priorOut int
	// contBy is the target that finished a continued stream.
	contBy string
	// prior is what earlier answers of the exchange cost (a continued
	// stream's first part, hedges that lost their race).
	prior float64
	// outcome is how an answer begun ended when its status does not
	// say: "broken" (cut after commit), "deadline" (cut by the request's
	// deadline), "canceled" (the client left), "continued" (finished by
	// another target); "" otherwise.
	outcome string
	// out is where a committed stream goes; broken what its client is
	// told if it breaks; cont, with continue_on_failure, the text sent so
	// far; body the request body the walk sends.
	out    sink
	prev   *router.Attempt // the attempt a continuation follows
	broken sse.ErrorEvent
	cont   *delivered
	join   *splice // a continuation's seam, while it runs
	body   []byte
	// bodyLen is len(body), kept once body is let go (letGoOfRequest).
	bodyLen int
	// ctx is the request's context with its deadline, once the walk runs;
	// drain, when set, keeps an answer read after its client left.
	ctx   context.Context
	drain *drain
	// wdAt is when the client connection's write deadline was last set
	// (zero: never); noDeadlines that the writer has none to set (an
	// in-process caller's), so they are not asked for again.
	wdAt        time.Time
	noDeadlines bool
	// hv holds the values of the answer's own headers (see setHeader).
	hv [12]string
	hn int
	// reserved is what the request holds of its client's budget until it
	// is settled; priced reports that an answer's usage was priced;
	// delivered that an upstream's 2xx was handed over; tpm the
	// request's reservation of its client's tokens per minute.
	reserved          float64
	resv              fleet.Reservation // the fleet's, with state: redis://…
	priced, delivered bool
	tpm               limit.Reservation
	// served is the attempt whose usage was priced last: its target's
	// tpm is settled from it at the end.
	served *router.Attempt
	// loggedBody is the start of the request body, for the request log
	// with log_content on; nil otherwise.
	loggedBody []byte
	// caller is the authenticated client's name, for the request log even
	// of a request refused before it is routed.
	caller string
}

// error writes an error in the client's API's shape.
func (x *exchange) error(status int, typ, code, param, msg string) {
	switch {
	case x.messages:
		writeAnthropicError(x.w, status, msg)
	case x.gem != nil:
		geminiapi.WriteError(x.w, status, googleStatus(status), msg)
	default:
		writeError(x.w, status, typ, code, param, msg)
	}
}

func (x *exchange) badRequest(param, msg string) {
	x.error(http.StatusBadRequest, "invalid_request_error", "", param, msg)
}

// handleProxy serves an operation that goes to a target: chat completions
// (which may stream) and embeddings.
func (s *Server) handleProxy(path string, chat, messages bool) http.HandlerFunc {
	return s.handleAPI(path, chat, messages, false)
}

// handleAPI serves an operation that goes to a target, in the client's
// API: OpenAI's chat and embeddings, Anthropic's Messages (messages), or
// OpenAI's Responses (responses), the last two translated to chat.
func (s *Server) handleAPI(path string, chat, messages, responses bool) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		x := s.newExchange(rw, r, messages)
		w := x.rec
		defer x.finish(w)
		x.setHeader("X-Request-Id", x.id)
		c, ok := s.authenticate(x.st, w, r)
		if !ok {
			return
		}
		if c != nil {
			x.caller = c.name
		}
		body, ok := x.readBody()
		if !ok {
			return
		}
		if responses {
			if c != nil {
				x.client = c.name // the owner of stored responses
			}
			if body, ok = x.fromResponses(body); !ok {
				return
			}
		}
		if messages {
			nf := aireq.Scan(body)
			if c := nf.Conflict; c.Reason != "" {
				x.ambiguous(c)
				return
			}
			if x.model = nf.ModelName(); x.model == "" {
				x.badRequest("model", "model: Field required")
				return
			}
			x.native = body
			var err error
			if body, err = anthropic.FromMessagesRequest(body); err != nil {
				x.badRequest("", err.Error())
				return
			}
		}
		x.route(c, path, body, chat)
	}
}

// newExchange begins the exchange of request r, answered on rw: the
// exchange and its recorder are one allocation.
func (s *Server) newExchange(rw http.ResponseWriter, r *http.Request, messages bool) *exchange {
	x := &exchange{s: s, st: s.state(), r: r, id: requestID(r), start: s.clk.Now(), messages: messages}
	x.recv.ResponseWriter = rw
	x.w, x.rec = &x.recv, &x.recv
	return x
}

// route sends a request, in OpenAI's chat format (or embeddings), down
// its model's ladder and answers the client in its own API.
func (x *exchange) route(c *client, path string, body []byte, chat bool) {
	r := x.r
	f, ok := x.validate(body, chat)
	if !ok {
		return
	}
	model := f.ModelName() // as the upstream reads it
	if !c.allows(model) {
		x.error(http.StatusForbidden, "invalid_request_error", "model_not_allowed", "model",
			"Your key is not allowed to use the model `"+model+"`.")
		return
	}
	alias, ok := x.st.router.Lookup(model)
	if !ok {
		x.error(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
			"The model `"+model+"` does not exist. Use a configured model alias or provider/model.")
		return
	}
	x.alias, x.stream, x.fields = alias, chat && f.Stream, f
	if c != nil && c.budget != nil && alias.Direct && alias.Price(alias.Targets[0]) == (router.Price{}) {
		x.error(http.StatusForbidden, "invalid_request_error", "model_not_priced", "model",
			"The model `"+model+"` has no price in the Fusebox configuration (providers."+alias.Targets[0].Provider+
				".price), so it cannot be counted against your key's budget. Use a configured model alias.")
		return
	}
	if c != nil {
		x.client, x.clientRef = c.name, c
		if !x.checkBudget(c, body) || !x.paced(c, f.Tokens(len(body))) {
			return
		}
	}
	idemBody := body
	switch {
	case x.messages:
		idemBody = x.native // the client's own body, not its translation
	case x.resp != nil:
		idemBody = x.resp.body
	case x.gem != nil:
		idemBody = x.gem.body
	}
	if x.idempotent(idemBody) {
		return
	}
	if chat && x.lookup(body, x.client) {
		return
	}
	ctx := r.Context()
	if c != nil && (c.budget != nil || c.pacer != nil) {
		x.drain = x.s.newDrain(ctx, x.st.cfg.Server.UsageDrain)
	}
	if x.drain != nil {
		ctx = x.drain.ctx
		defer x.drain.end()
	}
	if d := alias.Deadline(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = x.s.deadline(ctx, d)
		defer cancel()
	}
	if x.stream && !x.messages && !f.IncludeUsage {
		// Ask for the usage the client did not, to price the answer
		// (and count it against budgets); the usage chunk is kept from
		// the client, who did not ask for it.
		if b, g := withUsage(f, body); b != nil {
			body, f, x.hideUsage = b, g, true
		}
	}
	x.body, x.bodyLen = body, len(body)
	req := &router.Request{
		Path: path, Body: body, Fields: f, Stream: x.stream,
		Tokens: f.Tokens(len(body)), IdempotencyKey: r.Header.Get("Idempotency-Key"), Native: x.native,
		Session: cmp.Or(r.Header.Get("X-Fusebox-Session"), f.UserID()),
		Flow:    x.client, Weight: x.weight(), Header: forwardHeaders(r.Header, x.st.forward),
	}
	if x.resp != nil {
		req.Responses, req.Unservable = x.resp.native, x.resp.unservable
	}
	if x.stream {
		req.Prepare = x
		if alias.Continues() {
			x.cont = &delivered{}
		}
	}
	x.startTrace(req, operation(path))
	x.walk = x.st.router.Start(alias, req)
	if x.stream {
		x.serveStream(ctx)
	} else {
		x.serve(ctx)
	}
}

// withUsage returns body asking the upstream for the stream's usage, or
// nil when it cannot be rewritten: stream_options is added, or, when the
// client sent one without include_usage (or with include_usage: false),
// its include_usage is set. A client cannot make its stream free. The
// fields returned are the new body's; adding stream_options, the common
// case, costs no second reading of it.
func withUsage(f aireq.Fields, body []byte) ([]byte, aireq.Fields) {
	if !f.StreamOptions {
		if b, g := f.WithIncludeUsageFields(body); len(b) != len(body) {
			return b, g
		}
		return nil, f
	}
	var m map[string]json.RawMessage
	var opts map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || json.Unmarshal(m["stream_options"], &opts) != nil {
		return nil, f
	}
	if opts == nil {
		opts = map[string]json.RawMessage{}
	}
	opts["include_usage"] = json.RawMessage("true")
	m["stream_options"], _ = json.Marshal(opts)
	b, err := json.Marshal(m)
	if err != nil {
		return nil, f
	}
	return b, aireq.Scan(b)
}

// readBody reads the request body within the server block's size and
// time limits: 413 past the size, 408 past the time, each in the API's
// error shape. The time limit is a read deadline on the connection, lifted
// once the body is in, so the answer may take as long as it needs.
func (x *exchange) readBody() ([]byte, bool) {
	limits := x.st.cfg.Server
	rc := http.NewResponseController(x.w)
	derr := rc.SetReadDeadline(time.Now().Add(limits.BodyTimeout))
	x.noDeadlines = errors.Is(derr, http.ErrNotSupported)
	var body []byte
	var err error
	if n := x.r.ContentLength; n > 0 && n <= int64(limits.MaxBodyBytes) {
		// readFull reads no more than the n bytes declared, within the
		// limit: no MaxBytesReader to allocate.
		body, err = readFull(x.r.Body, n)
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(x.w, x.r.Body, int64(limits.MaxBodyBytes)))
	}
	if derr == nil {
		rc.SetReadDeadline(time.Time{})
	}
	if err == nil {
		if x.s.testHookBody != nil {
			x.s.testHookBody(body)
		}
		if x.s.reqlog.Content() {
			x.loggedBody = append([]byte(nil), body[:min(len(body), 64<<10)]...)
		}
		return body, true
	}
	x.bodyError(err)
	return nil, false
}

// bodyError answers a request whose body could not be read: 413 past the
// size, 408 past the time, 400 otherwise. (Apart from readBody, so that
// the targets of errors.As are not allocated for every body read.)
func (x *exchange) bodyError(err error) {
	limits := x.st.cfg.Server
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		x.error(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "",
			"Request body too large: the limit is "+strconv.Itoa(limits.MaxBodyBytes)+" bytes.")
	case errors.As(err, &ne) && ne.Timeout():
		x.w.Header().Set("Connection", "close")
		x.error(http.StatusRequestTimeout, "invalid_request_error", "request_timeout", "",
			"The request body did not arrive within "+limits.BodyTimeout.String()+".")
	default:
		x.badRequest("", "Could not read the request body: "+err.Error())
	}
}

// writeDeadline bounds the next writes to the client by the server
// block's write_timeout: a client that stops reading is dropped rather
// than holding the exchange. The deadline is moved on at most every
// quarter of the timeout, so a stream pays for it rarely, not per event.
func (x *exchange) writeDeadline() {
	wt := x.st.cfg.Server.WriteTimeout
	if wt <= 0 || x.noDeadlines {
		return
	}
	now := time.Now() // a socket deadline is real time
	if !x.wdAt.IsZero() && now.Sub(x.wdAt) < wt/4 {
		return
	}
	x.wdAt = now
	http.NewResponseController(x.w).SetWriteDeadline(now.Add(wt))
}

// weight returns the client's share of a saturated target.
func (x *exchange) weight() float64 {
	if x.clientRef == nil {
		return 1
	}
	return x.clientRef.weight
}

// paced applies the client's own rpm/tpm: over them, a 429 with
// Retry-After, and nothing is sent upstream.
func (x *exchange) paced(c *client, tokens int) bool {
	if c.pacer == nil {
		return true
	}
	r, ok, wait := c.pacer.TryReserve(tokens)
	if ok {
		x.tpm = r
		return true
	}
	x.w.Header().Set("Retry-After", retryAfter(wait))
	x.error(http.StatusTooManyRequests, "rate_limit_exceeded", "client_rate_limit_exceeded", "",
		"Rate limit reached for client "+strconv.Quote(c.name)+" (its rpm/tpm in the Fusebox configuration). Try again in "+
			retryAfter(wait)+"s.")
	return false
}

// settleTokens corrects the client's and the serving target's tpm
// reservations with the tokens the answer used, when its usage is known.
func (x *exchange) settleTokens() {
	if x.priced {
		x.tpm.Settle(x.tokensIn + x.tokensOut)
		x.served.Used(x.tokensIn + x.tokensOut)
	}
}

// finish records the request in the metrics and the access log: what was
// asked, who served, how it went. Never a key or a body.
func (x *exchange) finish(w *recorder) {
	defer x.trace.end(w.code())
	x.accountLost()
	x.settleBudget()
	x.settleTokens()
	if !x.wdAt.IsZero() {
		// The connection may serve another request: no deadline left.
		http.NewResponseController(x.w).SetWriteDeadline(time.Time{})
	}
	x.idemEnd(nil, "", "", false) // not kept: the key is free again
	d := x.s.since(x.start)
	model := ""
	if x.alias != nil {
		model = x.alias.Name
	}
	x.s.metrics.Request(model, x.client, w.code(), d)
	attempts := 0
	if x.walk != nil {
		attempts = x.walk.Attempts
	}
	h := w.Header()
	target := cmp.Or(x.contBy, h.Get("X-Fusebox-Target"))
	if x.s.reqlog != nil {
		x.logRequest(w, model, target, d, attempts)
	}
	ctx, lh := x.r.Context(), x.s.log.Handler()
	if !lh.Enabled(ctx, slog.LevelInfo) {
		return
	}
	// Straight to the handler, with typed attributes: no caller lookup,
	// no boxing, no argument slice to build.
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("id", x.id), slog.String("client", x.client), slog.String("path", x.r.URL.Path),
		slog.String("model", model), slog.Bool("stream", x.stream), slog.Int("status", w.code()),
		slog.String("target", target), slog.Int("attempts", attempts),
		slog.String("outcome", x.logOutcome(w)),
		slog.String("tried", x.loggedTried(h)), slog.String("cache", h.Get("X-Fusebox-Cache")),
		slog.Int("tokens_in", x.priorIn+x.tokensIn), slog.Int("tokens_out", x.priorOut+x.tokensOut),
		slog.Float64("cost_usd", x.prior+x.cost), slog.Float64("duration_ms", float64(d.Microseconds())/1000))
	if x.prev != nil {
		rec.AddAttrs(slog.String("continued_from", x.prev.Target.Name))
	}
	lh.Handle(ctx, rec)
}

// logOutcome says how the request ended, for the access log: "ok",
// "error" (an error status), or how a stream begun ended.
func (x *exchange) logOutcome(w *recorder) string {
	switch {
	case x.outcome != "":
		return x.outcome
	case w.status == 0:
		return "canceled"
	case w.status >= 400:
		return "error"
	}
	return "ok"
}

// ambiguous refuses a body whose routing fields a decoder could read
// otherwise than the gateway did (a duplicate, a case variant, an escaped
// or invalid key, a wrong type): what the gateway routes, allows and
// prices must be what the upstream runs.
func (x *exchange) ambiguous(c aireq.Conflict) {
	field := c.Field
	msg := "The request body is ambiguous: "
	switch c.Reason {
	case aireq.ReasonDuplicate:
		msg += "the field '" + field + "' appears more than once (counting escaped and differently written names)."
	case aireq.ReasonCaseVariant:
		msg += "a field is named like '" + field + "' but not exactly so; send it as '" + field + "'."
	case aireq.ReasonType:
		msg += "the field '" + field + "' has the wrong type."
	default:
		msg += "a field name or value is not valid JSON text (invalid UTF-8, a lone surrogate, an unknown escape)."
	}
	x.badRequest(field, msg)
}

// validate checks the body is a JSON object with what the operation needs,
// answering 400 with a precise message when it is not. One pass decides
// both the fields and the validity (aireq.ScanValid, proved equal to
// json.Valid by its fuzz test).
func (x *exchange) validate(body []byte, chat bool) (aireq.Fields, bool) {
	f := aireq.ScanValid(body)
	if !f.Valid {
		x.badRequest("", "We could not parse the JSON body of your request. The body must be a JSON object.")
		return f, false
	}
	if c := f.Conflict; c.Reason != "" {
		x.ambiguous(c)
		return f, false
	}
	if len(f.Model) == 0 {
		x.badRequest("model", "You must provide a model parameter.")
		return f, false
	}
	if chat {
		switch f.Messages {
		case '[':
		case 0, 'n':
			x.badRequest("messages", "Missing required parameter: 'messages'.")
			return f, false
		default:
			x.badRequest("messages", "Invalid type for 'messages': expected an array.")
			return f, false
		}
	}
	return f, true
}

// maxBuffered is the largest non-streamed answer read whole before it is
// sent (for its usage, its cost header, the cache and failover on a broken
// read); a larger one is passed through as it comes.
const maxBuffered = 32 << 20

// serve answers a non-streamed request. The answer is read whole before a
// byte is sent, so an upstream that breaks off mid-body is left for the
// next target without the client seeing it.
func (x *exchange) serve(ctx context.Context) {
	for {
		a, err := x.walk.Next(ctx)
		if err != nil {
			x.fail(err)
			return
		}
		x.delivered = x.delivered || !a.Final
		if x.messages {
			x.headers(a, x.s.clk.Now())
			if x.serveMessages(a) {
				return
			}
			continue // nothing sent yet: on to the next target
		}
		if x.resp != nil {
			x.headers(a, x.s.clk.Now())
			if x.serveResponses(a) {
				return
			}
			continue // nothing sent yet: on to the next target
		}
		if x.gem != nil {
			x.headers(a, x.s.clk.Now())
			if x.serveGemini(a) {
				return
			}
			continue // nothing sent yet: on to the next target
		}
		if a.Final {
			x.headers(a, x.s.clk.Now())
			x.copyAnswer(a, nil)
			return
		}
		x.drain.hold(true)
		body, err := readAnswer(a.Resp.Body, a.Resp.ContentLength, maxBuffered+1)
		x.drain.hold(false)
		switch {
		case err != nil && (x.r.Context().Err() != nil || x.drain.clientGone()):
			a.Resp.Body.Close()
			a.Abandon()
			return
		case err != nil:
			a.Resp.Body.Close()
			a.Fail(x.s.classifyReadError(err))
			continue // nothing sent yet: on to the next target
		case len(body) > maxBuffered:
			x.headers(a, x.s.clk.Now())
			x.copyAnswer(a, body)
			return
		case !jsonObject(body):
			a.Resp.Body.Close()
			a.Fail(invalidAnswer(a))
			continue // nothing sent yet: on to the next target
		}
		a.Resp.Body.Close()
		a.Succeed()
		x.headers(a, x.s.clk.Now())
		if a.Resp.StatusCode == http.StatusOK {
			x.trace.answered(a, body)
			x.account(a, usageInto(&x.answerUsage, body))
		}
		if a.Resp.StatusCode == http.StatusOK {
			// Kept before it is sent, so the client's next request finds it.
			x.keep(body, a.Resp.Header.Get("Content-Type"), a.Target.Name)
		}
		x.setHeader("Content-Type", a.Resp.Header.Get("Content-Type"))
		x.setHeader("Content-Length", strconv.Itoa(len(body)))
		x.writeDeadline()
		x.w.WriteHeader(a.Resp.StatusCode)
		x.w.Write(body)
		return
	}
}

// jsonObject reports whether body looks like a whole JSON object: its
// first and last bytes other than white space are braces. A 2xx answer that
// is not (an HTML page from a proxy in the way, a cut body) is no answer.
// It costs next to nothing; the client's JSON parser does the rest.
func jsonObject(body []byte) bool {
	b := bytes.TrimSpace(body)
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'
}

// errInvalidAnswer is a 2xx answer that is not a JSON object.
var errInvalidAnswer = errors.New("the answer is not a JSON object")

// invalidAnswer is the verdict on such an answer: an outage of its target.
func invalidAnswer(a *router.Attempt) aierr.Verdict {
	v := aierr.ClassifyError(errInvalidAnswer)
	v.Status, v.Code = a.Resp.StatusCode, "invalid_answer"
	v.Message = "a " + strconv.Itoa(a.Resp.StatusCode) + " answer that is not a JSON object (" + a.Resp.Header.Get("Content-Type") + ")"
	return v
}

// copyAnswer passes an answer through as it comes (after prefix, already
// read): a client error, or an answer too large to hold.
func (x *exchange) copyAnswer(a *router.Attempt, prefix []byte) {
	h := x.w.Header()
	for _, k := range []string{"Content-Type", "Retry-After"} {
		if v := a.Resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	if a.Resp.ContentLength >= 0 {
		h.Set("Content-Length", strconv.FormatInt(a.Resp.ContentLength, 10))
	}
	x.w.WriteHeader(a.Resp.StatusCode)
	x.w.Write(prefix)
	_, err := io.Copy(x.w, a.Resp.Body)
	a.Resp.Body.Close()
	switch {
	case a.Final:
	case err == nil:
		a.Succeed()
	case x.r.Context().Err() != nil:
		a.Abandon()
	default:
		a.Fail(x.s.classifyReadError(err))
	}
}

// headers sets the response headers that say how the gateway served;
// answered is when the answering attempt's response arrived.
func (x *exchange) headers(a *router.Attempt, answered time.Time) {
	x.setHeader("X-Fusebox-Target", a.Target.Name)
	x.setHeader("X-Fusebox-Attempts", strconv.Itoa(x.walk.Attempts))
	x.setHeader("X-Fusebox-Tried", x.tried())
	// The gateway's own time, in whole microseconds: everything before the
	// answering attempt was sent (including failed attempts and waits) and
	// after it answered, less the wait for an attempt a hedge beat, which
	// has its own header.
	own := a.Start.Sub(x.start) - a.HedgeWait + x.s.since(answered)
	x.setHeader("X-Fusebox-Overhead-Us", strconv.FormatInt(own.Microseconds(), 10))
	if a.HedgeWait > 0 {
		x.setHeader("X-Fusebox-Hedge-Wait-Us", strconv.FormatInt(a.HedgeWait.Microseconds(), 10))
	}
}

// setHeader sets header k (canonical) of the answer to v. The value's
// one-element slice is cut from the exchange's own array, capacity one so
// that an Add elsewhere copies rather than overwrites its neighbour: the
// gateway's dozen headers cost no allocation each.
func (x *exchange) setHeader(k, v string) {
	if x.hn == len(x.hv) {
		x.w.Header().Set(k, v)
		return
	}
	x.hv[x.hn] = v
	x.w.Header()[k] = x.hv[x.hn : x.hn+1 : x.hn+1]
	x.hn++
}

// tried lists the targets passed over, for the X-Fusebox-Tried header:
// "none" when the first target tried answered.
func (x *exchange) tried() string {
	if x.walk == nil || len(x.walk.Skips) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, s := range x.walk.Skips {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.Target + ": " + s.Reason)
	}
	return b.String()
}

// fail answers when the walk found no target, or the request's time ran
// out, or the client left.
func (x *exchange) fail(err error) {
	var nt *router.NoTargetError
	if errors.As(err, &nt) && nt.Unservable != nil {
		x.unservable(nt)
		return
	}
	if (errors.As(err, &nt) || errors.Is(err, context.DeadlineExceeded)) && x.r.Context().Err() == nil && x.rescue() {
		return
	}
	switch {
	case errors.As(err, &nt):
		if nt.RetryAfter > 0 {
			x.w.Header().Set("Retry-After", retryAfter(nt.RetryAfter))
		}
		x.w.Header().Set("X-Fusebox-Tried", x.tried())
		x.w.Header().Set("X-Fusebox-Attempts", strconv.Itoa(x.walk.Attempts))
		x.error(http.StatusServiceUnavailable, "service_unavailable", "no_target_available", "",
			"Fusebox could not get an answer for model `"+nt.Alias+"` from any of its targets: "+describeSkips(nt.Skips)+".")
	case x.r.Context().Err() != nil:
		// The client has gone: nobody to answer.
	case errors.Is(err, context.DeadlineExceeded):
		x.error(http.StatusGatewayTimeout, "timeout", "request_timeout", "",
			"No target answered within the model's deadline ("+x.alias.Deadline().String()+").")
	default:
		x.error(http.StatusBadGateway, "upstream_error", "", "", err.Error())
	}
}

// unservable answers a request that no target of the alias can serve as
// it is (a field none of them has): the client's to change, a 400 naming
// the field and each target's reason.
func (x *exchange) unservable(nt *router.NoTargetError) {
	u := nt.Unservable
	x.w.Header().Set("X-Fusebox-Tried", x.tried())
	x.error(http.StatusBadRequest, "invalid_request_error", u.Code, u.Param,
		"No target of model `"+nt.Alias+"` can serve this request: "+u.Message+" (tried "+describeSkips(nt.Skips)+").")
}

func describeSkips(skips []router.Skip) string {
	if len(skips) == 0 {
		return "none could be tried"
	}
	parts := make([]string, len(skips))
	for i, s := range skips {
		parts[i] = s.Target + " (" + s.Reason + ")"
	}
	return strings.Join(parts, ", ")
}

// recorder remembers the status written, for metrics and logs; Unwrap lets
// http.ResponseController reach the Flusher underneath.
type recorder struct {
	http.ResponseWriter
	status int
	// capturing keeps a copy of the body written, up to limit bytes (an
	// idempotent Messages answer is stored as it was sent); over the
	// limit the copy is dropped.
	capturing bool
	captured  []byte
	limit     int64
}

// capture starts keeping a copy of what is written, up to limit bytes.
func (r *recorder) capture(limit int64) { r.capturing, r.limit = true, limit }

// copied returns the copy of the body written, nil if it outgrew its limit
// or none was asked for.
func (r *recorder) copied() []byte {
	if !r.capturing {
		return nil
	}
	return r.captured
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.capturing {
		if int64(len(r.captured)+len(p)) > r.limit {
			r.capturing, r.captured = false, nil
		} else {
			r.captured = append(r.captured, p...)
		}
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// code returns the status sent, or 499 when the client left before any.
func (r *recorder) code() int {
	if r.status == 0 {
		return 499
	}
	return r.status
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
