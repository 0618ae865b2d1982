package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/requestlog"
)

// openRequestLog opens request_log:, if it has a path.
func (s *Server) openRequestLog(c config.RequestLog) error {
	if c.Path == "" {
		return nil
	}
	l, err := requestlog.Open(requestlog.Options{Path: c.Path, MaxRows: c.MaxRows, MaxBytes: int64(c.MaxBytes),
		MaxAge: c.MaxAge, Queue: c.Queue, Content: c.LogContent, Clock: s.opts.Clock,
		OnError: func(err error) { s.log.Error("request log", "error", err.Error()) }})
	if err != nil {
		return err
	}
	s.reqlog = l
	s.metrics.WatchRequestLog(l.Written, l.Dropped)
	return nil
}

// logRequest hands the request's record to the request log, which
// writes it later: the request never waits for it.
func (x *exchange) logRequest(w *recorder, model, target string, d time.Duration, attempts int) {
	h := w.Header()
	r := requestlog.Record{Time: x.start, RequestID: x.id, Client: cmp.Or(x.client, x.caller), Alias: model, Path: x.r.URL.Path,
		Stream: x.stream, Status: w.code(), Outcome: x.logOutcome(w), Target: target, Tried: x.loggedTried(h),
		Attempts: attempts, LatencyMS: float64(d.Microseconds()) / 1000, TokensIn: x.priorIn + x.tokensIn,
		TokensOut: x.priorOut + x.tokensOut, CostUSD: x.prior + x.cost, Cache: h.Get("X-Fusebox-Cache"),
		IdempotencyKey: x.r.Header.Get("Idempotency-Key"), TraceID: traceID(x.r)}
	if x.served != nil {
		r.TTFBMS = float64(x.served.TTFB().Microseconds()) / 1000
	}
	if x.s.reqlog.Content() {
		r.RequestBody = string(x.loggedBody)
	}
	x.s.reqlog.Add(r)
}

// traceID is the W3C trace id of the request's traceparent, if any.
func traceID(r *http.Request) string {
	tp := r.Header.Get("Traceparent") // version-traceid-parentid-flags
	if len(tp) >= 55 && tp[2] == '-' && tp[35] == '-' {
		return tp[3:35]
	}
	return ""
}

// handleRequests answers GET /fusebox/requests: the request log, newest
// first, filtered by client, alias, outcome, since and until (RFC 3339 or
// a duration back from now, e.g. 1h), a page of limit with a cursor.
func (s *Server) handleRequests(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	if s.reqlog == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "request_log_off", "",
			"The request log is off: set request_log.path in the configuration to turn it on.")
		return
	}
	q := r.URL.Query()
	f := requestlog.Filter{Client: q.Get("client"), Alias: q.Get("alias"), Outcome: q.Get("outcome"), Cursor: q.Get("cursor")}
	var ok bool
	now := s.clk.Now()
	if f.Since, ok = s.when(w, "since", q.Get("since"), now); !ok {
		return
	}
	if f.Until, ok = s.when(w, "until", q.Get("until"), now); !ok {
		return
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "", "limit", "limit must be a whole number from 1 to 1000.")
			return
		}
		f.Limit = n
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	page, err := s.reqlog.Query(ctx, f)
	switch {
	case err == requestlog.ErrCursor:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "cursor", "cursor must be the next of an earlier page.")
		return
	case err != nil:
		s.log.Error("request log query", "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, "api_error", "", "", "The request log could not be read.")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(struct {
		Object string `json:"object"`
		requestlog.Page
	}{"list", page})
}

// when reads a since/until parameter: RFC 3339, or a duration back from
// now ("15m", "24h"). "" is no bound.
func (s *Server) when(w http.ResponseWriter, name, v string, now time.Time) (time.Time, bool) {
	if v == "" {
		return time.Time{}, true
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), true
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "", name,
		name+" must be a time (RFC 3339, e.g. 2026-12-02T10:00:00Z) or a duration back from now (e.g. 1h).")
	return time.Time{}, false
}
