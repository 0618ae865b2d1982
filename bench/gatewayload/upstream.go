package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/proc"
)

// The fixed answers of the fast upstream, shared by the load run (over
// loopback) and BenchmarkHandler (in process).
var (
	// completionJSON is a whole non-streamed chat completion.
	completionJSON = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"m",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},` +
		`"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":9,"total_tokens":18}}`)

	// streamEvents are the events of a streamed chat completion, each
	// written and flushed on its own, as OpenAI sends them: a role-only
	// preamble, eight content deltas, the finish, then [DONE].
	streamEvents = buildStreamEvents()

	// streamBody is streamEvents in one piece.
	streamBody = bytes.Join(streamEvents, nil)
)

func buildStreamEvents() [][]byte {
	const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,`
	words := []string{"Hello", "!", " How", " can", " I", " help", " you", " today?"}
	evs := [][]byte{[]byte(head + `"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")}
	for _, w := range words {
		evs = append(evs, []byte(head+`"delta":{"content":"`+w+`"},"logprobs":null,"finish_reason":null}]}`+"\n\n"))
	}
	evs = append(evs, []byte(head+`"delta":{},"logprobs":null,"finish_reason":"stop"}]}`+"\n\n"))
	return append(evs, []byte("data: [DONE]\n\n"))
}

// isStream reports whether a chat request asks for a stream. The bench
// sends exactly one form, so a byte search is enough and costs the
// upstream next to nothing.
func isStream(body []byte) bool {
	return bytes.Contains(body, []byte(`"stream":true`))
}

// upstream is the fast local provider: it answers every POST at once with
// the fixed completion or stream.
type upstream struct {
	srv      *http.Server
	ln       net.Listener
	requests atomic.Int64
	conns    atomic.Int64 // connections accepted
}

func startUpstream() (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{ln: ln}
	u.srv = &http.Server{Handler: http.HandlerFunc(u.serve), ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				u.conns.Add(1)
			}
		}}
	go u.srv.Serve(ln)
	return u, nil
}

// baseURL is the OpenAI-style API root, ending in /v1.
func (u *upstream) baseURL() string { return "http://" + u.ln.Addr().String() + "/v1" }

func (u *upstream) close() { u.srv.Close() }

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/conns" {
		w.Write([]byte(strconv.FormatInt(u.conns.Load(), 10)))
		return
	}
	u.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h := w.Header()
	if !isStream(body) {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(completionJSON)))
		w.Write(completionJSON)
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	f, _ := w.(http.Flusher)
	for _, ev := range streamEvents {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

// serveUpstreamChild is the program run with -upstream-child: the
// upstream alone, in its own process, until SIGTERM or SIGINT. Its first
// line of output is "upstream " and its base URL.
func serveUpstreamChild() error {
	u, err := startUpstream()
	if err != nil {
		return err
	}
	defer u.close()
	fmt.Println("upstream " + u.baseURL())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// upstreamRef is the upstream as the load run sees it, wherever it runs.
type upstreamRef struct {
	baseURL string
	conns   func() int64 // connections accepted so far
	stop    func()
}

// inProcess starts the upstream in this process.
func inProcess() (*upstreamRef, error) {
	u, err := startUpstream()
	if err != nil {
		return nil, err
	}
	return &upstreamRef{baseURL: u.baseURL(), conns: u.conns.Load, stop: u.close}, nil
}

// childProcess starts the upstream as a child process running this
// program with -upstream-child.
func childProcess(tmp string) (*upstreamRef, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := proc.Start(proc.Command{Path: exe, Args: []string{"-upstream-child"}, Dir: tmp, Log: filepath.Join(tmp, "upstream.log")})
	if err != nil {
		return nil, err
	}
	var base string
	err = p.WaitReady(context.Background(), func(context.Context) error {
		line, _, _ := strings.Cut(p.LogTail(), "\n")
		if !strings.HasPrefix(line, "upstream http://") {
			return errors.New("no address yet")
		}
		base = strings.TrimPrefix(line, "upstream ")
		return nil
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("upstream process: %v", err)
	}
	stats := strings.TrimSuffix(base, "/v1") + "/conns"
	conns := func() int64 {
		resp, err := http.Get(stats)
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		n, _ := strconv.ParseInt(string(b), 10, 64)
		return n
	}
	return &upstreamRef{baseURL: base, conns: conns, stop: p.Stop}, nil
}
