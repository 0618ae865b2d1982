package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/aireq"
)

// answer is an in-memory http.ResponseWriter: the gateway writes a line's
// answer into it. Bodies past max are dropped and the answer marked too
// large.
type answer struct {
	h       http.Header
	status  int
	body    bytes.Buffer
	max     int
	tooMuch bool
}

func (a *answer) Header() http.Header { return a.h }

func (a *answer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *answer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	if a.body.Len()+len(p) > a.max {
		a.tooMuch = true
		return 0, errTooLarge
	}
	return a.body.Write(p)
}

// Flush makes an answer an http.Flusher, as the gateway's writers expect.
func (a *answer) Flush() {}

var errTooLarge = errors.New("batch: answer too large")

// send serves l once through h and returns the answer.
func (r *Runner) send(ctx context.Context, l *Line) *answer {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://batch"+l.URL, bytes.NewReader(l.Body))
	req.RemoteAddr = "batch"
	req.RequestURI = l.URL
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", IdempotencyKey(r.batchID, l.CustomID))
	if l.URL == "/v1/messages" {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	if r.o.Prepare != nil {
		r.o.Prepare(req)
	}
	a := &answer{h: http.Header{}, max: r.o.MaxAnswerBytes}
	r.o.Handler.ServeHTTP(a, req)
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a
}

// kind is what an answer means for its line.
type kind uint8

const (
	kindOK       kind = iota
	kindThrottle      // 429, queue_full: slow down, retry, never dead-letter
	kindOutage        // 5xx, 408, 409: retry with backoff until the deadline
	kindClient        // any other 4xx: final
	kindBudget        // the client's budget is spent: stop the batch
	kindAuth          // the client key is refused: stop the batch
)

// classify reads an answer's status and error code.
func classify(a *answer) kind {
	switch s := a.status; {
	case s >= 200 && s < 300:
		return kindOK
	case s == http.StatusUnauthorized:
		return kindAuth // a 403 is the line's (a model the client may not use), not the batch's
	case s == http.StatusTooManyRequests:
		if errorCode(a.body.Bytes()) == "budget_exceeded" {
			return kindBudget
		}
		return kindThrottle
	case s == http.StatusServiceUnavailable && errorCode(a.body.Bytes()) == "queue_full":
		return kindThrottle
	case s >= 500, s == http.StatusRequestTimeout, s == http.StatusConflict:
		return kindOutage
	}
	return kindClient
}

// errorCode returns the code (or, lacking one, the type) of an error body
// in OpenAI's or Anthropic's shape.
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code json.RawMessage `json:"code"`
			Type string          `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var code string
	if json.Unmarshal(e.Error.Code, &code) == nil && code != "" {
		return code
	}
	return e.Error.Type
}

// errorMessage returns the message of an error body, or its start.
func errorMessage(a *answer) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(a.body.Bytes(), &e) == nil && e.Error.Message != "" {
		return strconv.Itoa(a.status) + ": " + e.Error.Message
	}
	b := a.body.Bytes()
	return strconv.Itoa(a.status) + ": " + string(b[:min(len(b), 200)])
}

// wait returns the answer's Retry-After (or retry-after-ms), or 0.
func wait(a *answer, now func() time.Time) time.Duration {
	if ms := a.h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(strings.TrimSpace(ms), 64); err == nil && n > 0 {
			return time.Duration(n * float64(time.Millisecond))
		}
	}
	d, _ := aierr.ParseRetryAfter(a.h.Get("Retry-After"), now)
	return d
}

// usage reads the token counts of a chat, embeddings or Messages answer:
// only its "usage" member is decoded.
func usage(body []byte) (in, out int) {
	var raw []byte
	aireq.Members(body, func(key, value []byte) bool {
		if string(key) == "usage" {
			raw = value
			return false
		}
		return true
	})
	var u struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		InputTokens      int `json:"input_tokens"`
		OutputTokens     int `json:"output_tokens"`
	}
	if raw == nil || json.Unmarshal(raw, &u) != nil {
		return 0, 0
	}
	return u.PromptTokens + u.InputTokens, u.CompletionTokens + u.OutputTokens
}

// cost reads X-Fusebox-Cost (USD).
func cost(h http.Header) float64 {
	c, err := strconv.ParseFloat(h.Get("X-Fusebox-Cost"), 64)
	if err != nil || c < 0 || c != c {
		return 0
	}
	return c
}
