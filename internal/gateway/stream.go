package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/cache"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// serveStream answers a streamed chat completion. Each attempt's events are
// read one by one; until one carries content they are held back, and a
// failure (an error, an in-stream error event, silence past the TTFB budget,
// a stall past the idle budget, an end without content) sends the walk on
// to the next target without the client seeing anything. The first content
// commits: the held events and everything after are written and flushed
// event by event. After that, a failure ends the stream with an error event
// and no [DONE], so no client mistakes a cut answer for a whole one.
func (x *exchange) serveStream(ctx context.Context) {
	for {
		actx, cancel := context.WithCancel(ctx)
		a, err := x.walk.Next(actx)
		if err != nil {
			cancel()
			x.fail(err)
			return
		}
		if a.Final {
			cancel()
			x.passFinal(a)
			return
		}
		done := x.relay(actx, cancel, a)
		cancel()
		if done {
			return
		}
	}
}

// passFinal returns a client error as the upstream gave it.
func (x *exchange) passFinal(a *router.Attempt) {
	x.headers(a, x.s.clk.Now())
	if x.messages {
		body, _ := io.ReadAll(io.LimitReader(a.Resp.Body, 1<<20))
		a.Resp.Body.Close()
		x.passFinalMessages(a.Resp.StatusCode, a.Resp.Header, body)
		return
	}
	x.w.Header().Set("Content-Type", a.Resp.Header.Get("Content-Type"))
	x.w.WriteHeader(a.Resp.StatusCode)
	io.Copy(x.w, a.Resp.Body)
	a.Resp.Body.Close()
}

// watchdog cancels an attempt when its TTFB or idle budget runs out, and
// remembers which. One timer serves both budgets: it is re-armed, not
// re-made, for every event.
type watchdog struct {
	timer   clock.Timer
	cancel  context.CancelFunc
	kind    atomic.Int32 // the budget the timer measures: 1 TTFB, 2 idle
	expired atomic.Int32 // 0, or the kind that ran out
}

func (d *watchdog) arm(clk clock.Clock, budget time.Duration, kind int32) {
	if budget <= 0 {
		d.stop()
		return
	}
	d.kind.Store(kind)
	if d.timer == nil {
		d.timer = clk.AfterFunc(budget, d.fire)
		return
	}
	d.timer.Reset(budget)
}

func (d *watchdog) fire() {
	if d.expired.CompareAndSwap(0, d.kind.Load()) {
		d.cancel()
	}
}

func (d *watchdog) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
}

// relay streams one attempt. It reports true when the exchange is over
// (answered, failed after commit, or the client left) and false when the
// walk should go on to the next target.
func (x *exchange) relay(ctx context.Context, cancel context.CancelFunc, a *router.Attempt) bool {
	defer a.Resp.Body.Close()
	ttfb, idle := x.alias.StreamBudgets(a.Target)
	dog := &watchdog{cancel: cancel}
	defer dog.stop()
	dog.arm(x.s.clk, ttfb, 1)
	answered := x.s.clk.Now()

	var held [][]byte
	var out sink
	// Events that arrived together go to the client together: each is
	// written as it is parsed, and the batch is flushed before the relay
	// reads the upstream again, so nothing waits in the buffer while the
	// relay waits for more.
	rd := x.s.readers.Get().(*sse.Reader)
	rd.Reset(&flushFirst{r: a.Resp.Body, out: &out})
	defer func() {
		rd.Reset(nil) // drop the body before pooling the buffers
		x.s.readers.Put(rd)
	}()
	var asm *cache.Assembler
	if limit := x.keepLimit(); limit > 0 && !x.messages { // Messages answers are kept as sent
		asm = cache.NewAssembler(limit)
	}
	for {
		ev, err := rd.Next()
		if err == nil && out == nil && aierr.ClassifyEvent(ev.Name, ev.Data).Kind != aierr.Success {
			err = errInStream
		}
		if err != nil {
			return x.streamFailed(a, out, ev, err, dog)
		}
		// Priced as it comes, held or not (a native stream's input is in
		// message_start, before any content).
		u := streamUsage(ev.Data)
		if u != nil {
			x.streamAccount(a, ev.Name, u)
		}
		if x.hideUsage && u != nil && noChoices(ev.Data) {
			// Kept for the cache, not passed on.
			if asm != nil && asm.Add(ev.Data) != nil {
				asm = nil
			}
			if out != nil {
				dog.arm(x.s.clk, idle, 2)
			}
			continue
		}
		if out == nil {
			if !sse.HasContent(ev) && !ended(a, ev) {
				held = append(held, append([]byte(nil), ev.Raw...))
				continue
			}
			// Commit.
			ttfb := x.s.since(a.Start)
			a.Target.ObserveTTFB(ttfb)
			x.s.metrics.TTFB(a.Target, ttfb)
			x.headers(a, answered)
			sse.SetHeaders(x.w.Header())
			// The cost is known at the end: it follows as a trailer.
			x.w.Header().Set("Trailer", "X-Fusebox-Cost")
			x.w.WriteHeader(http.StatusOK)
			if x.messages {
				x.captureForReplay()
			}
			out = x.sink(a)
			for _, raw := range held {
				out.Write(raw)
			}
			held = nil
		}
		dog.arm(x.s.clk, idle, 2)
		if asm != nil && !ended(a, ev) && asm.Add(ev.Data) != nil {
			asm = nil // not an answer the cache can keep
		}
		if ended(a, ev) {
			// The answer is complete: record it (breaker, cache, idempotent
			// replay) before the client sees the end, so a request it sends
			// next finds it.
			a.Succeed(x.s.since(a.Start))
			if asm != nil {
				if body, err := asm.Result(); err == nil {
					x.keep(body, "application/json", a.Target.Name)
				}
			}
			out.Write(ev.Raw)
			out.Close()
			if x.messages {
				x.keepSent("text/event-stream", a.Target.Name)
			}
			// Read what follows [DONE] (the chunked body's end) so the
			// upstream connection goes back to the pool, not away.
			io.CopyN(io.Discard, a.Resp.Body, 4<<10)
			return true
		}
		if out.Write(ev.Raw) != nil {
			a.Abandon() // the client has gone
			return true
		}
	}
}

var errInStream = errors.New("error event in the stream")

// flushFirst reads an upstream stream, first flushing what the relay has
// written to the client since the last read.
type flushFirst struct {
	r   io.Reader
	out *sink // nil until the stream commits
}

// errClientGone is a failed flush to the client, seen by the next read.
var errClientGone = errors.New("the client has gone")

func (f *flushFirst) Read(p []byte) (int, error) {
	if *f.out != nil {
		if err := (*f.out).Flush(); err != nil {
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
	if !bytes.Contains(data, []byte(`"usage":{`)) && !bytes.Contains(data, []byte(`"usage": {`)) {
		return nil
	}
	return usageOf(data)
}

// streamFailed handles the end of an attempt's stream that did not finish
// with [DONE]: before commit the walk goes on; after it the client gets an
// error event.
func (x *exchange) streamFailed(a *router.Attempt, out sink, ev sse.Event, err error, dog *watchdog) bool {
	if x.r.Context().Err() != nil || errors.Is(err, errClientGone) {
		if out != nil {
			out.Close()
		}
		a.Abandon()
		return true
	}
	var v aierr.Verdict
	switch {
	case dog.expired.Load() == 1:
		v = aierr.ClassifyError(aierr.ErrFirstByteTimeout)
	case dog.expired.Load() == 2:
		v = aierr.ClassifyError(aierr.ErrStreamStalled)
	case errors.Is(err, errInStream):
		v = aierr.ClassifyEvent(ev.Name, ev.Data)
	case errors.Is(err, io.EOF), errors.Is(err, sse.ErrIncomplete):
		v = aierr.ClassifyError(io.ErrUnexpectedEOF)
	default:
		v = x.s.classifyReadError(err)
	}
	a.Fail(v)
	if out == nil {
		return false // nothing sent yet: try the next target
	}
	msg := "The stream from " + a.Target.Name + " broke off after it began: " + v.Kind.String()
	if v.Code != "" {
		msg += " (" + v.Code + ")"
	}
	out.Broken(msg + ". The answer is incomplete.")
	return true
}

// sink returns where a committed stream's events go: straight to the
// client, or through the Messages API translator.
func (x *exchange) sink(a *router.Attempt) sink {
	switch {
	case a.Native:
		return nativeSink{sse.NewWriter(x.w)}
	case x.messages:
		return newAnthropicSink(x.w, x.model)
	}
	return openaiSink{sse.NewWriter(x.w)}
}

// ended reports whether ev is the stream's last event: OpenAI's [DONE], or
// Anthropic's message_stop for a native Messages stream.
func ended(a *router.Attempt, ev sse.Event) bool {
	if a.Native {
		return ev.Name == "message_stop"
	}
	return sse.IsDone(ev)
}

// classifyReadError reads an error from reading an upstream body.
func (s *Server) classifyReadError(err error) aierr.Verdict { return aierr.ClassifyError(err) }
