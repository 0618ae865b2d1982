package responses

import (
	"errors"
	"time"
)

// Event is one server-sent event of a Responses stream, to be written as
// "event: <Name>\ndata: <Data>\n\n". Data is one line of JSON, with the
// event's "type" (Name) and "sequence_number" in it. Events are never
// changed after they are returned: a caller may hold them.
type Event struct {
	Name string
	Data []byte
}

// The names of the events a Stream produces.
const (
	evCreated      = "response.created"
	evInProgress   = "response.in_progress"
	evItemAdded    = "response.output_item.added"
	evItemDone     = "response.output_item.done"
	evPartAdded    = "response.content_part.added"
	evPartDone     = "response.content_part.done"
	evTextDelta    = "response.output_text.delta"
	evTextDone     = "response.output_text.done"
	evRefusalDelta = "response.refusal.delta"
	evRefusalDone  = "response.refusal.done"
	evArgsDelta    = "response.function_call_arguments.delta"
	evArgsDone     = "response.function_call_arguments.done"
	evCompleted    = "response.completed"
	evIncomplete   = "response.incomplete"
	evFailed       = "response.failed"
	doneChunk      = "[DONE]"
)

// ErrStreamEnded is returned by Chunk after Done or Fail.
var ErrStreamEnded = errors.New("responses: the stream has ended")

// Stream translates a chat completions stream (chat.completion.chunk
// events) into a Responses event stream, chunk by chunk, in the real
// API's order, with sequence numbers from 0:
//
//	response.created, response.in_progress        before the first chunk's events
//	per message: response.output_item.added, response.content_part.added,
//	  response.output_text.delta… (response.refusal.delta… for a refusal),
//	  response.output_text.done, response.content_part.done,
//	  response.output_item.done
//	per tool call: response.output_item.added (a function_call, arguments ""),
//	  response.function_call_arguments.delta…, response.function_call_arguments.done,
//	  response.output_item.done
//	response.completed, or response.incomplete (finish_reason length or
//	  content_filter), or response.failed (Fail)
//
// Items are closed as soon as the next begins or the answer finishes, so
// at most one is open. Only choice 0 is read.
//
// How a gateway uses it: make a Stream per upstream attempt (a fresh one
// for each target tried, with the same id); pass each chunk's data to
// Chunk, and call Done at data: [DONE] (or at the end of a stream that has
// sent its finish_reason). Hold the events while Committed is false: up to
// then nothing but response.created and response.in_progress exists, and a
// failing target can be dropped with its Stream and replaced unseen. Once
// committed, write events as they come; if the upstream then fails (a
// Chunk error, a cut, an error event), write Fail's events and end the
// stream: it ends with response.failed, never a completion it did not
// have. After Done or Fail, Response returns the final response object
// (for the store). A Stream is not safe for concurrent use.
type Stream struct {
	req       Request
	id        string
	created   int64
	seq       int64
	started   bool // response.created is out
	ended     bool // Done or Fail has run
	committed bool
	finished  bool // choice 0 had its finish_reason
	res       result
	open      int          // index in res.items of the open item; -1 if none
	seen      map[int]bool // chat indices of the tool calls so far
	final     []byte       // the response object at the end

	// The events of the call in progress: their data in buf, one after the
	// other, marked by marks. buf's spare room carries over to later calls
	// without touching the data of events returned.
	buf   []byte
	marks []mark
}

// A Stream writes its events into blocks of bufSize bytes, and starts a
// new block when less than minRoom is left: one allocation for many
// events, and blocks that the events returned keep alive.
const (
	bufSize = 8 << 10
	minRoom = 1 << 10
)

type mark struct {
	name       string
	start, end int
}

// NewStream returns a Stream for the request req (as ToChat read it),
// answering as the response with the given id and creation time.
func NewStream(req Request, id string, created time.Time) *Stream {
	return &Stream{req: req, id: id, created: created.Unix(), open: -1, res: result{model: req.Model}}
}

// Committed reports whether the stream has produced an event with part of
// the answer (anything after response.created and response.in_progress):
// from then on the client must be sent every event, and a failure ends the
// stream with Fail.
func (s *Stream) Committed() bool { return s.committed }

// Response returns the final response object after Done or Fail, nil
// before.
func (s *Stream) Response() []byte { return s.final }

// Chunk translates one chat.completion.chunk (the data of an event) and
// returns the events it makes, maybe none. data: [DONE] is the same as
// Done. A chunk that is not a chat chunk (not JSON, an error object,
// finish_reason "error") gives an error matching ErrBadChat, and so does a
// tool call that goes back to an index after another began; the events
// returned with an error are valid, and the Stream may go on or be ended
// with Fail. Chunks after the answer's finish_reason add only their usage.
func (s *Stream) Chunk(data []byte) ([]Event, error) {
	if s.ended {
		return nil, ErrStreamEnded
	}
	if string(data) == doneChunk {
		return s.Done(), nil
	}
	var c chunk
	if err := c.read(data); err != nil {
		return nil, err
	}
	if !s.started {
		if model, _ := readString("", c.model); model != "" {
			s.res.model = model
		}
	}
	s.start()
	var err error
	if c.choice && !s.finished {
		err = s.apply(&c)
	}
	if c.usage.set {
		s.res.usage = c.usage
	}
	return s.flush(), err
}

// Done ends the stream: it closes the open item and returns the events
// through response.completed (or response.incomplete), whose response has
// the whole output and the usage. An answer that produced nothing gets an
// empty message. After Done or Fail it returns nil.
func (s *Stream) Done() []Event {
	if s.ended {
		return nil
	}
	s.start()
	s.closeOpen()
	if len(s.res.items) == 0 {
		s.text(nil) // an empty answer is an empty message, as FromChat gives
		s.closeOpen()
	}
	if s.res.status == "" || s.res.status == statusInProgress {
		s.res.status = statusCompleted
	}
	name := evCompleted
	if s.res.status == statusIncomplete {
		name = evIncomplete
	}
	s.terminal(name)
	return s.flush()
}

// Fail ends the stream with response.failed: the response as far as it
// got, status failed, error {code, message} (code such as "server_error"),
// open items left incomplete. After Done or Fail it returns nil.
func (s *Stream) Fail(code, message string) []Event {
	if s.ended {
		return nil
	}
	s.start()
	if s.open >= 0 {
		s.res.items[s.open].status = statusIncomplete
		s.open = -1
	}
	s.res.status, s.res.reason = statusFailed, ""
	s.res.errCode, s.res.errMessage = code, message
	s.terminal(evFailed)
	return s.flush()
}

// start emits response.created and response.in_progress, once.
func (s *Stream) start() {
	if s.started {
		return
	}
	s.started = true
	for _, name := range [...]string{evCreated, evInProgress} {
		s.begin(name)
		s.buf = appendResponse(appendKey(s.buf, "response"), &s.req, s.id, s.created, &s.res)
		s.end()
	}
}

// terminal emits the final event name with the whole response, and ends
// the stream.
func (s *Stream) terminal(name string) {
	s.begin(name)
	s.buf = appendKey(s.buf, "response")
	start := len(s.buf)
	s.buf = appendResponse(s.buf, &s.req, s.id, s.created, &s.res)
	s.final = s.buf[start:len(s.buf):len(s.buf)]
	s.end()
	s.ended = true
}

// begin starts an event: {"type":"<name>" and its members follow.
func (s *Stream) begin(name string) {
	if name != evCreated && name != evInProgress {
		s.committed = true
	}
	s.marks = append(s.marks, mark{name: name, start: len(s.buf)})
	s.buf = append(s.buf, `{"type":`...)
	s.buf = appendString(s.buf, name)
}

// end ends the event begun last with its sequence number.
func (s *Stream) end() {
	s.buf = appendInt(s.buf, "sequence_number", s.seq)
	s.buf = append(s.buf, '}')
	s.seq++
	s.marks[len(s.marks)-1].end = len(s.buf)
}

// flush returns the events of this call, and keeps buf's spare room for
// the next.
func (s *Stream) flush() []Event {
	if len(s.marks) == 0 {
		return nil
	}
	evs := make([]Event, len(s.marks))
	for i, m := range s.marks {
		evs[i] = Event{Name: m.name, Data: s.buf[m.start:m.end:m.end]}
	}
	if cap(s.buf)-len(s.buf) < minRoom {
		s.buf = make([]byte, 0, bufSize)
	} else {
		s.buf = s.buf[len(s.buf):]
	}
	s.marks = s.marks[:0]
	return evs
}

// chunk is what Chunk reads of a chat.completion.chunk. Its byte slices
// point into the chunk's data or the Stream's scratch room.
type chunk struct {
	model   []byte // raw
	choice  bool   // there was a choice 0
	content []byte
	refusal []byte
	finish  string
	calls   []callDelta
	usage   usage
}

// read reads data into c.
func (c *chunk) read(data []byte) error {
	f, ok := readCompletionFields(data)
	if !ok {
		return badChat("a stream chunk is not a JSON object")
	}
	if !absent(f.err) {
		return badChat("error in the stream: %s", clip(string(f.err), 256))
	}
	c.model = f.model
	c.usage = readUsage(f.usage)
	choice := pickChoice(f.choices, true)
	if choice.delta == nil && choice.finish == nil {
		return nil
	}
	c.choice = true
	c.finish, _ = readString("", choice.finish)
	var m messageFields
	if absent(choice.delta) || !m.read(choice.delta) {
		return nil
	}
	c.content = contentText(m.content, nil)
	c.refusal = stringBytes(m.refusal, nil)
	return elements(orEmpty(m.toolCalls), func(i int, el []byte) error {
		var d callDelta
		if !d.read(el, nil) {
			return badChat("tool_calls[%d] is not an object", i)
		}
		c.calls = append(c.calls, d)
		return nil
	})
}
