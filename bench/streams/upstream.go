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

// streamSpec is the shape of every streamed answer: chunks content
// chunks, the first firstDelay after the request's headers arrived, the
// others delay apart; then, at once, a usage chunk and [DONE].
type streamSpec struct {
	chunks            int
	firstDelay, delay time.Duration
	// prompt is the bytes of earlier conversation each request carries
	// (the client's; the upstream ignores it).
	prompt int
}

// length is how long one stream takes at the upstream.
func (s streamSpec) length() time.Duration {
	return s.firstDelay + time.Duration(s.chunks-1)*s.delay
}

// probeModel is the model the readiness probe asks for: the upstream
// streams it without delays, so that a gateway's whole streaming path is
// checked in milliseconds before it is measured.
const probeModel = "probe"

// chunkHead is the start of every chunk the upstream sends.
const chunkHead = `data: {"id":"chatcmpl-streams","object":"chat.completion.chunk","created":1700000000,"model":"m",` +
	`"system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{`

// buildChunks returns the upstream's events: n content chunks (the first
// with the role, the last with finish_reason "stop") and, as one piece,
// the usage chunk and [DONE].
func buildChunks(n int) (chunks [][]byte, tail []byte) {
	for i := range n {
		role, finish := "", "null"
		if i == 0 {
			role = `"role":"assistant",`
		}
		if i == n-1 {
			finish = `"stop"`
		}
		chunks = append(chunks, fmt.Appendf(nil, `%s%s"content":"word%d "},"logprobs":null,"finish_reason":%s}]}`+"\n\n",
			chunkHead, role, i, finish))
	}
	tail = fmt.Appendf(nil, `data: {"id":"chatcmpl-streams","object":"chat.completion.chunk","created":1700000000,"model":"m",`+
		`"system_fingerprint":"fp_bench","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}}`+
		"\n\ndata: [DONE]\n\n", n, n+12)
	return chunks, tail
}

// upstream is the slow provider: it answers every streamed chat request
// with the same stream, chunk by chunk, each flushed on its own.
type upstream struct {
	spec   streamSpec
	chunks [][]byte
	tail   []byte
	srv    *http.Server
	ln     net.Listener
	conns  atomic.Int64 // connections accepted
}

func startUpstream(spec streamSpec) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{spec: spec, ln: ln}
	u.chunks, u.tail = buildChunks(spec.chunks)
	u.srv = &http.Server{Handler: http.HandlerFunc(u.serve), ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				u.conns.Add(1)
			}
		}}
	go u.srv.Serve(ln)
	return u, nil
}

// upstreamEnv is set, to the upstream's streamSpec ("chunks first-delay
// delay"), in the environment of this program run as the upstream.
const upstreamEnv = "BENCH_STREAMS_UPSTREAM"

func (s streamSpec) String() string {
	return fmt.Sprintf("%d %s %s", s.chunks, s.firstDelay, s.delay)
}

func parseSpec(v string) (streamSpec, error) {
	var s streamSpec
	var first, delay string
	if _, err := fmt.Sscan(v, &s.chunks, &first, &delay); err != nil {
		return s, fmt.Errorf("%s=%q: %v", upstreamEnv, v, err)
	}
	var err1, err2 error
	s.firstDelay, err1 = time.ParseDuration(first)
	s.delay, err2 = time.ParseDuration(delay)
	return s, errors.Join(err1, err2)
}

// serveUpstreamChild serves the upstream until SIGTERM or SIGINT. Its
// first line of output is "upstream " and the address it listens on.
func serveUpstreamChild(v string) error {
	spec, err := parseSpec(v)
	if err != nil {
		return err
	}
	u, err := startUpstream(spec)
	if err != nil {
		return err
	}
	defer u.srv.Close()
	fmt.Println("upstream " + u.ln.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// upstreamRef is the upstream, running in a process of its own: this
// process then holds only the client's sockets, the upstream's are in
// another process, and each stays within its limit on open files.
type upstreamRef struct {
	addr   string // host:port
	p      *proc.Process
	client *http.Client
}

// startUpstreamChild runs this program (self) as the upstream.
func startUpstreamChild(ctx context.Context, self, dir string, spec streamSpec, client *http.Client) (*upstreamRef, error) {
	p, err := proc.Start(proc.Command{Path: self, Dir: dir, Log: filepath.Join(dir, "upstream.log"),
		Env: []string{upstreamEnv + "=" + spec.String()}})
	if err != nil {
		return nil, err
	}
	u := &upstreamRef{p: p, client: client}
	err = p.WaitReady(ctx, func(ctx context.Context) error {
		line, _, _ := strings.Cut(p.LogTail(), "\n")
		addr, ok := strings.CutPrefix(line, "upstream ")
		if !ok {
			return errors.New("no address yet")
		}
		u.addr = addr
		return probe(ctx, addr, spec)
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("upstream: %v", err)
	}
	return u, nil
}

// baseURL is the OpenAI-style API root, ending in /v1.
func (u *upstreamRef) baseURL() string { return "http://" + u.addr + "/v1" }

func (u *upstreamRef) stop() { u.p.Stop() }

// conns returns how many connections the upstream has accepted (-1 if
// it cannot say).
func (u *upstreamRef) conns() int64 {
	resp, err := u.client.Get("http://" + u.addr + "/conns")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/conns" {
		w.Write([]byte(strconv.FormatInt(u.conns.Load(), 10)))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"stream":true`)) {
		http.Error(w, "this upstream only streams chat completions", http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	fast := bytes.Contains(body, []byte(`"model":"`+probeModel+`"`))
	var t *time.Timer
	for i, c := range u.chunks {
		if !fast {
			d := u.spec.delay
			if i == 0 {
				d = u.spec.firstDelay
			}
			if t == nil {
				t = time.NewTimer(d)
			} else {
				t.Reset(d)
			}
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		f.Flush()
	}
	w.Write(u.tail)
	f.Flush()
}

// chatRequest is the request body the client sends: a small chat asking
// for a stream with usage.
func chatRequest(model string, prompt int) []byte {
	history := ""
	if prompt > 0 {
		history = `{"role":"user","content":"` + strings.Repeat("lorem ipsum ", prompt/12+1)[:prompt] + `"},`
	}
	return []byte(`{"model":"` + model + `","messages":[{"role":"system","content":"You are a helpful assistant."},` + history +
		`{"role":"user","content":"Tell me a story."}],"max_tokens":64,"stream":true,"stream_options":{"include_usage":true}}`)
}

// httpRequest is the whole HTTP/1.1 request the client writes for body,
// to the chat completions path of the server at addr.
func httpRequest(addr string, body []byte) []byte {
	return append([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: "+addr+
		"\r\nContent-Type: application/json\r\nAuthorization: Bearer k\r\nAccept: text/event-stream\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"), body...)
}
