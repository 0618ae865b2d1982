package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// ErrNotCompletion is returned by Replay and WriteStream when the entry's
// body is not a chat.completion they can turn into a stream.
var ErrNotCompletion = errors.New("cache: the entry is not a chat.completion that can be replayed")

// pieceSize is the most bytes of text one replayed chunk carries.
const pieceSize = 96

// Replay returns the server-sent events of a live chat completion stream
// that amounts to e's chat.completion, each a whole event ("data: …\n\n"),
// ending with "data: [DONE]\n\n". The events have a live stream's shape:
// for each choice, a role chunk, chunks of other text fields (such as
// reasoning_content), content in pieces of at most 96 bytes (the first
// carrying the logprobs, if any), refusal in pieces, each tool call as a
// chunk with its id, type and name followed by its arguments in pieces, the
// legacy function_call likewise, other message fields one chunk each, and
// a chunk with the finish_reason; then, when includeUsage is set (the
// request's stream_options.include_usage) and the entry has usage, a chunk
// with empty choices and the usage. With includeUsage every chunk also
// carries "usage":null, as OpenAI's do. An empty string field (refusal
// "") is one chunk with "", so that the stream says it too.
//
// A body is replayed only if its stream can say the same as the body says
// to a client that decodes it; otherwise the error is ErrNotCompletion: a
// choice whose message is not an object, a message key given twice (which
// decoders read differently), content or refusal that is not a string,
// tool calls that are not objects of string fields, and a body whose
// stream would exceed sixteen times its size (plus 16 KiB), as only
// bodies no model writes do (a long id repeated in every chunk).
//
// The events are slices of one buffer; they must not be modified.
func Replay(e Entry, includeUsage bool) ([][]byte, error) {
	buf, ends, err := replay(e, includeUsage)
	if err != nil {
		return nil, err
	}
	events := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		events[i] = buf[start:end:end]
		start = end
	}
	return events, nil
}

// WriteStream writes the events Replay returns to w in one Write. It
// writes nothing when e cannot be replayed (ErrNotCompletion), so the
// caller can still answer otherwise; set the event-stream headers first.
func WriteStream(w io.Writer, e Entry, includeUsage bool) error {
	buf, _, err := replay(e, includeUsage)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// stored is the part of a chat.completion that Replay reads.
type stored struct {
	envelope
	Choices []struct {
		Index        int             `json:"index"`
		Message      json.RawMessage `json:"message"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason json.RawMessage `json:"finish_reason"`
	} `json:"choices"`
}

// parseCompletion reads a chat.completion body into a completion.
func parseCompletion(body []byte) (*completion, error) {
	var s stored
	if json.Unmarshal(body, &s) != nil || len(s.Choices) == 0 ||
		(s.Object != nil && *s.Object != "chat.completion") {
		return nil, ErrNotCompletion
	}
	c := &completion{
		id: compact(s.ID), created: compact(s.Created), model: compact(s.Model),
		fingerprint: compact(s.SystemFingerprint), tier: compact(s.ServiceTier), usage: compact(s.Usage),
	}
	for _, sc := range s.Choices {
		if _, dup := c.choices[sc.Index]; dup || firstByte(sc.Message) != '{' {
			return nil, ErrNotCompletion
		}
		ch := c.choice(sc.Index)
		if ch.addDelta(sc.Message, true) != nil {
			return nil, ErrNotCompletion // no one reading, or no delta form
		}
		ch.addLogprobs(sc.Logprobs)
		ch.finish = compact(sc.FinishReason)
	}
	return c, nil
}

// replayer writes the chunks of one replay into one buffer.
type replayer struct {
	buf    []byte
	ends   []int  // where each event ends in buf
	head   []byte // the chunk's fields before "choices"
	suffix string // what closes a chunk after its choices
	max    int    // the most bytes buf may hold (maxReplay)
	over   bool   // buf has passed max: the replay is given up
}

func replay(e Entry, includeUsage bool) ([]byte, []int, error) {
	c, err := parseCompletion(e.Body)
	if err != nil {
		return nil, nil, err
	}
	r := &replayer{buf: make([]byte, 0, 2*len(e.Body)+1024), suffix: "]}", max: maxReplay(len(e.Body))}
	r.head = append(r.head, `{"id":`...)
	r.head = appendRawOr(r.head, c.id, `""`)
	r.head = append(r.head, `,"object":"chat.completion.chunk","created":`...)
	r.head = appendRawOr(r.head, c.created, "0")
	r.head = append(r.head, `,"model":`...)
	r.head = appendRawOr(r.head, c.model, `""`)
	r.head = appendField(r.head, "service_tier", c.tier)
	r.head = appendField(r.head, "system_fingerprint", c.fingerprint)
	r.head = append(r.head, `,"choices":[`...)
	if includeUsage {
		r.suffix = `],"usage":null}`
	}
	for _, ch := range c.choiceList() {
		r.choice(ch)
	}
	if r.over {
		return nil, nil, ErrNotCompletion
	}
	if includeUsage && c.usage != nil {
		r.buf = append(r.buf, "data: "...)
		r.buf = append(r.buf, r.head...)
		r.buf = append(r.buf, `],"usage":`...)
		r.buf = append(r.buf, c.usage...)
		r.buf = append(r.buf, "}\n\n"...)
		r.ends = append(r.ends, len(r.buf))
	}
	r.buf = append(r.buf, "data: [DONE]\n\n"...)
	r.ends = append(r.ends, len(r.buf))
	return r.buf, r.ends, nil
}

// choice writes the chunks of one choice.
func (r *replayer) choice(ch *choice) {
	role := ch.role
	if role == "" {
		role = "assistant"
	}
	d := append([]byte(`{"role":`), appendString(nil, role)...)
	if ch.texts[0].set {
		d = append(d, `,"content":""`...)
	} else {
		d = append(d, `,"content":null`...)
	}
	r.chunk(ch.index, append(d, `,"refusal":null}`...), nil, nil)

	logprobs := ch.renderLogprobs()
	// Other text fields (reasoning) first, as live streams send them.
	order := append(append(make([]textField, 0, len(ch.texts)), ch.texts[2:]...), ch.texts[:2]...)
	for _, t := range order {
		if !t.set || (len(t.val) == 0 && t.name == "content") {
			continue // content "" is in the role chunk
		}
		name := appendString(nil, t.name)
		if len(t.val) == 0 {
			r.chunk(ch.index, append(append([]byte{'{'}, name...), `:""}`...), nil, nil)
			continue
		}
		eachPiece(t.val, func(p []byte) {
			d := append(append([]byte{'{'}, name...), ':')
			d = append(appendString(d, p), '}')
			if t.name == "content" && logprobs != nil {
				r.chunk(ch.index, d, logprobs, nil)
				logprobs = nil
				return
			}
			r.chunk(ch.index, d, nil, nil)
		})
	}
	for _, t := range ch.toolList() {
		r.toolCall(ch.index, t)
	}
	if f := ch.fn; f != nil {
		d := append([]byte(`{"function_call":`), appendFunction(nil, f.name, nil)...)
		r.chunk(ch.index, append(d, '}'), nil, nil)
		eachPiece(f.args, func(p []byte) {
			d := append(appendString([]byte(`{"function_call":{"arguments":`), p), "}}"...)
			r.chunk(ch.index, d, nil, nil)
		})
	}
	for _, f := range ch.raws {
		r.chunk(ch.index, appendObject(f.name, f.val), nil, nil)
	}
	finish := ch.finish
	if finish == nil {
		finish = json.RawMessage(`"stop"`)
	}
	r.chunk(ch.index, []byte("{}"), logprobs, finish)
}

func appendObject(name string, val json.RawMessage) []byte {
	b := append(appendString([]byte{'{'}, name), ':')
	return append(append(b, val...), '}')
}

// toolCall writes a tool call's chunks: its id, type and name, then its
// arguments in pieces.
func (r *replayer) toolCall(choice int, t *toolCall) {
	typ := t.typ
	if typ == "" {
		typ = "function"
	}
	idx := appendInt(nil, t.index)
	d := append([]byte(`{"tool_calls":[{"index":`), idx...)
	d = append(d, `,"id":`...)
	d = appendString(d, t.id)
	d = append(d, `,"type":`...)
	d = appendString(d, typ)
	d = append(d, `,"function":`...)
	d = appendFunction(d, t.name, nil)
	r.chunk(choice, append(d, "}]}"...), nil, nil)
	eachPiece(t.args, func(p []byte) {
		d := append([]byte(`{"tool_calls":[{"index":`), idx...)
		d = append(d, `,"function":{"arguments":`...)
		d = appendString(d, p)
		r.chunk(choice, append(d, "}}]}"...), nil, nil)
	})
}

// chunk writes one event with one choice: its delta, logprobs and
// finish_reason (nil for null).
func (r *replayer) chunk(index int, delta, logprobs, finish []byte) {
	if r.over {
		return
	}
	b := append(r.buf, "data: "...)
	b = append(b, r.head...)
	b = append(b, `{"index":`...)
	b = appendInt(b, index)
	b = append(b, `,"delta":`...)
	b = append(b, delta...)
	b = append(b, `,"logprobs":`...)
	b = appendRawOr(b, logprobs, "null")
	b = append(b, `,"finish_reason":`...)
	b = appendRawOr(b, finish, "null")
	b = append(b, '}')
	b = append(b, r.suffix...)
	r.buf = append(b, "\n\n"...)
	r.ends = append(r.ends, len(r.buf))
	r.over = len(r.buf) > r.max
}

// renderLogprobs returns the choice's logprobs object, or nil.
func (ch *choice) renderLogprobs() []byte {
	lp := ch.logprobs
	if lp == nil {
		return nil
	}
	b := append([]byte(`{"content":`), appendRawList(nil, lp.content, lp.contentSet)...)
	b = append(b, `,"refusal":`...)
	b = appendRawList(b, lp.refusal, lp.refusalSet)
	return append(b, '}')
}

// eachPiece calls fn with s cut into pieces of at most pieceSize bytes,
// cut after a space or line break where one falls in the second half of a
// piece, and never inside a UTF-8 sequence.
func eachPiece(s []byte, fn func([]byte)) {
	for len(s) > 0 {
		n := len(s)
		if n > pieceSize {
			n = pieceSize
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			if n == 0 { // no rune start in reach: invalid UTF-8, cut anyway
				n = pieceSize
			}
			if n > pieceSize/2 {
				if sp := bytes.LastIndexAny(s[pieceSize/2:n], " \n"); sp >= 0 {
					n = pieceSize/2 + sp + 1
				}
			}
		}
		fn(s[:n])
		s = s[n:]
	}
}

// maxReplay is the most bytes of events Replay writes for a body of n
// bytes. A live stream's framing costs a few times the text it carries;
// only bodies no model writes cost more (thousands of empty tool calls, a
// huge id repeated in every chunk), and those are not replayed.
func maxReplay(n int) int { return 16*n + 16<<10 }
