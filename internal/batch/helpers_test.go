package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(killChild())
	}
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// chatLines returns n chat lines with custom_ids q1…qn.
func chatLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"custom_id":"q%d","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, i)
	}
	return b.String()
}

// okHandler answers every request like the gateway: a completion with
// usage, its target and cost in the headers.
func okHandler(cost string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Fusebox-Target", "p/m")
		w.Header().Set("X-Fusebox-Cost", cost)
		w.Header().Set("X-Request-Id", "req-1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}
}

func errorAnswer(w http.ResponseWriter, status int, code string, hdr ...string) {
	for i := 0; i+1 < len(hdr); i += 2 {
		w.Header().Set(hdr[i], hdr[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":"said %d","type":"x","code":%q}}`, status, code)
}

// paths returns a batch's files in a new directory.
func paths(t *testing.T) Paths {
	d := t.TempDir()
	return Paths{Out: filepath.Join(d, "out.jsonl"), Dead: filepath.Join(d, "dead.jsonl")}
}

// run runs input through h with o and returns the summary.
func run(t *testing.T, p Paths, input string, o Options) Summary {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Run(context.Background(), strings.NewReader(input), p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// record is an output or dead-letter line.
type record struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Fusebox struct {
		Line      int     `json:"line"`
		Target    string  `json:"target"`
		Cost      float64 `json:"cost"`
		Attempts  int     `json:"attempts"`
		Verdict   string  `json:"verdict"`
		LastError string  `json:"last_error"`
	} `json:"fusebox"`
	Request json.RawMessage `json:"request"`
	Raw     *string         `json:"raw"`
}

// records reads a JSONL output file; every line must be whole JSON.
func records(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: line %d is not JSON: %v: %.200s", path, len(out)+1, err, sc.Text())
		}
		out = append(out, r)
	}
	return out
}

// drive moves a fake clock on whenever a timer is pending, until done is
// closed: waits in the code under test pass at once, in order.
func drive(clk *clocktest.Clock, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		if !clk.AdvanceToNext() {
			runtime.Gosched()
		}
	}
}

// counter counts calls and the most in flight at once.
type counter struct {
	mu             sync.Mutex
	calls, now, hi int
}

func (c *counter) enter() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.now++
	c.hi = max(c.hi, c.now)
	return c.calls
}

func (c *counter) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now--
}

func ioMulti(rs ...io.Reader) io.Reader { return io.MultiReader(rs...) }
