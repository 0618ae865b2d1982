package gateway

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/responses"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// A Responses API request (POST /v1/responses) is translated to a chat
// request at the door and walks the ladder as one; its answer, or each
// chunk of its stream once it commits, is translated back. Responses made
// with store: true are kept for previous_response_id and GET/DELETE
// /v1/responses/{id}, each readable only by the client key that made it.

// respExchange is what a Responses request carries through the exchange.
type respExchange struct {
	req     responses.Request
	id      string
	created time.Time
	// body is the client's own, which an Idempotency-Key is checked
	// against.
	body []byte
	// native is the client's body, for targets that serve the Responses
	// API themselves; nil when it must be translated (it continues a
	// response stored here, whose id such a target does not know).
	native []byte
	// unservable, for a request chat cannot express (a built-in tool),
	// refuses it to every target but those.
	unservable *router.Unservable
}

// newResponseStore builds the store the configuration asks for.
func newResponseStore(c config.ResponseStore, clk clock.Clock) (responses.Store, error) {
	if c.Dir == "" {
		return responses.NewMemoryStore(c.MaxEntries, int64(c.MaxBytes)), nil
	}
	st, err := responses.NewDirStore(c.Dir, c.MaxEntries, int64(c.MaxBytes), c.TTL)
	if err != nil {
		return nil, err
	}
	st.Clock = clk
	return st, nil
}

// fromResponses translates a Responses request body to the chat body the
// walk sends, reporting false after answering a request it refuses.
func (x *exchange) fromResponses(body []byte) ([]byte, bool) {
	if cf := aireq.Scan(body).Conflict; cf.Reason != "" {
		x.ambiguous(cf)
		return nil, false
	}
	var history []responses.Item
	prev := responses.PreviousResponseID(body)
	if prev != "" {
		if st, ok := x.s.responses.Get(x.client, prev); ok {
			history = st.History()
		}
	}
	chat, req, err := responses.ToChat(body, history)
	var e *responses.Error
	unsupported := errors.Is(err, responses.ErrUnsupported) && errors.As(err, &e)
	switch {
	case unsupported:
	case errors.As(err, &e):
		x.error(http.StatusBadRequest, "invalid_request_error", e.Code, e.Param, e.Message)
		return nil, false
	case err != nil:
		x.badRequest("", err.Error())
		return nil, false
	}
	x.resp = &respExchange{req: req, id: responses.NewID(), created: x.s.clk.Now(), body: body}
	if prev == "" || unsupported {
		x.resp.native = body
	}
	if unsupported {
		// Only a target that serves the Responses API can take it; the
		// walk refuses it to the others, naming the field, and answers 400
		// when the model has none.
		x.resp.unservable = &router.Unservable{Param: e.Param, Code: e.Code, Message: e.Message}
		chat = placeholderChat(body)
	}
	return chat, true
}

// placeholderChat is the chat body that stands for a Responses request
// chat cannot express, for the gateway's own reading of it (model,
// stream); no target is sent it.
func placeholderChat(body []byte) []byte {
	f := aireq.Scan(body)
	chat := `{"model":` + strconv.Quote(f.ModelName()) + `,"messages":[{"role":"user","content":""}]`
	if f.Stream {
		chat += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	return []byte(chat + "}")
}

// serveResponses answers a non-streamed Responses request from a chat
// answer; see serveMessages, whose rules it follows.
func (x *exchange) serveResponses(a *router.Attempt) bool {
	if a.Final {
		x.passFinal(a)
		return true
	}
	x.drain.hold(true)
	body, err := readAnswer(a.Resp.Body, a.Resp.ContentLength, maxBuffered)
	x.drain.hold(false)
	a.Resp.Body.Close()
	switch {
	case err != nil && (x.r.Context().Err() != nil || x.drain.clientGone()):
		a.Abandon()
		return true
	case err != nil:
		a.Fail(x.s.classifyReadError(err))
		return false
	case !jsonObject(body):
		a.Fail(invalidAnswer(a))
		return false
	}
	if a.Responses { // the target's own Responses answer: passed on as it is
		a.Succeed()
		x.account(a, responsesUsage(body))
		x.keepResponse(body)
		x.captureForReplay()
		x.writeJSON(body)
		x.keepSent("application/json", a.Target.Name)
		return true
	}
	out, err := responses.FromChat(body, x.resp.req, x.resp.id, x.resp.created)
	if err != nil {
		a.Fail(invalidAnswer(a)) // a 2xx that is no chat answer: the target's fault
		return false
	}
	a.Succeed()
	x.account(a, usageInto(&x.answerUsage, body))
	x.keepResponse(out)
	x.captureForReplay()
	x.writeJSON(out)
	x.keepSent("application/json", a.Target.Name)
	return true
}

// keepResponse stores a finished response, if the request asked for it.
// A store that refuses it (full, or the answer too large) costs the client
// nothing but the later lookup.
func (x *exchange) keepResponse(out []byte) {
	if !x.resp.req.Store || out == nil {
		return
	}
	st, err := responses.NewStored(x.resp.req, out, x.client, x.resp.created)
	if err == nil {
		err = x.s.responses.Put(st)
	}
	if err != nil {
		x.s.log.Warn("a response was not stored", "id", x.resp.id, "error", err.Error())
	}
}

// responsesSink translates a committed chat stream into Responses events.
type responsesSink struct {
	x      *exchange
	w      *sse.Writer
	st     *responses.Stream
	failed bool
}

func (x *exchange) newResponsesSink() *responsesSink {
	return &responsesSink{x: x, w: sse.NewWriter(x.w), st: responses.NewStream(x.resp.req, x.resp.id, x.resp.created)}
}

func (s *responsesSink) Write(raw []byte) error {
	data := eventData(raw)
	if s.failed || string(data) == "[DONE]" { // Close ends the stream
		return nil
	}
	evs, err := s.st.Chunk(data)
	if err != nil && !errors.Is(err, responses.ErrStreamEnded) {
		// A chunk the translator cannot read, after the stream began: the
		// answer is broken, and said so, never completed.
		s.failed = true
		evs = s.st.Fail("bad_upstream_response", "The stream from the target could not be read: "+err.Error())
	}
	return s.write(evs)
}

func (s *responsesSink) write(evs []responses.Event) error {
	for _, ev := range evs {
		if err := s.w.WriteEvent(ev.Name, ev.Data); err != nil {
			return err
		}
	}
	return nil
}

func (s *responsesSink) Flush() error { return s.w.Flush() }

func (s *responsesSink) Close() {
	if !s.failed {
		s.write(s.st.Done())
		s.x.keepResponse(s.st.Response())
	}
	s.w.Flush()
}

func (s *responsesSink) Broken(e sse.ErrorEvent) {
	if !s.failed {
		s.failed = true
		s.write(s.st.Fail(e.Code, e.Message))
	}
	s.w.Flush()
}

// eventData returns the data of one server-sent event as written: its
// data lines, joined by newlines (a chat chunk has one).
func eventData(raw []byte) []byte {
	var data []byte
	lines := 0
	for line := range bytes.Lines(raw) {
		line = bytes.TrimRight(line, "\r\n")
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		v, _ = bytes.CutPrefix(v, []byte(" "))
		if lines == 0 {
			data = v
		} else {
			data = append(append(append([]byte(nil), data...), '\n'), v...)
		}
		lines++
	}
	return data
}

// handleStoredResponse answers GET /v1/responses/{id} and its
// input_items, and DELETE: another client's response is as unknown as
// none.
func (s *Server) handleStoredResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	stored, ok := s.ownResponse(w, r, id)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodDelete:
		s.responses.Delete(stored.Owner, id)
		w.Write(responses.Deleted(id))
	case r.PathValue("what") == "input_items":
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		out, err := stored.ListInput(q.Get("after"), limit, q.Get("order"))
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_value", "", err.Error())
			return
		}
		w.Write(out)
	default:
		w.Write(stored.Response)
	}
}

// ownResponse authenticates the request and finds the client's stored
// response id, answering 401 or 404 (also for another client's) when it
// reports false.
func (s *Server) ownResponse(w http.ResponseWriter, r *http.Request, id string) (responses.Stored, bool) {
	c, ok := s.authenticate(s.state(), w, r)
	if !ok {
		return responses.Stored{}, false
	}
	owner := ""
	if c != nil {
		owner = c.name
	}
	stored, found := s.responses.Get(owner, id)
	if !found {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "",
			"No response found with id '"+id+"'.")
		return responses.Stored{}, false
	}
	return stored, true
}

// handleCancelResponse answers POST /v1/responses/{id}/cancel: only a
// background response can be cancelled, and the gateway makes none, so a
// response of the client's is answered 400 (as OpenAI answers for one
// that was not made in the background) and any other id 404.
func (s *Server) handleCancelResponse(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.ownResponse(w, r, r.PathValue("id")); !ok {
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_value", "",
		"Only responses created with background: true can be cancelled, and Fusebox does not run background responses.")
}
