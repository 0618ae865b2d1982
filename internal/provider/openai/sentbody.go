package openai

import (
	"errors"
	"io"
	"net/http"
)

// A call's body with the target's model is a copy of the client's request,
// as large as the conversation. The answer keeps its request (Response.Request),
// so a body held by the request would live as long as a stream it started:
// for a slow stream, minutes. sentBody lets go of it once sent. Every adapter
// that posts a call's body as is (this one, azure) sends it this way.

// sentBody is a request body that drops its bytes at its end. Close
// leaves them: a transport may close a body while another of its
// goroutines reads it.
type sentBody struct {
	b   []byte
	off int
}

func (s *sentBody) Read(p []byte) (int, error) {
	if s.off >= len(s.b) {
		s.b = nil
		return 0, io.EOF
	}
	n := copy(p, s.b[s.off:])
	s.off += n
	return n, nil
}

func (s *sentBody) Close() error { return nil }

// Resend gives a request's body again while the request may still be sent
// again (a reused connection the server had closed): until Spend.
//
// It holds the request's first body too, so that sending a body is two
// allocations (this and GetBody's method value), not three.
type Resend struct {
	first sentBody
	b     []byte
	spent error
}

var errSpent = errors.New("openai: the request was answered; its body is gone")

// NewSentBody sets body as req's, replayable (req.GetBody) until the
// returned Resend is spent; after that GetBody returns spent, an error
// that names the provider. An empty body is http.NoBody.
func NewSentBody(req *http.Request, body []byte, spent error) *Resend {
	r := &Resend{first: sentBody{b: body}, b: body, spent: spent}
	req.ContentLength = int64(len(body))
	req.Body = &r.first
	req.GetBody = r.get
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
	}
	return r
}

// newSentBody is NewSentBody with this package's error.
func newSentBody(req *http.Request, body []byte) *Resend {
	return NewSentBody(req, body, errSpent)
}

func (r *Resend) get() (io.ReadCloser, error) {
	if r.b == nil {
		return nil, r.spent
	}
	return &sentBody{b: r.b}, nil
}

// Spend ends the replays: RoundTrip has returned, and calls GetBody no more.
func (r *Resend) Spend() { r.b = nil }

func (r *Resend) spend() { r.Spend() }
