package gateway

import (
	"errors"
	"io"
	"net/http"

	"github.com/fuseboxhq/fusebox/internal/sse"
)

// pipeSink translates a committed stream's OpenAI events to the client's
// API (Anthropic's Messages, Google's Gemini) through a pipe: a goroutine
// owned by the sink reads the translator and writes the client, flushing
// after each read; Close and Broken wait for it.
type pipeSink struct {
	w    http.ResponseWriter
	pw   *io.PipeWriter
	done chan struct{}
	// broken writes the API's own error event, after the translation.
	broken func(http.ResponseWriter, sse.ErrorEvent)
	// cut is set by the pump when the translation ended in error: an
	// answer the translator could not finish must not look whole.
	cut bool
}

var errStreamBroken = errors.New("stream broken")

func newPipeSink(w http.ResponseWriter, translate func(io.Reader) io.Reader, broken func(http.ResponseWriter, sse.ErrorEvent)) *pipeSink {
	pr, pw := io.Pipe()
	s := &pipeSink{w: w, pw: pw, done: make(chan struct{}), broken: broken}
	go s.pump(translate(pr), pr)
	return s
}

func (s *pipeSink) pump(rd io.Reader, pr *io.PipeReader) {
	defer close(s.done)
	rc := http.NewResponseController(s.w)
	buf := make([]byte, 16<<10)
	for {
		n, err := rd.Read(buf)
		if n > 0 {
			s.w.Write(buf[:n])
			rc.Flush()
		}
		if err != nil {
			s.cut = err != io.EOF && !errors.Is(err, errStreamBroken)
			pr.CloseWithError(err) // unblock a writer if the translator stopped first
			return
		}
	}
}

func (s *pipeSink) Write(raw []byte) error {
	_, err := s.pw.Write(raw)
	return err
}

// Flush does nothing: the pump flushes what it translates.
func (s *pipeSink) Flush() error { return nil }

// Close ends a stream that finished well; one whose translation could not
// finish it is cut (the handler aborts the connection), so that its
// client cannot take it for a whole answer.
func (s *pipeSink) Close() {
	s.pw.Close()
	<-s.done
	if s.cut {
		panic(http.ErrAbortHandler)
	}
}

// Broken ends the stream with the API's error event e, after what was
// translated so far.
func (s *pipeSink) Broken(e sse.ErrorEvent) {
	s.pw.CloseWithError(errStreamBroken)
	<-s.done
	s.broken(s.w, e)
}
