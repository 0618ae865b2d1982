// Package responses lets the gateway serve OpenAI's Responses API
// (POST /v1/responses) through targets that speak only Chat Completions:
// it translates a Responses request into a chat request, a chat answer
// or stream back into a response object or Responses events, and keeps
// the responses made with store: true for previous_response_id and
// GET/DELETE /v1/responses/{id}. Anthropic targets are covered too: the
// chat request goes through the Anthropic adapter's own translation.
//
// A gateway wires it so:
//
//	POST /v1/responses
//	  history := nil
//	  if prev := PreviousResponseID(body); prev != "" {
//	      if st, ok := store.Get(client, prev); ok {
//	          history = st.History()
//	      }
//	  }
//	  chat, req, err := ToChat(body, history)    // *Error → 400 {message, param, code}
//	  // route req.Model with the chat body as any chat request;
//	  // errors.Is(err, ErrUnsupported): only a native Responses target could serve it
//	  id := NewID()
//	  answer:  out, err := FromChat(chatAnswer, req, id, now)   // ErrBadChat → 502
//	  stream:  s := NewStream(req, id, now) per attempt; s.Chunk(data) per chunk,
//	           s.Done() at data: [DONE], s.Fail(code, msg) when the upstream
//	           breaks after s.Committed(); write each Event as
//	           "event: <Name>\ndata: <Data>\n\n"; out := s.Response()
//	  if req.Store { st, _ := NewStored(req, out, client, now); store.Put(st) }
//	GET /v1/responses/{id}               st.Response of store.Get(client, id), else 404
//	GET /v1/responses/{id}/input_items   st.ListInput(after, limit, order)
//	DELETE /v1/responses/{id}            store.Delete(client, id), then Deleted(id)
//
// Requests are read as OpenAI reads them and as encoding/json reads JSON
// into a map: keys match exactly once their escapes are decoded, the last
// of duplicate keys counts (the earlier one is not even checked), null is
// the same as absent, and a body nesting deeper than 64 levels is
// refused. Unknown top-level fields are ignored and listed in
// Request.Unknown. Every refusal is an *Error naming the field as a JSON
// path ("tools[2].type"). The work is linear in the body.
//
// docs/RESPONSES.md has the field mapping (including what Anthropic
// targets make of each chat field), what is refused and why, the event
// sequence of a stream and the stores' bounds.
package responses
