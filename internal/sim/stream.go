package sim

import (
	"cmp"
	"encoding/json"
	"net/http"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

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
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// streamer writes one call's event stream.
type streamer struct {
	s     *Server
	c     *call
	sw    *sse.Writer
	sent  int  // reply tokens sent
	ended bool // the outcome is counted
}

// end bills what was sent and counts outcome o, once: before the event
// that lets the client see the end, so that Stats agree with what a client
// has seen.
func (st *streamer) end(o Outcome) {
	if !st.ended {
		st.ended = true
		st.s.stats.bill(st.c.prompt, st.sent)
		st.s.stats.finish(o)
	}
}

// write sends one chunk with the given choices and usage.
func (st *streamer) write(choices []chunkChoice, u *usage) error {
	data, err := json.Marshal(chunk{ID: st.c.id, Object: "chat.completion.chunk", Created: st.c.created,
		Model: st.c.model, SystemFingerprint: fingerprint, Choices: choices, Usage: u})
	if err != nil {
		panic("sim: " + err.Error()) // the package's own types always marshal
	}
	return st.sw.WriteEvent("", data)
}

// writeDelta sends a chunk with one choice.
func (st *streamer) writeDelta(d delta, finish *string) error {
	return st.write([]chunkChoice{{Delta: d, FinishReason: finish}}, nil)
}

// stream answers a chat completion as server-sent events: after the wait
// for the first byte, the headers, a role chunk and the first content
// chunk; then a chunk of Output.ChunkTokens tokens per gap at the token
// rate; then a finish chunk, a usage chunk when asked for, and
// data: [DONE]. A Stall, StreamError or Reset fault acts after
// AfterChunks content chunks; a NoDone fault leaves out the [DONE]. It
// counts the call's outcome and bills what it sent.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p *plan, c *call, includeUsage bool) {
	if err := s.sleep(r.Context(), p.wait+p.extra); err != nil {
		s.stats.finish(OutcomeCanceled)
		return
	}
	h := w.Header()
	p.limit.headers.set(h)
	sse.SetHeaders(h)
	w.WriteHeader(http.StatusOK)
	st := &streamer{s: s, c: c, sw: sse.NewWriter(w)}
	o, cut := s.streamBody(r, p, st, includeUsage)
	st.end(o)
	if cut { // a reset, or a stall released by Close
		panic(http.ErrAbortHandler)
	}
}

// streamBody writes the events of a stream whose headers are sent. It
// returns the outcome, and whether the connection must be cut.
func (s *Server) streamBody(r *http.Request, p *plan, st *streamer, includeUsage bool) (Outcome, bool) {
	empty := ""
	if st.writeDelta(delta{Role: "assistant", Content: &empty}, nil) != nil {
		return OutcomeCanceled, false
	}
	tokens := st.c.tokens
	size := s.cfg.Output.chunkTokens()
	n := (len(tokens) + size - 1) / size
	gap := s.cfg.Latency.chunkGap(size)
	var pace clock.Timer
	defer func() {
		if pace != nil {
			pace.Stop()
		}
	}()
	for i := 0; i <= n; i++ {
		if p.faulted && i == min(p.fault.AfterChunks, n) {
			if o, cut, acted := s.streamFault(r, p.fault, st); acted {
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
				return OutcomeCanceled, false
			}
		}
		part := tokens[i*size : min((i+1)*size, len(tokens))]
		text := concat(part)
		if st.writeDelta(delta{Content: &text}, nil) != nil {
			return OutcomeCanceled, false
		}
		st.sent += len(part)
	}
	finish := st.c.finish
	if st.writeDelta(delta{}, &finish) != nil {
		return OutcomeCanceled, false
	}
	if includeUsage {
		u := st.c.usage(len(tokens))
		if st.write([]chunkChoice{}, &u) != nil {
			return OutcomeCanceled, false
		}
	}
	if p.faulted && p.fault.Kind == NoDone {
		st.end(OutcomeNoDone) // the body ends cleanly when the handler returns
		return OutcomeNoDone, false
	}
	st.end(OutcomeOK) // a client gone now has had every token
	st.sw.WriteDone()
	return OutcomeOK, false
}

// streamFault applies a fault inside a stream: it returns the outcome,
// whether the connection must be cut, and whether the fault acted (false
// for kinds that do not act inside streams).
func (s *Server) streamFault(r *http.Request, f Fault, st *streamer) (o Outcome, cut, acted bool) {
	switch f.Kind {
	case Stall:
		select {
		case <-r.Context().Done():
			return OutcomeStall, false, true
		case <-s.done:
			return OutcomeStall, true, true
		}
	case StreamError:
		st.end(OutcomeStreamError)
		st.sw.WriteError(sse.ErrorEvent{
			Type:    "server_error",
			Message: cmp.Or(f.Message, "The server had an error while processing your request. Sorry about that!"),
		})
		return OutcomeStreamError, false, true
	case Reset:
		return OutcomeReset, true, true
	}
	return "", false, false
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
