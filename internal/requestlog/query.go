package requestlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Filter selects requests, newest first. Empty fields match all.
type Filter struct {
	Client, Alias, Outcome string
	// Since and Until bound the requests' times: Since <= time < Until.
	Since, Until time.Time
	// Limit is the most returned. 0: 100; at most 1000.
	Limit int
	// Cursor continues a query where its last page ended (Page.Next).
	Cursor string
}

// Page is a query's answer.
type Page struct {
	Requests []Record `json:"requests"`
	// Next is the cursor of the next page; "" when this was the last.
	Next string `json:"next,omitempty"`
}

// ErrCursor is a cursor that no page gave.
var ErrCursor = errors.New("requestlog: bad cursor")

const selectSQL = `SELECT id, time, request_id, client, alias, path, stream, status, outcome, target, tried, attempts,
	latency_ms, ttfb_ms, tokens_in, tokens_out, cost_usd, cache, idempotency_key, trace_id,
	coalesce(request_body, ''), coalesce(response_body, '') FROM requests`

// Query returns the requests f selects, newest first. It reads what is
// written: records still queued are not in it yet.
func (l *Log) Query(ctx context.Context, f Filter) (Page, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"client", f.Client}, {"alias", f.Alias}, {"outcome", f.Outcome}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "time < ?"), append(args, f.Until.UnixMicro())
	}
	if f.Cursor != "" {
		t, id, err := parseCursor(f.Cursor)
		if err != nil {
			return Page{}, err
		}
		where, args = append(where, "(time, id) < (?, ?)"), append(args, t, id)
	}
	q := selectSQL
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY time DESC, id DESC LIMIT ?"
	rows, err := l.db.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return Page{}, fmt.Errorf("requestlog: %w", err)
	}
	defer rows.Close()
	page := Page{Requests: make([]Record, 0, min(limit, 100))}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return Page{}, err
		}
		page.Requests = append(page.Requests, r)
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("requestlog: %w", err)
	}
	if n := len(page.Requests); n == limit {
		last := page.Requests[n-1]
		page.Next = strconv.FormatInt(last.Time.UnixMicro(), 10) + "." + strconv.FormatInt(last.ID, 10)
	}
	return page, nil
}

func scan(rows *sql.Rows) (Record, error) {
	var r Record
	var t int64
	err := rows.Scan(&r.ID, &t, &r.RequestID, &r.Client, &r.Alias, &r.Path, &r.Stream, &r.Status, &r.Outcome, &r.Target,
		&r.Tried, &r.Attempts, &r.LatencyMS, &r.TTFBMS, &r.TokensIn, &r.TokensOut, &r.CostUSD, &r.Cache,
		&r.IdempotencyKey, &r.TraceID, &r.RequestBody, &r.ResponseBody)
	if err != nil {
		return r, fmt.Errorf("requestlog: %w", err)
	}
	r.Time = time.UnixMicro(t).UTC()
	return r, nil
}

// parseCursor reads "time.id".
func parseCursor(c string) (int64, int64, error) {
	ts, ids, ok := strings.Cut(c, ".")
	t, err1 := strconv.ParseInt(ts, 10, 64)
	id, err2 := strconv.ParseInt(ids, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, ErrCursor
	}
	return t, id, nil
}
