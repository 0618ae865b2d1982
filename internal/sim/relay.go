package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// relayed is the chat engine's answer to a call translated from another
// API (Messages, Bedrock, Gemini, Vertex): the engine runs in a goroutine
// of its own, writing into a pipe, and the caller translates what comes
// out. A reset, or a hang or stall released by Close, cuts the answer:
// status is 0 when that happened before any byte, and cut reports it
// after.
type relayed struct {
	status int         // the engine's status; 0: cut before any byte
	header http.Header // the engine's headers; read only once status is known
	body   *io.PipeReader
	in     *cutReader // body, for the translators of streams
	cutAt  *atomic.Bool
	pipe   *pipeWriter
}

// cutReader reads the engine's stream and notes when the engine's cut
// reaches the translator.
type cutReader struct {
	r    io.Reader
	seen bool // the translator has read errCut; it runs in pump's goroutine
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == errCut {
		c.seen = true
	}
	return n, err
}

// relay runs chat (an OpenAI chat completion body) through the chat
// engine as a call of API a, and returns once the engine has sent its
// status. The caller must close the body.
func (s *Server) relay(r *http.Request, chat []byte, a api) *relayed {
	inner := r.WithContext(r.Context())
	inner.Body, inner.ContentLength = io.NopCloser(bytes.NewReader(chat)), int64(len(chat))
	pr, pw := io.Pipe()
	p := &pipeWriter{header: http.Header{}, pw: pw, started: make(chan int, 1)}
	cut := new(atomic.Bool)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					panic(v)
				}
				cut.Store(true)
				p.start(0)
				pw.CloseWithError(errCut)
				return
			}
			p.start(http.StatusOK)
			pw.Close()
		}()
		s.serveChat(p, inner, a)
	}()
	return &relayed{status: <-p.started, header: p.header, body: pr, in: &cutReader{r: pr}, cutAt: cut, pipe: p}
}

// errCut is what a relayed body returns once the engine cut the answer.
var errCut = errors.New("sim: the connection was cut")

// cut reports whether the engine cut the answer.
func (rl *relayed) cut() bool { return rl.cutAt.Load() }

// endCut ends a stream the engine cut: with garbage, the bytes a Garbage
// fault leaves in the path's own format, then no more (the connection is
// aborted).
func (rl *relayed) endCut(w http.ResponseWriter, garbage []byte) {
	if rl.pipe.garbled.Load() {
		w.Write(garbage)
		http.NewResponseController(w).Flush()
	}
	panic(http.ErrAbortHandler)
}

// streaming reports whether the engine is sending an event stream.
func (rl *relayed) streaming() bool {
	ct := rl.header.Get("Content-Type")
	return len(ct) >= 17 && ct[:17] == "text/event-stream"
}

// copyHeaders copies the engine's headers to h but for the body's own
// Content-Type and Content-Length: rate limits and Retry-After.
func (rl *relayed) copyHeaders(h http.Header) {
	for k, v := range rl.header {
		if k != "Content-Length" && k != "Content-Type" {
			h[k] = v
		}
	}
}

// engineError is an error answer of the chat engine, read back from its
// OpenAI (or, for 529, Anthropic) shape, for another API to say in its
// own words.
type engineError struct {
	status     int
	typ        string // OpenAI's error type, or Anthropic's
	code       string // OpenAI's code: rate_limit_exceeded, content_filter, model_not_ready, …
	param      string
	msg        string
	anthropic  bool          // the body was Anthropic-shaped
	retryAfter time.Duration // from retry-after-ms, or Retry-After; 0: none
}

// readError reads an error answer's body.
func (rl *relayed) readError() engineError {
	b, _ := io.ReadAll(io.LimitReader(rl.body, 64<<10))
	var e struct {
		Type  string
		Error struct {
			Type, Message string
			Code, Param   json.RawMessage
		}
	}
	json.Unmarshal(b, &e)
	out := engineError{status: rl.status, typ: e.Error.Type, msg: e.Error.Message, anthropic: e.Type == "error"}
	json.Unmarshal(e.Error.Code, &out.code)
	json.Unmarshal(e.Error.Param, &out.param)
	if ms, err := strconv.ParseInt(rl.header.Get("Retry-After-Ms"), 10, 64); err == nil && ms > 0 {
		out.retryAfter = time.Duration(ms) * time.Millisecond
	} else if sec, err := strconv.ParseInt(rl.header.Get("Retry-After"), 10, 64); err == nil && sec > 0 {
		out.retryAfter = time.Duration(sec) * time.Second
	}
	return out
}

// cutConnection ends a client's call with no answer: a TCP reset where
// the connection can be hijacked, an aborted handler otherwise.
func cutConnection(w http.ResponseWriter) {
	if !reset(w) {
		panic(http.ErrAbortHandler)
	}
}

// pump copies a translated stream (read from rl.in) to the client,
// flushing after every read, until it ends, the client leaves or the
// engine's cut reaches the translator: what the translator makes of the
// cut (an error event, an exception frame) is not sent, as a cut
// connection sends nothing more.
func (rl *relayed) pump(w http.ResponseWriter, rd io.Reader) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 8<<10)
	for {
		n, err := rd.Read(buf)
		if rl.in.seen {
			return
		}
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// readBody reads a request body of at most maxBody bytes; it reports the
// status to answer when it cannot (413 for too large, 400 otherwise).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, int) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	switch {
	case err == nil:
		return body, 0
	case errors.As(err, new(*http.MaxBytesError)):
		return nil, http.StatusRequestEntityTooLarge
	}
	return nil, http.StatusBadRequest
}
