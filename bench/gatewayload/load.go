package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/proc"
	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

// target is where a cell's requests go: the upstream itself or a gateway
// in front of it.
type target struct {
	name   string
	url    string // the chat completions URL
	model  string
	header http.Header  // sent with every request
	pid    int          // the gateway's process; 0 for the upstream
	conns  func() int64 // connections the upstream has accepted so far
}

// newClient returns a keep-alive HTTP/1.1 client with room for conc idle
// connections, so no request after the warm-up dials.
func newClient(conc int) *http.Client {
	return &http.Client{
		Timeout: 2 * time.Minute,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2 * conc,
			MaxIdleConnsPerHost: 2 * conc,
			IdleConnTimeout:     2 * time.Minute,
			DisableCompression:  true,
			// A non-nil empty map turns HTTP/2 off.
			TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
		},
	}
}

// requestBody is a small chat request, the same for every target apart
// from the model.
func requestBody(model string, stream bool) []byte {
	s := ""
	if stream {
		s = `,"stream":true`
	}
	return []byte(`{"model":"` + model + `","messages":[{"role":"system","content":"You are a helpful assistant."},` +
		`{"role":"user","content":"Say hello."}],"max_tokens":16` + s + `}`)
}

// worker sends one request at a time and keeps what it measured.
type worker struct {
	client *http.Client
	t      target
	body   []byte
	stream bool
	buf    bytes.Buffer
	br     *bufio.Reader

	lat, ttfb []time.Duration
	errors    int64
	firstErr  error
}

// do sends one request and reads the whole answer. ttfb is the time to
// the first SSE data line (streams only).
func (w *worker) do(ctx context.Context) (lat, ttfb time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.t.url, bytes.NewReader(w.body))
	if err != nil {
		return 0, 0, err
	}
	for k, v := range w.t.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if !w.stream {
		w.buf.Reset()
		if _, err := w.buf.ReadFrom(resp.Body); err != nil {
			return 0, 0, err
		}
		lat = time.Since(start)
		if !bytes.Contains(w.buf.Bytes(), []byte(`"chat.completion"`)) {
			return 0, 0, fmt.Errorf("not a chat completion: %.200s", w.buf.Bytes())
		}
		return lat, 0, nil
	}
	w.br.Reset(resp.Body)
	done := false
	for {
		line, err := w.br.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data:")) {
			if ttfb == 0 {
				ttfb = time.Since(start)
			}
			done = bytes.Equal(bytes.TrimSpace(line), []byte("data: [DONE]"))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, 0, err
		}
	}
	lat = time.Since(start)
	if !done {
		return 0, 0, errors.New("stream ended without data: [DONE]")
	}
	return lat, ttfb, nil
}

// run sends requests until stop says so, recording them if keep is set.
func (w *worker) run(ctx context.Context, stop func() bool, keep bool) {
	for !stop() && ctx.Err() == nil {
		lat, ttfb, err := w.do(ctx)
		if !keep {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				w.errors++
				if w.firstErr == nil {
					w.firstErr = err
				}
			}
			continue
		}
		w.lat = append(w.lat, lat)
		if w.stream {
			w.ttfb = append(w.ttfb, ttfb)
		}
	}
}

// cellSpec says how one cell is run.
type cellSpec struct {
	stream   bool
	conc     int
	warmup   time.Duration
	duration time.Duration // measured time, if requests is 0
	requests int           // measured requests; 0: run for duration
}

// Result is one cell: one target at one concurrency and mode. Times are
// in microseconds; Added* are against the direct cell of the same mode
// and concurrency in the same run, and absent for the direct cells.
type Result struct {
	Mode        string   `json:"mode"`
	Concurrency int      `json:"concurrency"`
	Target      string   `json:"target"`
	Requests    int      `json:"requests"`
	Errors      int64    `json:"errors"`
	FirstError  string   `json:"first_error,omitempty"`
	Seconds     float64  `json:"seconds"`
	RPS         float64  `json:"requests_per_second"`
	P50         float64  `json:"p50_us"`
	P99         float64  `json:"p99_us"`
	AddedP50    *float64 `json:"added_p50_us,omitempty"`
	AddedP99    *float64 `json:"added_p99_us,omitempty"`
	TTFBP50     *float64 `json:"ttfb_p50_us,omitempty"`
	TTFBP99     *float64 `json:"ttfb_p99_us,omitempty"`
	AddedTTFB   *float64 `json:"added_ttfb_p50_us,omitempty"`
	CPUPerReq   *float64 `json:"cpu_per_request_us,omitempty"`
	PeakRSS     *int64   `json:"peak_rss_bytes,omitempty"`
	PeakRSSFrom string   `json:"peak_rss_from,omitempty"`
	// UpstreamConns is how many connections the upstream accepted while
	// the cell was measured: 0 when every hop keeps its connections alive.
	UpstreamConns int64 `json:"upstream_connections_opened"`
}

// runCell warms the target up at the cell's concurrency, then measures.
func runCell(ctx context.Context, t target, c cellSpec) (Result, error) {
	mode := "json"
	if c.stream {
		mode = "stream"
	}
	r := Result{Mode: mode, Concurrency: c.conc, Target: t.name}
	client := newClient(c.conc)
	defer client.CloseIdleConnections()
	workers := make([]*worker, c.conc)
	body := requestBody(t.model, c.stream)
	for i := range workers {
		workers[i] = &worker{client: client, t: t, body: body, stream: c.stream, br: bufio.NewReaderSize(nil, 4096)}
	}

	var sampler *proc.Sampler
	hwmReset := false
	if t.pid != 0 {
		hwmReset = proc.ResetPeak(t.pid)
		sampler = proc.SampleRSS(t.pid, 20*time.Millisecond)
	}

	until := time.Now().Add(c.warmup)
	runAll(ctx, workers, func() bool { return time.Now().After(until) }, false)
	if err := ctx.Err(); err != nil {
		return r, err
	}

	var cpu0 time.Duration
	if t.pid != 0 {
		cpu0, _ = proc.CPUTime(t.pid)
	}
	var stop func() bool
	if c.requests > 0 {
		var left atomic.Int64
		left.Store(int64(c.requests))
		stop = func() bool { return left.Add(-1) < 0 }
	} else {
		end := time.Now().Add(c.duration)
		stop = func() bool { return time.Now().After(end) }
	}
	conns0 := t.conns()
	start := time.Now()
	runAll(ctx, workers, stop, true)
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return r, err
	}

	r.UpstreamConns = t.conns() - conns0
	var lat, ttfb []time.Duration
	for _, w := range workers {
		lat, ttfb = append(lat, w.lat...), append(ttfb, w.ttfb...)
		r.Errors += w.errors
		if w.firstErr != nil && r.FirstError == "" {
			r.FirstError = w.firstErr.Error()
		}
	}
	if len(lat) == 0 {
		return r, fmt.Errorf("%s %s c=%d: no request succeeded: %s", t.name, mode, c.conc, r.FirstError)
	}
	r.Requests, r.Seconds = len(lat), elapsed.Seconds()
	r.RPS = float64(len(lat)) / elapsed.Seconds()
	r.P50, r.P99 = stats.Percentile(lat, 0.50), stats.Percentile(lat, 0.99)
	if c.stream {
		p50, p99 := stats.Percentile(ttfb, 0.50), stats.Percentile(ttfb, 0.99)
		r.TTFBP50, r.TTFBP99 = &p50, &p99
	}
	if t.pid != 0 {
		if cpu1, err := proc.CPUTime(t.pid); err == nil {
			per := float64(cpu1-cpu0) / float64(time.Microsecond) / float64(len(lat))
			r.CPUPerReq = &per
		}
		peak, from := sampler.Finish(), "sampled VmRSS every 20 ms"
		if _, hwm, err := proc.Memory(t.pid); err == nil && hwmReset && hwm >= peak {
			peak, from = hwm, "VmHWM, reset at the start of the cell"
		}
		r.PeakRSS, r.PeakRSSFrom = &peak, from
	}
	return r, nil
}

// runAll runs every worker until stop, and waits for them.
func runAll(ctx context.Context, workers []*worker, stop func() bool, keep bool) {
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, stop, keep)
		}()
	}
	wg.Wait()
}

// probe sends one request of each kind to t and reports what went wrong.
func probe(ctx context.Context, t target) error {
	client := newClient(1)
	defer client.CloseIdleConnections()
	for _, stream := range []bool{false, true} {
		w := &worker{client: client, t: t, body: requestBody(t.model, stream), stream: stream, br: bufio.NewReader(nil)}
		if _, _, err := w.do(ctx); err != nil {
			return err
		}
	}
	return nil
}
