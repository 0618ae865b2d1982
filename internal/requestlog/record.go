// Package requestlog keeps each gateway request's metadata in a bounded
// SQLite file (modernc.org/sqlite, pure Go) and answers filtered queries
// over it: which requests of a client, an alias or an outcome, when, on
// which targets, why. Records are written by one goroutine in batches,
// off the request path: Add never blocks, and drops (counting) when the
// writer is behind.
package requestlog

import "time"

// Record is one request: what was asked, who served it, how it went.
// Never a prompt or an answer, unless the log was opened with Content
// and the gateway filled RequestBody and ResponseBody.
type Record struct {
	ID        int64     `json:"-"` // the row, for cursors
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Client    string    `json:"client"`
	Alias     string    `json:"alias"`
	Path      string    `json:"path"`
	Stream    bool      `json:"stream"`
	Status    int       `json:"status"`
	// Outcome is ok, error, broken, deadline, canceled or continued (the
	// access log's outcome).
	Outcome string `json:"outcome"`
	// Target served the answer; Tried lists the targets tried, each with
	// its verdict, as X-Fusebox-Tried says it.
	Target         string  `json:"target"`
	Tried          string  `json:"tried"`
	Attempts       int     `json:"attempts"`
	LatencyMS      float64 `json:"latency_ms"`
	TTFBMS         float64 `json:"ttfb_ms"`
	TokensIn       int     `json:"tokens_in"`
	TokensOut      int     `json:"tokens_out"`
	CostUSD        float64 `json:"cost_usd"`
	Cache          string  `json:"cache,omitempty"`
	IdempotencyKey string  `json:"idempotency_key,omitempty"`
	TraceID        string  `json:"trace_id,omitempty"`
	RequestBody    string  `json:"request_body,omitempty"`
	ResponseBody   string  `json:"response_body,omitempty"`
}

// maxField bounds each text field as stored; maxContent a body.
const (
	maxField   = 1024
	maxContent = 64 << 10
)

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// size estimates the bytes r takes in the file, indexes included.
func (r *Record) size() int64 {
	n := len(r.RequestID) + 2*len(r.Client) + 2*len(r.Alias) + len(r.Path) + 2*len(r.Outcome) + len(r.Target) +
		len(r.Tried) + len(r.Cache) + len(r.IdempotencyKey) + len(r.TraceID) + len(r.RequestBody) + len(r.ResponseBody)
	return int64(n) + 160
}
