package transport

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/fuseboxhq/fusebox/aireq"
)

// request is what the transport knows of a request's JSON body, read once.
type request struct {
	body   []byte // nil: no body, or too large to keep (then replay is off)
	replay bool   // the body can be sent more than once
	aireq.Fields
}

// withModel returns the body with its "model" value replaced.
func (r *request) withModel(model string) []byte { return r.WithModel(r.body, model) }

// tokens estimates the request's tokens for the pacers.
func (r *request) tokens() int { return r.Tokens(len(r.body)) }

// readRequest buffers req's body (up to limit bytes) and reads the fields
// the transport needs from it. A body over the limit is left unread and
// the request can be sent only once.
func readRequest(req *http.Request, limit int64) (request, error) {
	var r request
	if req.Body == nil || req.Body == http.NoBody {
		r.replay = true
		return r, nil
	}
	if req.ContentLength > limit {
		return r, nil
	}
	var buf []byte
	if n := req.ContentLength; n > 0 {
		buf = make([]byte, n)
		if _, err := io.ReadFull(req.Body, buf); err != nil {
			return r, fmt.Errorf("transport: reading request body: %w", err)
		}
	} else {
		b, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
		if err != nil {
			return r, fmt.Errorf("transport: reading request body: %w", err)
		}
		if int64(len(b)) > limit {
			// Too large to keep: glue what was read back in front.
			req.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
			return r, nil
		}
		buf = b
	}
	req.Body.Close()
	r.body, r.replay = buf, true
	r.Fields = aireq.Scan(buf)
	return r, nil
}
