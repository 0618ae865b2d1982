package batch

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Bad lines are dead-lettered with their line numbers and codes; the rest
// run.
func TestBadLinesAreDeadLetteredAndTheRestRun(t *testing.T) {
	good := `{"custom_id":"ok1","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[]}}`
	lines := []string{
		good,
		`{"custom_id":"x", "url":`, // 2: cut short
		`{"method":"POST","url":"/v1/chat/completions","body":{}}`,                                                        // 3: no custom_id
		`{"custom_id":"ok1","method":"POST","url":"/v1/chat/completions","body":{"model":"chat"}}`,                        // 4: duplicate
		`{"custom_id":"u","method":"POST","url":"/v1/images/generations","body":{}}`,                                      // 5: url
		`{"custom_id":"big","method":"POST","url":"/v1/embeddings","body":{"input":"` + strings.Repeat("a", 3000) + `"}}`, // 6: too long
		`{"custom_id":"d","custom_id":"e","method":"POST","url":"/v1/embeddings","body":{}}`,                              // 7: duplicate key
		`{"custom_id":"c","URL":"/v1/embeddings","method":"POST","body":{}}`,                                              // 8: case variant
		`{"custom_id":"s","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","stream":true}}`,            // 9: stream
		`{"custom_id":"m","method":"GET","url":"/v1/chat/completions","body":{}}`,                                         // 10: method
		`{"custom_id":"b","method":"POST","url":"/v1/chat/completions","body":[1]}`,                                       // 11: body
		`{"custom_id":"k","method":"POST","url":"/v1/chat/completions","body":{"model":"a","model":"b"}}`,                 // 12: body conflict
		``, // 13: blank, skipped
		`{"custom_\u0069d":"ok2","method":"POST","url":"/v1/embeddings","body":{"model":"e","input":"x"}}`, // 14: escaped key, fine
	}
	p := paths(t)
	s := run(t, p, strings.Join(lines, "\n"), Options{Handler: okHandler("0"), MaxLineBytes: 2048})
	want := map[int]string{2: CodeInvalidJSON, 3: CodeMissingCustomID, 4: CodeDuplicateID, 5: CodeInvalidURL, 6: CodeTooLarge,
		7: CodeDuplicateKey, 8: CodeDuplicateKey, 9: CodeInvalidBody, 10: CodeInvalidMethod, 11: CodeInvalidBody, 12: CodeInvalidBody}
	dead := records(t, p.Dead)
	if len(dead) != len(want) || s.Dead != int64(len(want)) || s.OK != 2 {
		t.Fatalf("dead %d (summary %+v); want %d", len(dead), s, len(want))
	}
	for _, d := range dead {
		if want[d.Fusebox.Line] != d.Error.Code || d.Fusebox.Verdict != d.Error.Code {
			t.Errorf("line %d: code %q; want %q (%s)", d.Fusebox.Line, d.Error.Code, want[d.Fusebox.Line], d.Error.Message)
		}
		if !strings.HasPrefix(d.Error.Message, fmt.Sprintf("line %d: ", d.Fusebox.Line)) {
			t.Errorf("message %q does not name line %d", d.Error.Message, d.Fusebox.Line)
		}
		if d.Request == nil && d.Raw == nil {
			t.Errorf("line %d: dead letter keeps neither request nor raw text", d.Fusebox.Line)
		}
	}
	out := records(t, p.Out)
	if len(out) != 2 || out[0].Response.StatusCode != 200 || out[0].Fusebox.Target != "p/m" {
		t.Fatalf("out %+v", out)
	}
}

// A client error is final after one attempt, with the answer kept; a
// rerun of the dead-letter file after the cause is fixed answers it.
func TestClientErrorsAreDeadLetteredAndRunAgain(t *testing.T) {
	var mu sync.Mutex
	fixed := false
	h := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		f := fixed
		mu.Unlock()
		if !f && strings.HasSuffix(r.Header.Get("Idempotency-Key"), "") && strings.Contains(readBody(r), "hi 2\"") {
			errorAnswer(w, 400, "context_length_exceeded")
			return
		}
		okHandler("0.5")(w, r)
	}
	p := paths(t)
	s := run(t, p, chatLines(3), Options{Handler: http.HandlerFunc(h)})
	dead := records(t, p.Dead)
	if s.OK != 2 || len(dead) != 1 || dead[0].CustomID != "q2" || dead[0].Response.StatusCode != 400 ||
		dead[0].Fusebox.Attempts != 1 || dead[0].Fusebox.Verdict != "client_error" || !strings.Contains(dead[0].Fusebox.LastError, "said 400") {
		t.Fatalf("summary %+v, dead %+v", s, dead)
	}
	mu.Lock()
	fixed = true
	mu.Unlock()
	f, _ := os.Open(p.Dead)
	defer f.Close()
	p2 := paths(t)
	r, _ := New(Options{Handler: http.HandlerFunc(h)})
	s2, err := r.Run(context.Background(), Requeue(f), p2)
	if err != nil || s2.OK != 1 || s2.Dead != 0 {
		t.Fatalf("rerun: %+v %v", s2, err)
	}
	if out := records(t, p2.Out); out[0].CustomID != "q2" {
		t.Fatalf("rerun out %+v", out)
	}
}

func readBody(r *http.Request) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// The cost cap stops the batch when the next line's estimate would pass
// it, says so, and a rerun with a higher cap goes on where it stopped,
// counting what was spent before.
func TestMaxCostStopsAndResumes(t *testing.T) {
	p := paths(t)
	est := func(*Line) float64 { return 0.01 }
	o := Options{Handler: okHandler("0.01"), MaxCost: 0.055, Estimate: est, Concurrency: 4}
	s := run(t, p, chatLines(20), o)
	if s.Stopped != StoppedMaxCost || s.OK != 5 || s.Cost > 0.055 || !strings.Contains(s.Reason, "cost cap") {
		t.Fatalf("summary %+v; want 5 lines and a stop at the cap", s)
	}
	o.MaxCost = 0.105
	s = run(t, p, chatLines(20), o)
	if s.Stopped != StoppedMaxCost || s.Skipped != 5 || s.OK != 5 || s.TotalOK != 10 {
		t.Fatalf("second run %+v; want 5 more, 10 in all", s)
	}
	o.MaxCost = 0
	s = run(t, p, chatLines(20), o)
	if s.Stopped != "" || s.TotalOK != 20 || len(records(t, p.Out)) != 20 {
		t.Fatalf("last run %+v", s)
	}
}

// A 429 wall slows the batch (its concurrency halves) and dead-letters
// nothing; when it ends, every line is answered.
func TestThrottleWallSlowsTheBatchAndFailsNothing(t *testing.T) {
	clk := clocktest.New(time.Unix(0, 0))
	wallEnds := clk.Now().Add(2 * time.Minute)
	var c counter
	var minLimit int = 1 << 30
	var mu sync.Mutex
	var r *Runner
	h := func(w http.ResponseWriter, req *http.Request) {
		n := c.enter()
		defer c.leave()
		mu.Lock()
		minLimit = min(minLimit, r.Progress().Concurrency)
		mu.Unlock()
		switch {
		case clk.Now().Before(wallEnds) && n%3 == 0:
			errorAnswer(w, 503, "queue_full", "Retry-After", "5")
		case clk.Now().Before(wallEnds):
			errorAnswer(w, 429, "rate_limit_exceeded", "Retry-After", "3")
		default:
			okHandler("0")(w, req)
		}
	}
	r, _ = New(Options{Handler: http.HandlerFunc(h), Concurrency: 16, Clock: clk, LineDeadline: time.Minute})
	done := make(chan struct{})
	go drive(clk, done)
	s, err := r.Run(context.Background(), strings.NewReader(chatLines(100)), paths(t))
	close(done)
	if err != nil || s.OK != 100 || s.Dead != 0 {
		t.Fatalf("summary %+v %v; want every line answered, none dead", s, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if minLimit >= 16 || r.Progress().Throttled == 0 {
		t.Fatalf("concurrency never went below 16 (lowest %d), throttles %d", minLimit, r.Progress().Throttled)
	}
}

// Through an outage of every target, a line is retried until its deadline
// and then dead-lettered as an outage with its attempts and last error.
func TestOutagePastTheDeadlineIsDeadLettered(t *testing.T) {
	clk := clocktest.New(time.Unix(0, 0))
	h := func(w http.ResponseWriter, r *http.Request) {
		errorAnswer(w, 503, "no_target_available")
	}
	r, _ := New(Options{Handler: http.HandlerFunc(h), Clock: clk, LineDeadline: time.Minute})
	done := make(chan struct{})
	go drive(clk, done)
	p := paths(t)
	s, err := r.Run(context.Background(), strings.NewReader(chatLines(3)), p)
	close(done)
	if err != nil || s.Dead != 3 {
		t.Fatalf("%+v %v", s, err)
	}
	for _, d := range records(t, p.Dead) {
		if d.Fusebox.Verdict != "outage" || d.Fusebox.Attempts < 2 || !strings.Contains(d.Fusebox.LastError, "503") {
			t.Errorf("dead letter %+v", d.Fusebox)
		}
	}
}

// A spent client budget stops the batch and leaves its lines for later;
// so does a refused client key.
func TestBudgetAndAuthStopTheBatch(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   string
	}{{429, "budget_exceeded", StoppedBudget}, {401, "invalid_api_key", StoppedAuth}} {
		var c counter
		h := func(w http.ResponseWriter, r *http.Request) {
			if c.enter() > 3 {
				errorAnswer(w, tc.status, tc.code, "Retry-After", "3600")
				return
			}
			okHandler("0")(w, r)
		}
		p := paths(t)
		s := run(t, p, chatLines(50), Options{Handler: http.HandlerFunc(h), Concurrency: 1})
		if s.Stopped != tc.want || s.OK != 3 || s.Dead != 0 || !strings.Contains(s.Reason, "said") {
			t.Errorf("%s: %+v", tc.code, s)
		}
	}
}

// Lines in flight never exceed Concurrency, and every request carries the
// line's idempotency key and what Prepare sets.
func TestConcurrencyBoundAndRequestHeaders(t *testing.T) {
	var c counter
	var mu sync.Mutex
	keys := map[string]string{}
	gate := make(chan struct{})
	h := func(w http.ResponseWriter, r *http.Request) {
		c.enter()
		defer c.leave()
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			errorAnswer(w, 401, "invalid_api_key")
			return
		}
		body := readBody(r)
		mu.Lock()
		keys[body] = r.Header.Get("Idempotency-Key")
		if len(keys) == 5 {
			close(gate) // the first five are held until five are in
		}
		mu.Unlock()
		<-gate
		okHandler("0")(w, r)
	}
	o := Options{Handler: http.HandlerFunc(h), Concurrency: 5, BatchID: "b1",
		Prepare: func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk-test") }}
	s := run(t, paths(t), chatLines(40), o)
	if s.OK != 40 || c.hi > 5 {
		t.Fatalf("summary %+v, most in flight %d; want 40 lines, at most 5 at once", s, c.hi)
	}
	if k := keys[`{"model":"chat","messages":[{"role":"user","content":"hi 1"}]}`]; k != IdempotencyKey("b1", "q1") || len(k) > 48 {
		t.Fatalf("key %q", k)
	}
	if IdempotencyKey("b1", "q1") == IdempotencyKey("b2", "q1") {
		t.Fatal("two batches share a key")
	}
}

// A huge answer dead-letters its line rather than being held.
func TestAnswerOverTheLimit(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":"` + strings.Repeat("x", 5000) + `"}`))
	}
	p := paths(t)
	s := run(t, p, chatLines(1), Options{Handler: http.HandlerFunc(h), MaxAnswerBytes: 1000})
	if d := records(t, p.Dead); s.Dead != 1 || d[0].Error.Code != "answer_too_large" {
		t.Fatalf("%+v %+v", s, d)
	}
}

// An endless line (no newline for many megabytes) costs bounded memory and
// is dead-lettered; the line after it runs.
func TestEndlessLineIsReadInBoundedMemory(t *testing.T) {
	huge := strings.NewReader(`{"custom_id":"x","body":"` + strings.Repeat("a", 32<<20))
	in := ioMulti(huge, strings.NewReader("\n"+chatLines(1)))
	r, _ := New(Options{Handler: okHandler("0"), MaxLineBytes: 1 << 16})
	p := paths(t)
	s, err := r.Run(context.Background(), in, p)
	if err != nil || s.Dead != 1 || s.OK != 1 {
		t.Fatalf("%+v %v", s, err)
	}
	if d := records(t, p.Dead); d[0].Error.Code != CodeTooLarge || len(*d[0].Raw) > 1<<16 {
		t.Fatalf("dead %+v", d[0].Error)
	}
}
