package sim

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// bucket is a per-minute allowance that refills continuously: it holds at
// most size, and gains size per minute.
type bucket struct {
	size  float64 // 0: unlimited
	level float64 // may go below 0 when limits are only reported
	at    time.Time
}

func (b *bucket) refill(now time.Time) {
	if dt := now.Sub(b.at); dt > 0 {
		b.level = min(b.size, b.level+b.size*dt.Minutes())
		b.at = now
	}
}

// until returns how long until the bucket holds n.
func (b *bucket) until(n float64) time.Duration {
	if b.level >= n {
		return 0
	}
	return time.Duration(math.Ceil((n - b.level) / b.size * float64(time.Minute)))
}

// window reports the bucket as OpenAI's x-ratelimit-* headers do.
func (b *bucket) window() window {
	if b.size == 0 {
		return window{}
	}
	return window{
		limit:     int64(b.size),
		remaining: int64(max(0, math.Floor(b.level))),
		reset:     b.until(b.size),
		set:       true,
	}
}

// limiter holds the request and token buckets of Limits. It is guarded
// by Server.mu.
type limiter struct {
	req, tok bucket
	enforce  bool
}

func newLimiter(l Limits, now time.Time) limiter {
	return limiter{
		req:     bucket{size: float64(l.RPM), level: float64(l.RPM), at: now},
		tok:     bucket{size: float64(l.TPM), level: float64(l.TPM), at: now},
		enforce: !l.HeadersOnly,
	}
}

// admission is the limiter's answer for one call.
type admission struct {
	refused bool
	which   string        // "requests" or "tokens": the limit that refused
	wait    time.Duration // until the call would fit
	headers rateHeaders
}

// admitLocked takes a request and tokens from the buckets at now, or
// refuses the call when either would run out and limits are enforced.
func (l *limiter) admitLocked(now time.Time, tokens int) admission {
	l.req.refill(now)
	l.tok.refill(now)
	var a admission
	if l.enforce {
		if l.req.size > 0 && l.req.level < 1 {
			a = admission{refused: true, which: "requests", wait: l.req.until(1)}
		} else if l.tok.size > 0 && l.tok.level < float64(tokens) {
			a = admission{refused: true, which: "tokens", wait: l.tok.until(min(float64(tokens), l.tok.size))}
		}
	}
	if !a.refused {
		if l.req.size > 0 {
			l.req.level--
		}
		if l.tok.size > 0 {
			l.tok.level -= float64(tokens)
		}
	}
	a.headers = rateHeaders{req: l.req.window(), tok: l.tok.window()}
	return a
}

// peekLocked returns the headers at now without taking anything.
func (l *limiter) peekLocked(now time.Time) rateHeaders {
	l.req.refill(now)
	l.tok.refill(now)
	return rateHeaders{req: l.req.window(), tok: l.tok.window()}
}

// window is one limit as reported in headers.
type window struct {
	limit, remaining int64
	reset            time.Duration
	set              bool // false: the limit is not configured, nothing is sent
}

// rateHeaders are the x-ratelimit-* headers of a response.
type rateHeaders struct{ req, tok window }

// exhaust makes the request window report nothing left for wait, as a
// throttled answer does.
func (rh *rateHeaders) exhaust(wait time.Duration) {
	rh.req.remaining = 0
	rh.req.reset = max(rh.req.reset, wait)
	rh.req.set = true
}

// set writes the headers, in OpenAI's names and formats: counts, and reset
// times as durations ("1s", "6m0s", "20ms").
func (rh *rateHeaders) set(h http.Header) {
	setWindow(h, "requests", rh.req)
	setWindow(h, "tokens", rh.tok)
}

func setWindow(h http.Header, name string, w window) {
	if !w.set {
		return
	}
	if w.limit > 0 {
		h.Set("X-Ratelimit-Limit-"+name, strconv.FormatInt(w.limit, 10))
	}
	h.Set("X-Ratelimit-Remaining-"+name, strconv.FormatInt(w.remaining, 10))
	h.Set("X-Ratelimit-Reset-"+name, formatReset(w.reset))
}

// formatReset formats d as OpenAI does in x-ratelimit-reset-*: "0s",
// "20ms", "1.5s", "6m0s".
func formatReset(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return d.String()
}
