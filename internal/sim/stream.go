package sim

import (
	"cmp"
	"encoding/json"
	"net/http"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// streamer drives one call's event stream and counts what it sent.
type streamer struct {
	s       *Server
	prompt  int      // prompt tokens, billed with what is sent
	answers []answer // what the stream carries
	sent    int      // reply tokens sent
	ended   bool     // the outcome is counted
}

// end bills what was sent and counts outcome o, once: before the event
// that lets the client see the end, so that Stats agree with what a client
// has seen.
func (st *streamer) end(o Outcome) {
	if !st.ended {
		st.ended = true
		st.s.stats.bill(st.prompt, st.sent)
		st.s.stats.finish(o)
	}
}

// streamFormat writes the events of one API's stream; Server.stream
// drives it through the steps of the answers.
type streamFormat interface {
	// begin writes, on sw, what comes before the first piece.
	begin(sw *sse.Writer) error
	// step writes one step: the next piece of each answer that has one.
	step(ps []piece) error
	// finish writes the rest of a complete answer but its final event.
	finish() error
	// done writes the final event: data: [DONE], response.completed.
	done()
	// fail writes an error event that ends the stream.
	fail(msg string)
}

// piece is one event's part of an answer: a run of content tokens, the
// start of a tool call (its id and name, no arguments), or a run of its
// arguments.
type piece struct {
	choice int    // the answer's index
	call   int    // the tool call's index in the answer; -1: content
	start  bool   // the start of the tool call
	text   string // content or arguments
	tokens int
}

// steps cuts answers into a stream's steps: step i holds the i-th piece of
// every answer that has one. Content and arguments go size tokens a piece;
// each tool call starts with a piece of its own.
func steps(answers []answer, size int) [][]piece {
	per := make([][]piece, len(answers))
	total, most := 0, 0
	for i := range answers {
		per[i] = answers[i].pieces(i, size)
		total, most = total+len(per[i]), max(most, len(per[i]))
	}
	flat := make([]piece, 0, total)
	out := make([][]piece, most)
	for j := range out {
		from := len(flat)
		for _, ps := range per {
			if j < len(ps) {
				flat = append(flat, ps[j])
			}
		}
		out[j] = flat[from:len(flat):len(flat)]
	}
	return out
}

// pieces cuts answer i into pieces of size tokens.
func (a *answer) pieces(i, size int) []piece {
	n := (len(a.tokens) + size - 1) / size
	for _, c := range a.calls {
		n += 1 + (len(c.parts)+size-1)/size
	}
	ps := make([]piece, 0, n)
	add := func(call int, tokens []string) {
		for j := 0; j < len(tokens); j += size {
			part := tokens[j:min(j+size, len(tokens))]
			ps = append(ps, piece{choice: i, call: call, text: concat(part), tokens: len(part)})
		}
	}
	add(-1, a.tokens)
	for j, c := range a.calls {
		ps = append(ps, piece{choice: i, call: j, start: true})
		add(j, c.parts)
	}
	return ps
}

// stream answers a call as server-sent events: after the wait for the
// first byte, the headers, f's opening events and the first step; then a
// step of Output.ChunkTokens tokens per gap at the token rate; then f's
// closing events. A Stall, StreamError or Reset fault acts after
// AfterChunks steps; a NoDone fault leaves out the final event; a Drip
// sends a step every Extra, then holds the stream open. It counts
// the call's outcome and bills what it sent.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p *plan, st *streamer, f streamFormat) {
	if err := s.sleep(r.Context(), p.wait+p.extra); err != nil {
		s.stats.finish(OutcomeCanceled)
		return
	}
	h := w.Header()
	p.limit.headers.set(h)
	sse.SetHeaders(h)
	w.WriteHeader(http.StatusOK)
	o, cut := s.streamBody(w, r, p, st, f, sse.NewWriter(w))
	st.end(o)
	if cut { // a reset, or a stall released by Close
		panic(http.ErrAbortHandler)
	}
}

// streamBody writes the events of a stream whose headers are sent. It
// returns the outcome, and whether the connection must be cut.
func (s *Server) streamBody(w http.ResponseWriter, r *http.Request, p *plan, st *streamer, f streamFormat, sw *sse.Writer) (Outcome, bool) {
	if f.begin(sw) != nil {
		return OutcomeCanceled, false
	}
	size := s.cfg.Output.chunkTokens()
	all := steps(st.answers, size)
	n := len(all)
	at, gap, gone := p.paced(n, s.cfg.Latency.chunkGap(size))
	var pace clock.Timer
	defer func() {
		if pace != nil {
			pace.Stop()
		}
	}()
	for i := 0; i <= n; i++ {
		if p.faulted && i == at {
			if o, cut, acted := s.streamFault(w, r, p.fault, st, f, sw); acted {
				return o, cut
			}
		}
		if i == n {
			break
		}
		if i > 0 && gap > 0 {
			if pace == nil {
				pace = s.clk.NewTimer(gap)
			} else {
				pace.Reset(gap)
			}
			select {
			case <-pace.C():
			case <-r.Context().Done():
				return gone, false
			}
		}
		if f.step(all[i]) != nil {
			return gone, false
		}
		for _, pc := range all[i] {
			st.sent += pc.tokens
		}
	}
	if f.finish() != nil {
		return OutcomeCanceled, false
	}
	if p.faulted && p.fault.Kind == NoDone {
		st.end(OutcomeNoDone) // the body ends cleanly when the handler returns
		return OutcomeNoDone, false
	}
	st.end(OutcomeOK) // a client gone now has had every token
	f.done()
	return OutcomeOK, false
}

// paced returns, for a stream of n steps normally gap apart, the step
// before which its fault acts, the gap between steps, and the outcome of
// a client that leaves mid-stream: a Drip paces the whole stream at its
// Extra and acts once the content is sent.
func (p *plan) paced(n int, gap time.Duration) (at int, _ time.Duration, gone Outcome) {
	if p.faulted && p.fault.Kind == Drip {
		return n, p.fault.Extra, OutcomeDrip
	}
	return min(p.fault.AfterChunks, n), gap, OutcomeCanceled
}

// streamFault applies a fault inside a stream: it returns the outcome,
// whether the connection must be cut, and whether the fault acted (false
// for kinds that do not act inside streams).
func (s *Server) streamFault(w http.ResponseWriter, r *http.Request, fault Fault, st *streamer, f streamFormat, sw *sse.Writer) (o Outcome, cut, acted bool) {
	switch fault.Kind {
	case Stall, Drip:
		o = OutcomeStall
		if fault.Kind == Drip {
			o = OutcomeDrip
		}
		select {
		case <-r.Context().Done():
			return o, false, true
		case <-s.done:
			return o, true, true
		}
	case StreamError:
		st.end(OutcomeStreamError)
		f.fail(cmp.Or(fault.Message, "The server had an error while processing your request. Sorry about that!"))
		return OutcomeStreamError, false, true
	case Reset:
		return OutcomeReset, true, true
	case Garbage:
		st.end(OutcomeGarbage)
		if pw, ok := w.(*pipeWriter); ok {
			pw.garbled.Store(true) // the translating handler sends its own format's garbage
		} else {
			sw.WriteRaw(garbageSSE)
		}
		return OutcomeGarbage, true, true
	}
	return "", false, false
}

// garbageSSE is what a Garbage fault leaves of a chat or Responses
// stream's next event: its first bytes, cut in the middle of its JSON.
var garbageSSE = []byte(`data: {"id":"chatcmpl-sim","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tru`)

// chatStream writes a chat completion's stream: a role chunk per choice,
// a chunk per piece (content deltas; tool_calls deltas by index, the
// first with the call's id, type and name and empty arguments), a finish
// chunk per choice, a usage chunk when asked for, and data: [DONE].
type chatStream struct {
	c            *call
	includeUsage bool
	sw           *sse.Writer
}

// chunk is an OpenAI chat.completion.chunk.
type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// write sends one chunk with the given choices and usage.
func (f *chatStream) write(choices []chunkChoice, u *usage) error {
	data, err := json.Marshal(chunk{ID: f.c.id, Object: "chat.completion.chunk", Created: f.c.created,
		Model: f.c.model, SystemFingerprint: fingerprint, Choices: choices, Usage: u})
	if err != nil {
		panic("sim: " + err.Error()) // the package's own types always marshal
	}
	return f.sw.WriteEvent("", data)
}

// writeDelta sends a chunk with one choice.
func (f *chatStream) writeDelta(index int, d delta, finish *string) error {
	return f.write([]chunkChoice{{Index: index, Delta: d, FinishReason: finish}}, nil)
}

func (f *chatStream) begin(sw *sse.Writer) error {
	f.sw = sw
	for i := range f.c.answers {
		d := delta{Role: "assistant"}
		if f.c.answers[i].calls == nil {
			empty := ""
			d.Content = &empty
		}
		if err := f.writeDelta(i, d, nil); err != nil {
			return err
		}
	}
	return nil
}

func (f *chatStream) step(ps []piece) error {
	for _, pc := range ps {
		var d delta
		switch {
		case pc.call < 0:
			text := pc.text
			d.Content = &text
		case pc.start:
			tc := &f.c.answers[pc.choice].calls[pc.call]
			d.ToolCalls = []toolCallDelta{{Index: pc.call, ID: tc.id, Type: "function", Function: functionDelta{Name: tc.name}}}
		default:
			d.ToolCalls = []toolCallDelta{{Index: pc.call, Function: functionDelta{Arguments: pc.text}}}
		}
		if err := f.writeDelta(pc.choice, d, nil); err != nil {
			return err
		}
	}
	return nil
}

func (f *chatStream) finish() error {
	for i := range f.c.answers {
		if err := f.writeDelta(i, delta{}, &f.c.answers[i].finish); err != nil {
			return err
		}
	}
	if f.includeUsage {
		u := f.c.usage()
		return f.write([]chunkChoice{}, &u)
	}
	return nil
}

func (f *chatStream) done() { f.sw.WriteDone() }

func (f *chatStream) fail(msg string) {
	f.sw.WriteError(sse.ErrorEvent{Type: "server_error", Message: msg})
}

// concat joins tokens; a chunk of one token costs no allocation.
func concat(tokens []string) string {
	if len(tokens) == 1 {
		return tokens[0]
	}
	n := 0
	for _, t := range tokens {
		n += len(t)
	}
	b := make([]byte, 0, n)
	for _, t := range tokens {
		b = append(b, t...)
	}
	return string(b)
}
