package jobs

import (
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// TestJobReplayedRefusalGetsNewKey: a capacity refusal is replayed by the
// provider for its key, so the client's retry goes upstream under a new
// key and gets a job; resent under the old key it would be refused again.
func TestJobReplayedRefusalGetsNewKey(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Minute}}})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.Capacity, To: time.Second}}); err != nil {
		t.Fatal(err)
	}
	r := h.submit("web", videoBody, "Idempotency-Key", "client-key-1")
	if r.status != http.StatusTooManyRequests || r.code() != "provider_capacity_exceeded" {
		t.Fatalf("first submit: %d %s, want the provider's capacity refusal", r.status, r.body)
	}
	refused := s.Keys()
	if len(refused) != 1 || refused[0].Refused != "provider_capacity_exceeded" {
		t.Fatalf("sim keys %+v, want one refused key", refused)
	}
	h.clk.Advance(2 * time.Second) // the provider has capacity again
	v := h.submit("web", videoBody, "Idempotency-Key", "client-key-1").object(t)
	keys := keysOf(s)
	if len(keys) != 2 || keys[refused[0].Key].Submits != 1 {
		t.Fatalf("sim keys %+v: want the retry under a new key, the refused one sent once", s.Keys())
	}
	if st := s.Stats(); st.JobsCreated != 1 {
		t.Errorf("%d jobs created, want 1", st.JobsCreated)
	}
	// What the key rule prevents: the old key is refused for ever.
	req, _ := http.NewRequest(http.MethodPost, h.urls[0]+"/v1/videos", stringsReader(`{"model":"sora-a","prompt":"a fox in the snow","seconds":"8"}`))
	req.Header.Set("Authorization", "Bearer key-a")
	req.Header.Set("Idempotency-Key", refused[0].Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the old key resent directly: %d, want the refusal replayed", resp.StatusCode)
	}
	if again := h.submit("web", videoBody, "Idempotency-Key", "client-key-1").object(t); again.ID != v.ID {
		t.Errorf("a third submit with the key got %s, want the job %s", again.ID, v.ID)
	}
	if st := s.Stats(); st.JobsCreated != 1 {
		t.Errorf("%d jobs created, want 1", st.JobsCreated)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestJobNetworkErrorReusesKey: a reset after the provider created the
// job is resent under the same key, and the provider answers the job it
// made: one job, two submits under one key.
func TestJobNetworkErrorReusesKey(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Minute}}})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.AcceptReset, To: time.Second}}); err != nil {
		t.Fatal(err)
	}
	v := h.submit("web", videoBody).object(t)
	keys := s.Keys()
	if st := s.Stats(); st.JobsCreated != 1 || len(keys) != 1 || keys[0].Submits != 2 || keys[0].Job == "" {
		t.Fatalf("jobs created %d, keys %+v: want one job, its key sent twice", st.JobsCreated, keys)
	}
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "queued" {
		t.Errorf("poll = %+v", got)
	}
}

// TestJobTimeoutAfterSendReusesKey: a submit whose answer does not come
// (the provider made the job, then hung) is cut by the submit timeout and
// resent under the same key.
func TestJobTimeoutAfterSendReusesKey(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}}})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.AcceptHang, To: time.Second}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan reply, 1)
	go func() { done <- h.submit("web", videoBody) }()
	waitFor(t, "the job made", func() bool { return len(s.Jobs()) == 1 })
	h.clk.WaitForTimers(2) // the background poll and the submit's watchdog
	h.clk.Advance(time.Minute)
	r := <-done
	v := r.object(t)
	keys := s.Keys()
	if len(s.Jobs()) != 1 || len(keys) != 1 || keys[0].Submits != 2 || v.Status != "queued" {
		t.Fatalf("jobs %+v, keys %+v, answer %s: want one job, its key sent twice", s.Jobs(), keys, r.body)
	}
}

// TestJobTimeoutLookedUpByKey: where the target can find a job by its key,
// a lost answer is looked up, not resent.
func TestJobTimeoutLookedUpByKey(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}},
		jobs: "  - name: video\n    poll_interval: 24h\n    targets:\n      - {provider: a, model: sora, lookup_path: \"/video_keys/{key}\"}\n"})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.AcceptHang}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan reply, 1)
	go func() { done <- h.submit("web", videoBody) }()
	waitFor(t, "the job made", func() bool { return len(s.Jobs()) == 1 })
	h.clk.WaitForTimers(2)
	h.clk.Advance(time.Minute)
	r := <-done
	if v := r.object(t); v.Status != "queued" {
		t.Fatalf("answer %s", r.body)
	}
	if keys := s.Keys(); len(keys) != 1 || keys[0].Submits != 1 {
		t.Errorf("keys %+v: want the key sent once, the job found by it", keys)
	}
}

// TestJobLostAnswerNeverFailsOver: a submit whose answer is lost every
// time is reported unknown, with the job's id, and never sent to the next
// target; a retry with the same key goes back to the first target under
// the same key.
func TestJobLostAnswerNeverFailsOver(t *testing.T) {
	h := newHarness(t, setup{targets: 2, sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}}})
	a, b := h.sims[0], h.sims[1]
	if err := a.SetFaults([]sim.Fault{{Kind: sim.Reset}}); err != nil {
		t.Fatal(err)
	}
	r := h.submit("web", videoBody, "Idempotency-Key", "k1")
	if r.status != http.StatusBadGateway || r.code() != "job_state_unknown" || r.header.Get("X-Fusebox-Job-Id") == "" {
		t.Fatalf("submit: %d %s %v, want 502 job_state_unknown with the job's id", r.status, r.body, r.header)
	}
	if n := b.Stats().APIs["videos"]; n != 0 {
		t.Fatalf("the second target got %d submits, want none", n)
	}
	first := a.Stats().APIs["videos"]
	// While the first target's breaker is open, a retry is refused, and
	// still not sent elsewhere.
	h.jobs.targets["a/sora-a"].submit.ForceOpen()
	if r := h.submit("web", videoBody, "Idempotency-Key", "k1"); r.status != http.StatusServiceUnavailable || b.Stats().APIs["videos"] != 0 {
		t.Fatalf("retry with the breaker open: %d %s; b got %d submits", r.status, r.body, b.Stats().APIs["videos"])
	}
	h.jobs.targets["a/sora-a"].submit.Reset()
	a.SetFaults(nil)
	v := h.submit("web", videoBody, "Idempotency-Key", "k1").object(t)
	keys := a.Keys()
	if len(keys) != 1 || a.Stats().APIs["videos"] != first+1 || b.Stats().APIs["videos"] != 0 {
		t.Fatalf("keys %+v: want the retry on the first target under the same key", keys)
	}
	if v.ID != r.header.Get("X-Fusebox-Job-Id") {
		t.Errorf("the retry's job %s, want the id given with the unknown answer %s", v.ID, r.header.Get("X-Fusebox-Job-Id"))
	}
}

// TestJobOutageFailsOver: a 5xx and a refused connection are outages
// before the provider took the job: the submit goes to the next target.
func TestJobOutageFailsOver(t *testing.T) {
	h := newHarness(t, setup{targets: 2, sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}}})
	if err := h.sims[0].SetFaults([]sim.Fault{{Kind: sim.ErrorStorm, Status: 503}}); err != nil {
		t.Fatal(err)
	}
	h.submit("web", videoBody).object(t)
	if a, b := h.sims[0].Stats().JobsCreated, h.sims[1].Stats().JobsCreated; a != 0 || b != 1 {
		t.Fatalf("jobs created a %d, b %d: want the job on b", a, b)
	}
}

func TestJobConnectionRefusedFailsOver(t *testing.T) {
	h := newHarness(t, setup{targets: 2, sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}},
		jobs: "  - name: video\n    poll_interval: 24h\n    targets:\n      - {provider: a, model: sora}\n      - {provider: b, model: sora}\n"})
	h.stop()
	p := h.cfg.Providers["a"]
	p.BaseURL = "http://127.0.0.1:1/v1" // nothing listens on port 1
	h.cfg.Providers["a"] = p
	h.start()
	v := h.submit("web", videoBody).object(t)
	if n := h.sims[1].Stats().JobsCreated; n != 1 {
		t.Fatalf("b made %d jobs, want 1", n)
	}
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "queued" {
		t.Errorf("poll = %+v", got)
	}
}
