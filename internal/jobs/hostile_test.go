package jobs

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// TestJobConcurrentDuplicateSubmits: many submits with one key at once
// make one job, and all answer it.
func TestJobConcurrentDuplicateSubmits(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}}})
	const n = 16
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := h.submit("web", videoBody, "Idempotency-Key", "same")
			if r.status == http.StatusOK {
				ids[i] = r.object(t).ID
			}
		})
	}
	wg.Wait()
	for i, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("submit %d answered %q, want the job %q", i, id, ids[0])
		}
	}
	if st := h.sims[0].Stats(); st.JobsCreated != 1 || st.APIs["videos"] != 1 {
		t.Errorf("sim: %d jobs from %d submits, want 1 from 1", st.JobsCreated, st.APIs["videos"])
	}
	// The same key for another client is another job; another body is a 422.
	if v := h.submit("mobile", videoBody, "Idempotency-Key", "same").object(t); v.ID == ids[0] {
		t.Error("another client's key answered the first client's job")
	}
	other := strings.Replace(videoBody, "fox", "cat", 1)
	if r := h.submit("web", other, "Idempotency-Key", "same"); r.status != http.StatusUnprocessableEntity {
		t.Errorf("same key, other body: %d %s, want 422", r.status, r.body)
	}
}

// TestJobPollingAcrossRestart: a job submitted before a restart is polled
// and downloaded after it through the same id; a cut-off submit with a
// client key resumes under that key.
func TestJobPollingAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, setup{targets: 2, dir: dir, sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Minute}}})
	h.sims[0].SetFaults([]sim.Fault{{Kind: sim.ErrorStorm}})
	v := h.submit("web", videoBody, "Idempotency-Key", "k").object(t)
	if h.sims[1].Stats().JobsCreated != 1 {
		t.Fatal("the job did not land on the second target")
	}
	h.restart()
	if s := h.jobs.Status()[1]; s.InFlight != 1 {
		t.Errorf("after the restart b holds %d slots, want its job's", s.InFlight)
	}
	h.clk.Advance(2 * time.Minute)
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "completed" || got.ID != v.ID {
		t.Fatalf("poll after restart = %+v, want the job completed", got)
	}
	if c := h.get("web", "/v1/videos/"+v.ID+"/content"); c.status != http.StatusOK || len(c.body) != sim.DefaultContentBytes {
		t.Errorf("content after restart: %d, %d bytes", c.status, len(c.body))
	}
	if again := h.submit("web", videoBody, "Idempotency-Key", "k").object(t); again.ID != v.ID {
		t.Errorf("the key after the restart answered %s, want %s", again.ID, v.ID)
	}
	if b := readFile(t, filepath.Join(dir, v.ID+".json")); !strings.Contains(string(b), `"state":"completed"`) {
		t.Errorf("record %s", b)
	}
}

// TestVideoOtherClientGets404: another client's job does not exist for
// it, whatever it asks.
func TestVideoOtherClientGets404(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{}}})
	v := h.submit("web", videoBody).object(t)
	for _, r := range []reply{
		h.get("mobile", "/v1/videos/"+v.ID),
		h.get("mobile", "/v1/videos/"+v.ID+"/content"),
		h.do(t.Context(), http.MethodDelete, "/v1/videos/"+v.ID, "mobile", ""),
		h.get("mobile", "/v1/videos/video_00000000000000000000000000000000"),
	} {
		if r.status != http.StatusNotFound || r.code() != "video_not_found" {
			t.Errorf("%d %s, want 404 video_not_found", r.status, r.body)
		}
	}
	if r := h.get("mobile", "/v1/videos"); strings.Contains(string(r.body), v.ID) {
		t.Errorf("another client's list shows the job: %s", r.body)
	}
	if r := h.get("", "/v1/videos/"+v.ID); r.status != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", r.status)
	}
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "completed" {
		t.Errorf("the owner's poll: %+v", got)
	}
}

// TestVideoHostileInputs: bodies a decoder could read otherwise than the
// gateway are refused in OpenAI's error shape and never reach a provider.
func TestVideoHostileInputs(t *testing.T) {
	h := newHarness(t, setup{})
	huge := `{"model":"video","prompt":"` + strings.Repeat("x", DefaultMaxBody) + `"}`
	for _, tc := range []struct {
		name, body string
		status     int
		param      string
	}{
		{"duplicate model", `{"model":"video","model":"chat","prompt":"p"}`, 400, "model"},
		{"escaped duplicate", `{"model":"video","mod\u0065l":"x","prompt":"p"}`, 400, "model"},
		{"case variant", `{"model":"video","Model":"x","prompt":"p"}`, 400, "Model"},
		{"case variant seconds", `{"model":"video","SECONDS":"600000","prompt":"p"}`, 400, "SECONDS"},
		{"unknown model", `{"model":"nope","prompt":"p"}`, 404, "model"},
		{"chat alias", `{"model":"chat","prompt":"p"}`, 404, "model"},
		{"no model", `{"prompt":"p"}`, 400, "model"},
		{"model not a string", `{"model":["video"],"prompt":"p"}`, 400, "model"},
		{"seconds out of range", `{"model":"video","prompt":"p","seconds":"100000"}`, 400, "seconds"},
		{"seconds fraction", `{"model":"video","prompt":"p","seconds":4.5}`, 400, "seconds"},
		{"not an object", `["model","video"]`, 400, ""},
		{"trailing data", `{"model":"video","prompt":"p"} {"model":"x"}`, 400, ""},
		{"truncated", `{"model":"video","prompt":`, 400, ""},
		{"huge", huge, 413, ""},
	} {
		r := h.submit("web", tc.body)
		var e struct {
			Error struct {
				Param   *string `json:"param"`
				Message string  `json:"message"`
				Type    string  `json:"type"`
			} `json:"error"`
		}
		jsonUnmarshal(r.body, &e)
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if r.status != tc.status || param != tc.param || e.Error.Message == "" || e.Error.Type == "" {
			t.Errorf("%s: %d %s, want %d with param %q", tc.name, r.status, r.body, tc.status, tc.param)
		}
	}
	if n := h.sims[0].Stats().APIs["videos"]; n != 0 {
		t.Errorf("the provider got %d submits, want none", n)
	}
}

// TestJobClientDisconnectMidSubmit: a client that leaves while its submit
// runs does not lose the job: it is recorded, and a retry with the same
// key answers it without a second one.
func TestJobClientDisconnectMidSubmit(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}}})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.LatencySpike, Extra: 10 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan reply, 1)
	go func() { done <- h.do(ctx, http.MethodPost, "/v1/videos", "web", videoBody, "Idempotency-Key", "k") }()
	waitFor(t, "the submit at the provider", func() bool { return s.Stats().APIs["videos"] == 1 })
	cancel()
	<-done
	h.clk.WaitForTimers(3) // the poller, the watchdog, the spike
	h.clk.Advance(10 * time.Second)
	waitFor(t, "the job made", func() bool { return s.Stats().JobsCreated == 1 })
	s.SetFaults(nil)
	v := h.submit("web", videoBody, "Idempotency-Key", "k").object(t)
	if v.Status != "queued" || s.Stats().JobsCreated != 1 {
		t.Fatalf("retry: %+v, %d jobs: want the job the first submit made", v, s.Stats().JobsCreated)
	}
}

// TestVideoContentStreams: an endless content body reaches the client as
// it comes, so it cannot be held whole; the client leaving ends the
// upstream download.
func TestVideoContentStreams(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{ContentBytes: -1}}})
	v := h.submit("web", videoBody).object(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.gw.URL+"/v1/videos/"+v.ID+"/content", nil)
	req.Header.Set("Authorization", "Bearer web")
	resp, err := h.gw.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q on passed-through content; want nosniff", got)
	}
	const want = 64 << 20
	n, err := io.CopyN(io.Discard, resp.Body, want)
	if err != nil || n != want {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	resp.Body.Close()
	sent := func() int64 { return h.sims[0].Stats().ContentBytes }
	waitFor(t, "the upstream download to end", func() bool {
		before := sent()
		for range 3 {
			time.Sleep(20 * time.Millisecond) // watching a counter settle, not a timer
		}
		return sent() == before
	})
	if got := sent(); got > 2*want {
		t.Errorf("the provider sent %d bytes for %d read: the download did not end with the client", got, want)
	}
}

// TestVideoModelNotAllowed: a client may use only the aliases it is
// allowed.
func TestVideoModelNotAllowed(t *testing.T) {
	h := newHarness(t, setup{})
	h.stop()
	j, err := New(Options{Aliases: h.cfg.Jobs, Providers: h.cfg.Providers, Clock: h.clk, Identify: identify,
		Allowed: func(client, alias string) bool { return client == "web" }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	j.Register(mux)
	h.jobs, h.gw = j, newServer(mux)
	if r := h.submit("mobile", videoBody); r.status != http.StatusForbidden || r.code() != "model_not_allowed" {
		t.Errorf("%d %s, want 403 model_not_allowed", r.status, r.body)
	}
	h.submit("web", videoBody).object(t)
}
