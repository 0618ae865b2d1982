package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The client is written for many streams at once: one goroutine per
// stream, a raw keep-alive connection, the request written as prepared
// bytes and the answer read with http.ReadResponse in the same goroutine
// (net/http's client would add a reader and a writer goroutine per
// connection, and the load generator shares the gateway's cores).

// record is one stream as the client saw it; times are since the cell
// began.
type record struct {
	start, first, end time.Duration // first: the first content chunk
	err               error
}

// load is the closed-loop client of one cell: c workers, each reading a
// stream to its end and starting the next one at once.
type load struct {
	addr   string // host:port of the gateway (or the upstream)
	req    []byte // the whole HTTP request
	spec   streamSpec
	began  time.Time
	active atomic.Int64 // streams in flight
	dials  atomic.Int64 // connections opened
}

// worker is one of the load's concurrent streams.
type worker struct {
	l       *load
	conn    net.Conn
	br, lr  *bufio.Reader // the connection; the answer's body, by line
	records []record
}

// run starts workers streams, the i-th at i·ramp/c, keeps them going
// until ctx ends and returns what they recorded.
func (l *load) run(ctx context.Context, c int, ramp time.Duration) []record {
	workers := make([]*worker, c)
	var wg sync.WaitGroup
	for i := range workers {
		w := newWorker(l)
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, time.Duration(i)*ramp/time.Duration(c))
		}()
	}
	wg.Wait()
	var all []record
	for _, w := range workers {
		all = append(all, w.records...)
	}
	return all
}

func newWorker(l *load) *worker {
	return &worker{l: l, br: bufio.NewReaderSize(nil, 4096), lr: bufio.NewReaderSize(nil, 4096)}
}

// run waits after, then streams until ctx ends.
func (w *worker) run(ctx context.Context, after time.Duration) {
	t := time.NewTimer(after)
	select {
	case <-ctx.Done():
		t.Stop()
		return
	case <-t.C:
	}
	defer w.close()
	for ctx.Err() == nil {
		r := w.stream(ctx)
		if ctx.Err() != nil {
			return // cut by the end of the cell: not counted
		}
		w.records = append(w.records, r)
	}
}

// close closes the worker's connection, if it has one.
func (w *worker) close() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

// stream sends one request and reads its stream to the end.
func (w *worker) stream(ctx context.Context) record {
	l := w.l
	r := record{start: time.Since(l.began)}
	l.active.Add(1)
	defer l.active.Add(-1)
	r.err = w.exchange(ctx, &r)
	r.end = time.Since(l.began)
	if r.err != nil {
		w.close() // in an unknown state
	}
	return r
}

func (w *worker) exchange(ctx context.Context, r *record) error {
	l := w.l
	if w.conn == nil {
		conn, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "tcp", l.addr)
		if err != nil {
			return fmt.Errorf("dial: %w", err)
		}
		l.dials.Add(1)
		w.conn = conn
		w.br.Reset(conn)
	}
	conn := w.conn
	// The end of the cell interrupts a blocked read; a stream hung for
	// longer than three times its length is an error.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn.SetDeadline(time.Now().Add(3*l.spec.length() + 10*time.Second))
	if _, err := conn.Write(l.req); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(w.br, postRequest)
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	content, done, err := w.readEvents(resp.Body, r)
	if err != nil {
		return err
	}
	if resp.Close {
		w.close()
	}
	switch {
	case !done:
		return errors.New("stream ended without data: [DONE]")
	case content != l.spec.chunks:
		return fmt.Errorf("%d content chunks, want %d", content, l.spec.chunks)
	}
	return nil
}

// postRequest tells http.ReadResponse that the answers are to POSTs.
var postRequest = &http.Request{Method: http.MethodPost}

// readEvents reads a stream's body to its end, counting content chunks
// and noting when the first arrived.
func (w *worker) readEvents(body io.Reader, r *record) (content int, done bool, err error) {
	w.lr.Reset(body)
	for {
		line, err := w.lr.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data:")) {
			switch {
			case hasContent(line):
				if content == 0 {
					r.first = time.Since(w.l.began)
				}
				content++
			case bytes.Equal(bytes.TrimSpace(line), []byte("data: [DONE]")):
				done = true
			}
		}
		switch {
		case err == io.EOF:
			return content, done, nil
		case err != nil && !errors.Is(err, bufio.ErrBufferFull):
			return content, done, fmt.Errorf("read stream: %w", err)
		}
	}
}

// hasContent reports whether an SSE data line carries non-empty content.
// The upstream's chunks are the only shape the bench sends, and gateways
// pass them on byte for byte, so a byte search is enough.
func hasContent(line []byte) bool {
	i := bytes.Index(line, []byte(`"content":"`))
	return i >= 0 && i+11 < len(line) && line[i+11] != '"'
}
