package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/cache"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// serveStream answers a streamed chat completion. The walk hands over an
// attempt whose first content has arrived: prepare, run by the walk under
// the attempt's TTFB watchdog, read its events and held back those before
// the content, so that any failure until then (an error, an in-stream
// error event, silence past the TTFB budget, an end without content) sent
// the walk on to the next target without the client seeing anything. The
// first content commits: the held events and everything after are written
// and flushed event by event. After that, a failure ends the stream with an
// error event and no [DONE], so no client mistakes a cut answer for a whole
// one; a stream whose answer had finished (a finish_reason) when its
// connection closed is complete, and is ended as such.
func (x *exchange) serveStream(ctx context.Context) {
	x.ctx = ctx
	for {
		a, err := x.walk.Next(ctx)
		switch {
		case x.out != nil && (err != nil || a.Final):
			// A continuation found no target: the stream stays broken.
			if err == nil {
				a.Resp.Body.Close()
			}
			x.outcome = "broken"
			x.out.Broken(x.broken)
			return
		case err != nil:
			x.fail(err)
			return
		case a.Final:
			x.passFinal(a)
			return
		}
		x.delivered = true
		if x.relay(a) {
			return
		}
	}
}

// passFinal returns a client error as the upstream gave it.
func (x *exchange) passFinal(a *router.Attempt) {
	x.headers(a, x.s.clk.Now())
	if x.messages || x.gem != nil {
		body, _ := io.ReadAll(io.LimitReader(a.Resp.Body, 1<<20))
		a.Resp.Body.Close()
		if x.gem != nil {
			x.passFinalGemini(a.Resp.StatusCode, body)
		} else {
			x.passFinalMessages(a.Resp.StatusCode, a.Resp.Header, body)
		}
		return
	}
	x.setHeader("Content-Type", a.Resp.Header.Get("Content-Type"))
	x.w.WriteHeader(a.Resp.StatusCode)
	io.Copy(x.w, a.Resp.Body)
	a.Resp.Body.Close()
}

// held is what prepare read of a stream before its first content, and the
// reader it goes on with.
type held struct {
	rd     *sse.Reader
	out    sink // nil until the stream commits
	events []sse.Event
	// finished: an event carried a finish_reason (a native stream's
	// stop_reason); eof: the stream ended right after.
	finished, eof bool
	// preamble: events without content are passed on (false for a
	// continuation, whose client has had the first stream's).
	preamble bool
	// src is the reader rd reads from, and first room for events: most
	// streams hold one to three before their first content, so neither
	// costs an allocation of its own.
	src   flushFirst
	first [4]sse.Event
	// sw is the client's event writer once the stream commits (sseWriter).
	sw sse.Writer
	// content: the first content has come; heldBytes counts the events
	// held since.
	content   bool
	heldBytes int
}

// Prepare reads a streamed answer until its first content or its end; see
// router.Request.Prepare. It may run on a goroutine of its own (a hedged
// race), so it touches nothing of the exchange's but the server's pools.
func (x *exchange) Prepare(a *router.Attempt) aierr.Verdict {
	h := &held{rd: x.s.readers.Get().(*sse.Reader), preamble: true}
	h.src = flushFirst{r: a.Resp.Body, out: &h.out, a: a, x: x}
	h.events = h.first[:0]
	h.rd.Reset(&h.src)
	a.Held = h
	for {
		ev, err := h.rd.Next()
		if err != nil && h.finished && cleanEnd(err) {
			h.eof = true
			return aierr.Verdict{Kind: aierr.Success}
		}
		if err != nil {
			x.s.release(h)
			return streamVerdict(ev, err)
		}
		if v := eventVerdict(a, ev); v.Kind != aierr.Success {
			x.s.release(h)
			return v
		}
		h.events = append(h.events, ev.Clone())
		h.finished = h.finished || finishes(a, ev)
		if ended(a, ev) {
			a.Progress()
			return aierr.Verdict{Kind: aierr.Success}
		}
		if hasContent(a, ev) {
			h.content = true
			a.Progress()
		}
		if h.committable(a, ev) {
			return aierr.Verdict{Kind: aierr.Success}
		}
	}
}

// maxHeld bounds the bytes a stream's hold (commit_after) keeps: past
// it, the stream commits with what it holds.
const maxHeld = 256 << 10

// committable reports whether a stream that has its first content may
// commit after ev: it is not held (commit_after), or no longer, or holds
// maxHeld already.
func (h *held) committable(a *router.Attempt, ev sse.Event) bool {
	if !h.content {
		return false
	}
	if h.heldBytes += len(ev.Raw); h.heldBytes > maxHeld {
		return true
	}
	return !a.Holding()
}

// release returns a stream's reader to the pool.
func (s *Server) release(h *held) {
	if h.rd != nil {
		h.rd.Reset(nil) // drop the body before pooling the buffers
		s.readers.Put(h.rd)
		h.rd = nil
	}
}

// streamVerdict reads the failure of a stream before its end.
func streamVerdict(ev sse.Event, err error) aierr.Verdict {
	switch {
	case errors.Is(err, errInStream):
		return aierr.ClassifyEvent(ev.Name, ev.Data)
	case cleanEnd(err):
		return aierr.ClassifyError(io.ErrUnexpectedEOF)
	}
	return aierr.ClassifyError(err)
}

// cleanEnd reports a stream whose connection ended (cleanly, or in the
// middle of an event) rather than failed.
func cleanEnd(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, sse.ErrIncomplete) }

// finishes reports whether ev ends the answer's generation: an OpenAI
// chunk with a finish_reason, a native Anthropic message_delta with a
// stop_reason. What may follow (the usage chunk, [DONE], message_stop)
// adds nothing to the answer.
func finishes(a *router.Attempt, ev sse.Event) bool {
	if a.Responses {
		return responsesEnd(ev)
	}
	if a.Native {
		return ev.Name == "message_delta" && hasString(ev.Data, stopReasonKey)
	}
	return hasString(ev.Data, finishReasonKey) && !bytes.Contains(ev.Data, finishedInError)
}

// The members finishes looks for, quoted and followed by their colon.
var (
	finishReasonKey = []byte(`"finish_reason":`)
	stopReasonKey   = []byte(`"stop_reason":`)
	finishedInError = []byte(`"finish_reason":"error"`) // OpenRouter's error chunks
)

// hasString reports whether data has the member key (quoted, with its
// colon) with a string value. It searches from the end: a chunk's
// finish_reason comes last, so most events are read only at their tail.
// (The quoted key cannot occur inside a JSON string, whose quotes are
// escaped.)
func hasString(data, key []byte) bool { return valueAt(data, bytes.LastIndex(data, key), key) == '"' }

// valueAt returns the first byte of the value of member key found at i in
// data (i < 0: not found, 0).
func valueAt(data []byte, i int, key []byte) byte {
	if i < 0 {
		return 0
	}
	rest := bytes.TrimLeft(data[i+len(key):], " ")
	if len(rest) == 0 {
		return 0
	}
	return rest[0]
}

// relay streams a prepared attempt to the client. It reports true when the
// exchange is over (answered, failed after commit, or the client left) and
// false when the walk should go on to the next target.
func (x *exchange) relay(a *router.Attempt) bool {
	h := a.Held.(*held)
	defer x.s.release(h)
	defer a.Resp.Body.Close()
	if x.out == nil {
		x.commit(a)
		x.out = x.sink(a)
		x.letGoOfRequest()
	} else {
		x.seam(x.prev, a)
		x.settle()
		h.preamble = false // the client has had the first one's
		x.join = &splice{said: x.cont.text.String(), prefill: a.Target.SpeaksMessages()}
	}
	h.out = x.out
	x.drain.hold(true)
	defer x.drain.hold(false)
	var asm *cache.Assembler
	// Messages answers are kept as sent; a continued one is not an answer
	// of one target to keep.
	if limit := x.keepLimit(); limit > 0 && !x.messages && x.resp == nil && x.gem == nil && x.prev == nil {
		asm = cache.NewAssembler(limit)
	}
	for i := 0; ; {
		ev, fresh, err := h.next(&i)
		if err != nil {
			return x.streamEnded(a, h, asm, ev, err)
		}
		if fresh {
			a.Progress() // the held ones were told as they came
		}
		x.trace.chunk(a, false)
		x.trace.answered(a, ev.Data)
		h.finished = h.finished || finishes(a, ev)
		// Priced as it comes (a native stream's input is in
		// message_start, before any content).
		u := eventUsage(a, ev)
		if u != nil {
			x.streamAccount(a, ev.Name, u)
		}
		if x.hideUsage && u != nil && noChoices(ev.Data) {
			// Kept for the cache, not passed on.
			if asm != nil && asm.Add(ev.Data) != nil {
				asm = nil
			}
			continue
		}
		if x.join != nil && (ended(a, ev) || finishes(a, ev)) {
			if !x.flushSplice(a, h.out, ev) {
				return true
			}
		}
		if ended(a, ev) {
			x.complete(a, asm, h.out, ev.Raw)
			// Read what follows [DONE] (the chunked body's end) so the
			// upstream connection goes back to the pool, not away.
			io.CopyN(io.Discard, a.Resp.Body, 4<<10)
			return true
		}
		if asm != nil && asm.Add(ev.Data) != nil {
			asm = nil // not an answer the cache can keep
		}
		if !h.preamble {
			// A continuation's own preamble: the client has had one.
			if !sse.HasContent(ev) {
				continue
			}
			h.preamble = true
		}
		raw := ev.Raw
		if x.join != nil {
			var ok bool
			if raw, ok = x.spliced(a, h.out, ev); !ok {
				return true
			}
		}
		if raw == nil {
			continue // held by the splice
		}
		if err = x.write(a, h.out, raw); err != nil {
			// The client has gone, or stopped reading: the answer is
			// drained for its usage, or abandoned.
			x.outcome = "canceled"
			if !x.drain.leaving() {
				a.Abandon()
				return true
			}
		}
		if x.cont != nil {
			x.cont.add(sentData(ev, raw))
		}
	}
}

// write passes an event on, told to the attempt as a write to the client:
// a write may block on a slow client (a full buffer, the Messages
// translator's pipe), and that time is not the upstream's silence.
func (x *exchange) write(a *router.Attempt, out sink, raw []byte) error {
	if x.drain.clientGone() {
		return nil // drained: read for its usage, sent to nobody
	}
	a.Writing()
	err := out.Write(raw)
	a.Written()
	return err
}

// next returns the next event: the held ones first, then the stream's
// (fresh).
func (h *held) next(i *int) (ev sse.Event, fresh bool, err error) {
	if *i < len(h.events) {
		ev := h.events[*i]
		*i++
		return ev, false, nil
	}
	h.events = nil
	clear(h.first[:]) // the held events' bytes go with them
	if h.eof {
		return sse.Event{}, false, io.EOF
	}
	ev, err = h.rd.Next()
	return ev, true, err
}

// commit sends the headers of a stream about to flow to the client.
func (x *exchange) commit(a *router.Attempt) {
	x.trace.chunk(a, true)
	ttfb := a.TTFB()
	x.s.metrics.TTFB(a.Target, ttfb)
	x.headers(a, a.Start.Add(ttfb))
	sse.SetHeaders(x.w.Header())
	if x.gem != nil && !x.gem.sse {
		x.w.Header().Set("Content-Type", "application/json") // a JSON array, written as it comes
	}
	// The cost is known at the end: it follows as a trailer, and so does
	// the seam of a continued stream.
	trailer := "X-Fusebox-Cost"
	if x.cont != nil {
		trailer += ", X-Fusebox-Continued"
	}
	x.setHeader("Trailer", trailer)
	x.writeDeadline()
	x.w.WriteHeader(http.StatusOK)
	x.captureForReplay() // kept as sent, for idempotent replays
}

// complete ends a stream whose answer is whole: it is recorded (breaker,
// cache, idempotent replay) before the client sees the end, so a request
// it sends next finds it; end is the stream's last event as it should be.
func (x *exchange) complete(a *router.Attempt, asm *cache.Assembler, out sink, end []byte) {
	a.Succeed()
	var whole []byte
	if asm != nil {
		if body, err := asm.Result(); err == nil {
			whole = body
			x.keepCached(body, "application/json", a.Target.Name)
		}
	}
	if end != nil {
		out.Write(end)
	}
	out.Close()
	// A replay under the request's idempotency key is the stream as it was
	// sent, byte for byte; the assembled completion only when the stream
	// was too long to keep as sent.
	x.keepSent("text/event-stream", a.Target.Name)
	if whole != nil {
		x.keepForKey(whole, "application/json", a.Target.Name)
	}
}

// The ends a stream should have had, for one whose connection closed
// after its answer had finished.
var (
	doneEvent        = []byte("data: [DONE]\n\n")
	messageStopEvent = []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
)

var errInStream = errors.New("error event in the stream")

// flushFirst reads an upstream stream, first flushing what the relay has
// written to the client since the last read.
type flushFirst struct {
	r   io.Reader
	out *sink // nil until the stream commits
	a   *router.Attempt
	x   *exchange // for the client's write deadline, once committed
}

// errClientGone is a failed flush to the client, seen by the next read.
var errClientGone = errors.New("the client has gone")

func (f *flushFirst) Read(p []byte) (int, error) {
	if *f.out != nil && !f.x.drain.clientGone() {
		// Time blocked on a slow client is not the upstream's silence,
		// and a client that stops reading is dropped (its answer drained
		// for its usage, when the gateway does).
		f.x.writeDeadline()
		f.a.Writing()
		err := (*f.out).Flush()
		f.a.Written()
		if err != nil && !f.x.drain.leaving() {
			return 0, errClientGone
		}
	}
	return f.r.Read(p)
}

// streamAccount prices a stream from the usage one of its events carries.
// An OpenAI chunk carries all of it. A native Anthropic stream carries the
// input in message_start and the output (running total, final in the
// last one) in message_delta, which is when the answer is priced.
func (x *exchange) streamAccount(a *router.Attempt, event string, u *usage) {
	if !a.Native {
		x.account(a, u)
		return
	}
	switch event {
	case "message_start":
		x.nativeStart = u
	case "message_delta":
		if s := x.nativeStart; s != nil && u.InputTokens == 0 && u.CacheReadTokens == 0 && u.CacheCreationTokens == 0 {
			u.InputTokens, u.CacheReadTokens, u.CacheCreationTokens = s.InputTokens, s.CacheReadTokens, s.CacheCreationTokens
		}
		x.account(a, u.anthropic())
	}
}

// noChoices reports whether a chunk has an empty choices list: with a
// usage object, it is the usage chunk include_usage adds.
func noChoices(data []byte) bool {
	return bytes.Contains(data, []byte(`"choices":[]`)) || bytes.Contains(data, []byte(`"choices": []`))
}

// streamUsage returns the usage a chunk carries (the last chunk, with
// stream_options.include_usage), or nil.
func streamUsage(data []byte) *usage {
	if !hasObject(data, usageKey) {
		return nil
	}
	return usageOf(data)
}

// usageKey is the member streamUsage looks for, quoted, with its colon.
var usageKey = []byte(`"usage":`)

// hasObject reports whether data has the member key (quoted, with its
// colon) with an object value: one scan of the event, however the writer
// spaced it.
func hasObject(data, key []byte) bool { return valueAt(data, bytes.Index(data, key), key) == '{' }

// streamEnded handles a committed stream that ended without its last
// event. One whose answer had finished is complete: it is ended for the
// client as it should have been. Any other is broken: its target hears of
// the failure, and the client gets an error event and no [DONE].
func (x *exchange) streamEnded(a *router.Attempt, h *held, asm *cache.Assembler, ev sse.Event, err error) bool {
	if x.r.Context().Err() != nil || errors.Is(err, errClientGone) || x.drain.clientGone() {
		// Nobody to answer. A drained answer that had finished is the
		// upstream's success; any other end is not its failure.
		if h.finished && cleanEnd(err) {
			a.Succeed()
		} else {
			a.Abandon()
		}
		h.out.Close()
		x.outcome = "canceled"
		return true
	}
	if h.finished && !errors.Is(err, errInStream) {
		// The answer had finished: whatever ended the connection after
		// it (a close, a reset, silence until a watchdog cut it) took
		// nothing from it.
		end := doneEvent
		switch {
		case a.Native:
			end = messageStopEvent
		case a.Responses:
			end = nil // its end was the completion, already passed on
		}
		x.complete(a, asm, h.out, end)
		return true
	}
	v := a.Broke(streamVerdict(ev, err))
	if errors.Is(x.ctx.Err(), context.DeadlineExceeded) {
		x.outcome = "deadline"
		h.out.Broken(sse.ErrorEvent{Type: "timeout", Code: "request_timeout", Message: "No target finished the answer within the model's deadline (" +
			x.alias.Deadline().String() + "). The answer is incomplete."})
		return true
	}
	msg := "The stream from " + a.Target.Name + " broke off after it began: " + v.Kind.String()
	if v.Code != "" {
		msg += " (" + v.Detail() + ")"
	}
	x.broken = sse.ErrorEvent{Type: "upstream_error", Code: "stream_interrupted", Message: msg + ". The answer is incomplete."}
	if x.continuable(a) {
		if body, prefill, ok := x.continuation(); ok {
			x.priceBroken(a)
			x.walk.Continue(body, prefill)
			x.prev = a
			return false // serveStream asks the next target
		}
	}
	x.outcome = "broken"
	h.out.Broken(x.broken)
	return true
}

// letGoOfRequest drops the request's bodies once a stream has committed
// and nothing will send it again, so that a stream of minutes does not
// hold a conversation of megabytes for them. A continued stream resends
// it, and the Responses API stores its input at the end: those keep it.
func (x *exchange) letGoOfRequest() {
	if x.cont != nil || x.resp != nil {
		return
	}
	x.body, x.native = nil, nil
	x.fields = x.fields.Detached()
	x.walk.Release()
	if x.s.testHookLetGo != nil {
		x.s.testHookLetGo()
	}
}

// sink returns where a committed stream's events go: straight to the
// client, or through the Messages API translator.
func (x *exchange) sink(a *router.Attempt) sink {
	switch {
	case a.Native:
		return nativeSink{x.sseWriter(a)}
	case a.Responses:
		return &responsesNativeSink{x: x, w: x.sseWriter(a)}
	case x.messages:
		return newAnthropicSink(x.w, x.model)
	case x.gem != nil:
		return newGeminiSink(x.w, x.gem)
	case x.resp != nil:
		return x.newResponsesSink()
	}
	return openaiSink{x.sseWriter(a)}
}

// sseWriter returns an event writer to the client for attempt a's stream,
// flushing each event as sse.NewWriter's does. It lives in what prepare
// held of the stream, so it costs no allocation of its own.
func (x *exchange) sseWriter(a *router.Attempt) *sse.Writer {
	h, ok := a.Held.(*held)
	if !ok {
		return sse.NewWriter(x.w)
	}
	h.sw = *sse.NewFlushWriter(x.w, x.flushClient)
	return &h.sw
}

// flushClient flushes what was written to the client, through the
// recorder's Unwrap; a writer that cannot flush is written to without.
func (x *exchange) flushClient() error {
	if err := http.NewResponseController(x.w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// ended reports whether ev is the stream's last event: OpenAI's [DONE], or
// Anthropic's message_stop for a native Messages stream.
func ended(a *router.Attempt, ev sse.Event) bool {
	if a.Responses {
		return responsesEnd(ev)
	}
	if a.Native {
		return ev.Name == "message_stop"
	}
	return sse.IsDone(ev)
}

// classifyReadError reads an error from reading an upstream body.
func (s *Server) classifyReadError(err error) aierr.Verdict { return aierr.ClassifyError(err) }
