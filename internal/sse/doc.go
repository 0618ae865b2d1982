// Package sse reads and writes server-sent events for the gateway's
// streaming path: OpenAI-style text/event-stream bodies
// (data: {json} … data: [DONE]) and Anthropic-style ones (event: message_start,
// event: ping, event: error, …), event by event, never buffering a whole body.
//
// A Reader parses events per the WHATWG rules with bounded memory and no
// allocation per event; each Event keeps the bytes it was received as (Raw),
// so the gateway forwards upstream events byte for byte with Writer.WriteRaw.
// A stream that ends inside an event gives ErrIncomplete rather than a quiet
// io.EOF: a cut answer must never pass for a complete one.
//
// HasContent finds the commit point: the first event that carries part of
// the answer. Before it the gateway holds preamble events (role-only deltas,
// message_start, pings) and may fail over to another target without the
// client seeing; after it, a failure is reported in the stream with
// Writer.WriteError (OpenAI clients) or Writer.WriteAnthropicError
// (Anthropic clients) and the stream ends without data: [DONE].
//
// A typical relay:
//
//	r := sse.NewReader(upstream.Body, sse.Options{})
//	for {
//		ev, err := r.Next()
//		if err != nil {
//			break // io.EOF only after a terminal event is a clean end
//		}
//		// classify ev with aierr.ClassifyEvent, hold it until
//		// sse.HasContent(ev), then w.WriteRaw(ev.Raw)
//	}
package sse
