package jobs

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// copyBuffers are the buffers content is streamed through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// passedHeaders are the headers of a content answer passed to the client.
var passedHeaders = []string{"Content-Type", "Content-Length", "Content-Disposition", "Content-Range",
	"Accept-Ranges", "Etag", "Last-Modified", "Cache-Control"}

// handleContent serves GET /v1/videos/{id}/content: a completed job's
// content, streamed from its target as it comes (never held whole), with
// the query (variant=thumbnail, …) passed on. A target silent for the
// idle bound mid-download ends the download; a client that leaves ends
// the upstream's.
func (j *Jobs) handleContent(w http.ResponseWriter, r *http.Request) {
	rec, local, ok := j.owned(w, r)
	if !ok {
		return
	}
	switch {
	case live(rec.State) && local:
		rec = j.refresh(r.Context(), rec)
	case rec.Upstream != "" && !ended(rec.State):
		rec = j.peek(r.Context(), rec) // its owner may not have seen it end yet, or be settling it
	}
	t, al := j.targets[rec.Target], j.aliases[rec.Alias]
	if rec.State != stateCompleted || t == nil || al == nil {
		errorf(http.StatusBadRequest, "invalid_request_error", "video_not_ready", "id",
			"Video '"+rec.ID+"' is "+rec.State+"; its content is available once it has completed.").write(w)
		return
	}
	url := t.url(t.cfg.ContentPath, rec.Upstream)
	if r.URL.RawQuery != "" {
		url += "?" + r.URL.RawQuery
	}
	o, a := j.open(r.Context(), t, call{method: http.MethodGet, url: url, key: rec.Key, timeout: al.cfg.Timeouts.Idle})
	if a.err != nil {
		errorf(http.StatusBadGateway, "server_error", "upstream_unreachable", "", "The upstream could not be reached.").write(w)
		return
	}
	defer o.close()
	if o.resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(o.resp.Body, maxAnswer))
		v := t.classify.Classify(o.resp.StatusCode, o.resp.Header, body)
		upstreamError(&answer{status: o.resp.StatusCode, header: o.resp.Header, body: body}, v).write(w)
		return
	}
	if !stream(w, o, al.cfg.Timeouts.Idle) {
		panic(http.ErrAbortHandler)
	}
}

// stream copies o's headers and body to w, a buffer at a time, each
// flushed, re-arming o's watchdog to idle before each read. It reports
// false when the upstream's body was cut after the headers went out: the
// caller then aborts the client's connection (http.ErrAbortHandler), so
// that a cut download is never taken for a complete one. A client that
// leaves ends it too, reported true: there is no one to tell.
func stream(w http.ResponseWriter, o *opened, idle time.Duration) bool {
	resp := o.resp
	rc := http.NewResponseController(w)
	h := w.Header()
	for _, name := range passedHeaders {
		if v := resp.Header.Values(name); len(v) > 0 {
			h[name] = v
		}
	}
	// The upstream's Content-Type is passed as it is: a browser must not
	// guess another from the bytes.
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(resp.StatusCode)
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	for {
		o.dog.reset(idle)
		n, err := resp.Body.Read(*buf)
		if n > 0 {
			if _, werr := w.Write((*buf)[:n]); werr != nil {
				return true // the client left; closing o ends the upstream's
			}
			rc.Flush()
		}
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}
