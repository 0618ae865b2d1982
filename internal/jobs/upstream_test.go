package jobs

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// rogue is a provider whose answers a test writes: a handler per route.
type rogue struct {
	submits atomic.Int64
	submit  http.HandlerFunc
	poll    http.HandlerFunc
	content http.HandlerFunc
}

func (p *rogue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost:
		p.submits.Add(1)
		p.submit(w, r)
	case strings.HasSuffix(r.URL.Path, "/content"):
		p.content(w, r)
	default:
		p.poll(w, r)
	}
}

const rogueJob = `{"id":"vid_1","object":"video","status":"queued","seconds":"8"}`

// rogueHarness puts the rogue first and a simulated provider second.
func rogueHarness(t *testing.T, p *rogue) *harness {
	t.Helper()
	h := newHarness(t, setup{targets: 2, sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}}})
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	h.stop()
	pc := h.cfg.Providers["a"]
	pc.BaseURL = ts.URL + "/v1"
	h.cfg.Providers["a"] = pc
	h.start()
	return h
}

func writeJob(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, rogueJob)
}

// TestJobGarbageAnswerIsLost: a 200 without a job may have made one: it
// is resent under the same key, then reported unknown, never sent to the
// next target.
func TestJobGarbageAnswerIsLost(t *testing.T) {
	p := &rogue{submit: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>oops</html>") }}
	h := rogueHarness(t, p)
	r := h.submit("web", videoBody)
	if r.status != http.StatusBadGateway || r.code() != "job_state_unknown" {
		t.Fatalf("%d %s, want job_state_unknown", r.status, r.body)
	}
	if n := p.submits.Load(); n != 2 || h.sims[1].Stats().APIs["videos"] != 0 {
		t.Errorf("%d submits to the rogue, %d to the next: want 2 and 0", n, h.sims[1].Stats().APIs["videos"])
	}
}

// TestJobPollGarbageKeepsLastState: a poll answered with garbage, or not
// at all before its timeout, answers the job as last seen.
func TestJobPollGarbageKeepsLastState(t *testing.T) {
	hang := make(chan struct{})
	var polls atomic.Int64
	p := &rogue{submit: writeJob, poll: func(w http.ResponseWriter, r *http.Request) {
		if polls.Add(1) == 1 {
			io.WriteString(w, `{"id":"vid_1","status":"exploded"}`)
			return
		}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}}
	h := rogueHarness(t, p)
	defer close(hang)
	v := h.submit("web", videoBody).object(t)
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "queued" {
		t.Fatalf("garbage poll: %+v, want the last state", got)
	}
	done := make(chan reply, 1)
	go func() { done <- h.get("web", "/v1/videos/"+v.ID) }()
	waitFor(t, "the hung poll", func() bool { return polls.Load() == 2 })
	h.clk.WaitForTimers(2)
	h.clk.Advance(time.Minute)
	if got := (<-done).object(t); got.Status != "queued" {
		t.Errorf("hung poll: %+v, want the last state", got)
	}
}

// TestVideoContentStallAborts: a download whose upstream stalls past the
// idle bound is cut, and the client sees a broken body, not a short file.
func TestVideoContentStallAborts(t *testing.T) {
	stalled := make(chan struct{})
	p := &rogue{submit: writeJob,
		poll: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"id":"vid_1","object":"video","status":"completed","seconds":"8"}`)
		},
		content: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000000")
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
			close(stalled)
			<-r.Context().Done()
		}}
	h := rogueHarness(t, p)
	v := h.submit("web", videoBody).object(t)
	h.get("web", "/v1/videos/"+v.ID).object(t)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, h.gw.URL+"/v1/videos/"+v.ID+"/content", nil)
	req.Header.Set("Authorization", "Bearer web")
	resp, err := h.gw.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-stalled
	h.clk.WaitForTimers(2)
	h.clk.Advance(time.Minute)
	b, err := io.ReadAll(resp.Body)
	if err == nil || len(b) == 1000000 {
		t.Errorf("read %d bytes, err %v: want the download broken", len(b), err)
	}
}
