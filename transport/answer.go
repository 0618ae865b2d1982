package transport

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// answer is one attempt's result on its way to a verdict.
type answer struct {
	ep      *endpoint
	permit  breaker.Permit
	guard   *guard // nil: no budget applies
	resp    *http.Response
	err     error
	verdict aierr.Verdict
	prefix  []byte // a guarded answer's first bytes, already read
}

// peekSize is how much of a guarded answer is read to see its first byte.
const peekSize = 512

// classify turns the response or error into a verdict. An error answer's
// body is read (up to aierr.MaxBody) and replaced by a buffered copy, so
// the caller still gets it whole if it is returned.
func (a *answer) classify(w *walk, resp *http.Response, err error) {
	c := w.t.cfg.Classifier
	ctx := w.req.Context()
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.resp = resp
		if a.guard == nil {
			return // success: reported when the body ends
		}
		g := a.guard
		if g.firstByteBudget == 0 {
			g.armIdle() // no first-byte budget: the first read is one more wait for more
		}
		buf := make([]byte, peekSize)
		n, rerr := resp.Body.Read(buf)
		g.disarm()
		a.prefix = buf[:n]
		if (n > 0 || rerr == nil || rerr == io.EOF) && a.guard.firstByteArrived() {
			return
		}
		resp.Body.Close()
		a.resp, err = nil, rerr
	}
	if err != nil {
		switch {
		case a.guard != nil && a.guard.expired.Load() == expiredFirstByte:
			err = aierr.ErrFirstByteTimeout
		case a.guard != nil && a.guard.expired.Load() == expiredIdle:
			err = aierr.ErrStreamStalled
		case ctx.Err() != nil:
			err = ctx.Err()
		}
		a.verdict = c.ClassifyError(err)
		if a.verdict.Kind == aierr.Canceled {
			a.err = err
		} else {
			a.err = &aierr.Error{Verdict: a.verdict, Err: err}
		}
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, aierr.MaxBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // let the connection be reused
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	a.resp = resp
	a.verdict = c.Classify(resp.StatusCode, resp.Header, body)
}

// deliver hands a successful response to the caller with a body that
// reports the outcome to the breaker (and frees the bulkhead slot) when it
// ends.
func (a *answer) deliver(w *walk) *http.Response {
	a.resp.Body = &body{rc: a.resp.Body, prefix: a.prefix, a: *a, classifier: w.t.cfg.Classifier,
		sse: strings.HasPrefix(a.resp.Header.Get("Content-Type"), "text/event-stream")}
	return a.resp
}

// release frees what the attempt held besides its permit.
func (a *answer) release() {
	if a.guard != nil {
		a.guard.stop()
	}
	if a.ep.bulk != nil {
		a.ep.bulk.Release()
	}
}

// body is a successful response's body: it passes reads through and, when
// the body ends, reports to the breaker — success at EOF, failure on a read
// error or a stalled stream, nothing (ignored) if the caller closes early.
// An event stream whose terminal event (OpenAI's data: [DONE], Anthropic's
// message_stop) has passed counts as complete when closed: SDKs stop reading
// there.
type body struct {
	rc         io.ReadCloser
	prefix     []byte
	a          answer
	classifier *aierr.Classifier
	done       atomic.Bool // the outcome has been reported

	sse    bool
	sawEnd bool
	tail   [len(endMarkMax) - 1]byte // the end of the last read, for marks split across reads
	tailN  int
}

// The marks of a stream's terminal event.
var (
	doneMark = []byte("[DONE]")
	stopMark = []byte(endMarkMax)
)

// endMarkMax is the longer mark: a seam of one byte less on each side finds
// a mark split across two reads.
const endMarkMax = "message_stop"

func (b *body) Read(p []byte) (int, error) {
	n, err := b.read(p)
	if b.sse && !b.sawEnd && n > 0 {
		b.watch(p[:n])
	}
	return n, err
}

// watch looks for a terminal event in p and across the seam with the
// previous read.
func (b *body) watch(p []byte) {
	var seam [2 * (len(endMarkMax) - 1)]byte
	k := copy(seam[:], b.tail[:b.tailN])
	k += copy(seam[k:], p)
	for _, s := range [][]byte{seam[:k], p} {
		if bytes.Contains(s, doneMark) || bytes.Contains(s, stopMark) {
			b.sawEnd = true
			return
		}
	}
	if len(p) >= len(b.tail) {
		b.tailN = copy(b.tail[:], p[len(p)-len(b.tail):])
	} else {
		keep := min(b.tailN, len(b.tail)-len(p))
		copy(b.tail[:], b.tail[b.tailN-keep:b.tailN])
		b.tailN = keep + copy(b.tail[keep:], p)
	}
}

func (b *body) read(p []byte) (int, error) {
	if len(b.prefix) > 0 {
		n := copy(p, b.prefix)
		b.prefix = b.prefix[n:]
		return n, nil
	}
	if b.done.Load() {
		return 0, io.EOF
	}
	g := b.a.guard
	if g != nil {
		g.armIdle()
	}
	n, err := b.rc.Read(p)
	if g != nil {
		g.disarm()
	}
	switch {
	case err == io.EOF:
		b.finish(breaker.Outcome{Result: breaker.Success})
	case err != nil:
		if g != nil && g.expired.Load() == expiredIdle {
			err = aierr.ErrStreamStalled
		}
		v := b.classifier.ClassifyError(err)
		if v.Kind == aierr.Canceled {
			b.finish(breaker.Outcome{Result: breaker.Ignored})
			return n, err
		}
		b.finish(breaker.Outcome{Result: breaker.Failure})
		err = &aierr.Error{Verdict: v, Err: err}
	}
	return n, err
}

func (b *body) Close() error {
	if b.sawEnd {
		b.finish(breaker.Outcome{Result: breaker.Success})
	} else {
		b.finish(breaker.Outcome{Result: breaker.Ignored})
	}
	return b.rc.Close()
}

func (b *body) finish(o breaker.Outcome) {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	b.a.permit.Report(o)
	b.a.release()
}
