package requestlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configure a Log.
type Options struct {
	// Path is the SQLite file; created if missing.
	Path string
	// MaxRows bounds the requests kept. 0: 1,000,000.
	MaxRows int
	// MaxBytes bounds the pages the rows take. 0: no bound but MaxRows.
	MaxBytes int64
	// MaxAge is how long a request is kept. 0: 7 days.
	MaxAge time.Duration
	// Queue is how many records may wait for the writer. 0: 8192.
	Queue int
	// Content keeps request and answer bodies the gateway hands over.
	Content bool
	// Clock is the time source, for max_age. nil: the system clock.
	Clock clock.Clock
	// OnError, if set, is told of a batch that could not be written.
	OnError func(error)
}

// Log is a bounded request log. It is safe for concurrent use.
type Log struct {
	o       Options
	clk     clock.Clock
	db      *sql.DB
	queue   chan Record
	dropped atomic.Uint64
	written atomic.Uint64
	// flushes carry a channel closed once everything queued before is
	// written (tests, Close).
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

const schema = `
CREATE TABLE IF NOT EXISTS requests (
	id INTEGER PRIMARY KEY,
	time INTEGER NOT NULL,
	request_id TEXT NOT NULL, client TEXT NOT NULL, alias TEXT NOT NULL, path TEXT NOT NULL,
	stream INTEGER NOT NULL, status INTEGER NOT NULL, outcome TEXT NOT NULL,
	target TEXT NOT NULL, tried TEXT NOT NULL, attempts INTEGER NOT NULL,
	latency_ms REAL NOT NULL, ttfb_ms REAL NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
	cost_usd REAL NOT NULL, cache TEXT NOT NULL, idempotency_key TEXT NOT NULL, trace_id TEXT NOT NULL,
	request_body TEXT, response_body TEXT
);
CREATE INDEX IF NOT EXISTS requests_client_time ON requests (client, time, alias, outcome);
CREATE INDEX IF NOT EXISTS requests_alias_time ON requests (alias, time, client, outcome);
CREATE INDEX IF NOT EXISTS requests_outcome_time ON requests (outcome, time, client, alias);
CREATE INDEX IF NOT EXISTS requests_time ON requests (time);
`

// Open opens (or creates) the log at o.Path and starts its writer.
func Open(o Options) (*Log, error) {
	if o.Path == "" {
		return nil, errors.New("requestlog: no path")
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 1_000_000
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 7 * 24 * time.Hour
	}
	if o.Queue <= 0 {
		o.Queue = 8192
	}
	dsn := "file:" + (&url.URL{Path: o.Path}).EscapedPath() +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=wal_autocheckpoint(256)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("requestlog: %w", err)
	}
	db.SetMaxOpenConns(4) // one writer, readers beside it (WAL)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("requestlog: %s: %w", o.Path, err)
	}
	db.Exec(`PRAGMA optimize=0x10002`) // statistics of a file opened again
	l := &Log{o: o, clk: clock.Or(o.Clock), db: db, queue: make(chan Record, o.Queue),
		flushes: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.write()
	return l, nil
}

// Content reports whether bodies are kept.
func (l *Log) Content() bool { return l != nil && l.o.Content }

// Add queues r for the writer; when the queue is full it is dropped and
// counted (Dropped), never waited for.
func (l *Log) Add(r Record) {
	select {
	case l.queue <- r:
	default:
		l.dropped.Add(1)
	}
}

// Dropped is how many records were dropped for a full queue.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Written is how many records were written.
func (l *Log) Written() uint64 { return l.written.Load() }

// Flush returns once every record queued before it is written.
func (l *Log) Flush() {
	done := make(chan struct{})
	select {
	case l.flushes <- done:
		<-done
	case <-l.done:
	}
}

// Close writes what is queued and closes the file.
func (l *Log) Close() error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	return l.db.Close()
}

// optimizeEvery is how many records are written between refreshes of the
// planner's statistics, which let it choose the most selective index.
const optimizeEvery = 100_000

// batchMax bounds the records written in one transaction.
const batchMax = 512

// write is the writer: it takes what is queued, in batches, one
// transaction each, then keeps the bounds.
func (l *Log) write() {
	defer close(l.done)
	batch := make([]Record, 0, batchMax)
	for {
		var flush chan struct{}
		select {
		case r := <-l.queue:
			batch = append(batch, r)
		case flush = <-l.flushes:
		case <-l.stop:
			l.drain(batch[:0])
			return
		}
		batch = l.take(batch)
		l.commit(batch)
		batch = batch[:0]
		if flush != nil {
			l.drain(batch)
			close(flush)
		}
	}
}

// take adds to batch what is queued now, up to batchMax records and,
// with MaxBytes, an eighth of it: the file grows by a batch at most
// before the bound is kept again.
func (l *Log) take(batch []Record) []Record {
	room := int64(-1)
	if l.o.MaxBytes > 0 {
		room = l.o.MaxBytes / 8
		for _, r := range batch {
			room -= r.size()
		}
		room = max(room, 0)
	}
	for len(batch) < batchMax && room != 0 {
		select {
		case r := <-l.queue:
			batch = append(batch, r)
			if room > 0 {
				room = max(room-r.size(), 0)
			}
		default:
			return batch
		}
	}
	return batch
}

// drain writes everything queued.
func (l *Log) drain(batch []Record) {
	for {
		batch = l.take(batch[:0])
		if len(batch) == 0 {
			return
		}
		l.commit(batch)
	}
}

// commit writes batch and keeps the bounds.
func (l *Log) commit(batch []Record) {
	if len(batch) == 0 {
		return
	}
	if err := l.insert(batch); err != nil {
		if l.o.OnError != nil {
			l.o.OnError(err)
		}
		return
	}
	if n := l.written.Add(uint64(len(batch))); n/optimizeEvery != (n-uint64(len(batch)))/optimizeEvery {
		l.db.Exec(`PRAGMA optimize`) // the planner's statistics, kept current
	}
	if err := l.prune(); err != nil && l.o.OnError != nil {
		l.o.OnError(err)
	}
}

const insertSQL = `INSERT INTO requests (time, request_id, client, alias, path, stream, status, outcome, target, tried, attempts,
	latency_ms, ttfb_ms, tokens_in, tokens_out, cost_usd, cache, idempotency_key, trace_id, request_body, response_body)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (l *Log) insert(batch []Record) error {
	ctx := context.Background()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("requestlog: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, insertSQL)
	if err != nil {
		return fmt.Errorf("requestlog: %w", err)
	}
	defer st.Close()
	for _, r := range batch {
		var req, resp any
		if l.o.Content && r.RequestBody != "" {
			req = clip(r.RequestBody, maxContent)
		}
		if l.o.Content && r.ResponseBody != "" {
			resp = clip(r.ResponseBody, maxContent)
		}
		_, err := st.ExecContext(ctx, r.Time.UnixMicro(), clip(r.RequestID, maxField), clip(r.Client, maxField),
			clip(r.Alias, maxField), clip(r.Path, maxField), r.Stream, r.Status, clip(r.Outcome, maxField),
			clip(r.Target, maxField), clip(r.Tried, 8*maxField), r.Attempts, r.LatencyMS, r.TTFBMS, r.TokensIn, r.TokensOut,
			r.CostUSD, clip(r.Cache, maxField), clip(r.IdempotencyKey, maxField), clip(r.TraceID, maxField), req, resp)
		if err != nil {
			return fmt.Errorf("requestlog: %w", err)
		}
	}
	return tx.Commit()
}
