package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock"
)

// maxAnswer bounds the answer bodies read whole (job objects, errors).
const maxAnswer = 1 << 20

// call is one request to a target.
type call struct {
	method, url string
	body        []byte
	contentType string
	key         int    // the index of the API key; -1: none
	idem        string // the Idempotency-Key; "": none
	timeout     time.Duration
}

// answer is what a call got.
type answer struct {
	status int
	header http.Header
	body   []byte
	// err is a transport error (a timeout included); status is 0 then.
	err error
	// sent reports that the request may have reached the provider whole:
	// it was written, or it failed in a way that does not prove it was
	// not (only a failed dial does).
	sent bool
}

// verdict classifies a.
func (a *answer) verdict(t *target) aierr.Verdict {
	if a.err != nil {
		return t.classify.ClassifyError(a.err)
	}
	return t.classify.Classify(a.status, a.header, a.body)
}

// do sends c to t and reads the whole answer, at most maxAnswer bytes,
// under a watchdog of c.timeout on the injected clock that runs from
// sending to the end of the body.
func (j *Jobs) do(ctx context.Context, t *target, c call) answer {
	o, a := j.open(ctx, t, c)
	if a.err != nil {
		return a
	}
	defer o.close()
	body, err := io.ReadAll(io.LimitReader(o.resp.Body, maxAnswer))
	if err != nil {
		if o.dog.fired.Load() {
			err = fmt.Errorf("%w (%s, reading the answer, after %v)", aierr.ErrFirstByteTimeout, c.method+" "+t.name, c.timeout)
		}
		return answer{err: err, sent: true}
	}
	return answer{status: o.resp.StatusCode, header: o.resp.Header, body: body, sent: true}
}

// opened is a response whose body is being read under its watchdog.
type opened struct {
	resp   *http.Response
	dog    *watchdog
	cancel context.CancelFunc
}

// close disarms the watchdog and ends the call.
func (o *opened) close() {
	o.dog.stop()
	o.cancel()
	o.resp.Body.Close()
}

// open sends c to t and returns the response with its body unread, its
// watchdog still armed; close it once done. On a transport error only the
// answer is set.
func (j *Jobs) open(ctx context.Context, t *target, c call) (*opened, answer) {
	ctx, cancel := context.WithCancel(ctx)
	w := watch(j.clk, c.timeout, cancel)
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}}
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), c.method, c.url, body)
	if err != nil {
		w.stop()
		cancel()
		return nil, answer{err: err}
	}
	t.authorize(req.Header, c.key)
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if c.idem != "" {
		req.Header.Set("Idempotency-Key", c.idem)
	}
	resp, err := j.client.Do(req)
	if err != nil {
		w.stop()
		cancel()
		if w.fired.Load() {
			err = fmt.Errorf("%w (%s, after %v)", aierr.ErrFirstByteTimeout, c.method+" "+t.name, c.timeout)
		}
		return nil, answer{err: err, sent: wrote.Load() || !dialFailed(err)}
	}
	return &opened{resp: resp, dog: w, cancel: cancel}, answer{}
}

// dialFailed reports whether err is a failure to connect: the request
// cannot have reached the provider.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// watchdog cancels a call when its timer fires.
type watchdog struct {
	timer clock.Timer // nil: no bound
	fired atomic.Bool
}

// watch arms a watchdog that calls cancel after d; d ≤ 0: none.
func watch(clk clock.Clock, d time.Duration, cancel func()) *watchdog {
	w := &watchdog{}
	if d > 0 {
		w.timer = clk.AfterFunc(d, func() {
			w.fired.Store(true)
			cancel()
		})
	}
	return w
}

// reset restarts the watchdog's bound.
func (w *watchdog) reset(d time.Duration) {
	if w.timer != nil {
		w.timer.Reset(d)
	}
}

func (w *watchdog) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
