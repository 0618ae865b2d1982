package chatwire

import (
	"io"
	"net/http"
)

// Refill is the output side of a stream translator: the translated bytes
// not yet read (Out, from Off) and the error to return once they are
// drained (Err). A translator embeds it, appends one upstream event's
// translation to Out per refill, and so holds no more than that.
type Refill struct {
	Out []byte
	Off int
	Err error
}

// Pull copies translated bytes into p. Whenever Out is drained it is
// emptied and step is called, which appends the next event's translation
// to Out or sets Err; once Out is drained and Err is set, Pull returns
// Err, and keeps returning it.
func (r *Refill) Pull(p []byte, step func()) (int, error) {
	for r.Off == len(r.Out) {
		if r.Err != nil {
			return 0, r.Err
		}
		r.Out, r.Off = r.Out[:0], 0
		step()
	}
	n := copy(p, r.Out[r.Off:])
	r.Off += n
	return n, nil
}

// Streamed sets body, a stream translator reading resp's old body, as
// resp's and marks resp an event stream of unknown length: no
// Content-Length or Content-Encoding, Content-Type text/event-stream.
func Streamed(resp *http.Response, body io.ReadCloser) *http.Response {
	resp.Body = body
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	resp.Header.Set("Content-Type", "text/event-stream")
	return resp
}
