// This file is a copy of package openai's: the same rules for a body the
// same API is sent.

package azure

import (
	"errors"
	"io"
	"net/http"
)

// A call's body with the target's model is a copy of the client's request,
// as large as the conversation. The answer keeps its request (Response.Request),
// so a body held by the request would live as long as a stream it started:
// for a slow stream, minutes. sentBody lets go of it once sent.

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

// resend gives a request's body again while the request may still be sent
// again (a reused connection the server had closed): until spend.
type resend struct{ b []byte }

var errSpent = errors.New("azure: the request was answered; its body is gone")

// newSentBody sets body as req's, replayable until the returned resend is
// spent.
func newSentBody(req *http.Request, body []byte) *resend {
	r := &resend{b: body}
	req.ContentLength = int64(len(body))
	req.Body = &sentBody{b: body}
	req.GetBody = r.get
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
	}
	return r
}

func (r *resend) get() (io.ReadCloser, error) {
	if r.b == nil {
		return nil, errSpent
	}
	return &sentBody{b: r.b}, nil
}

// spend ends the replays: RoundTrip has returned, and calls GetBody no more.
func (r *resend) spend() { r.b = nil }
