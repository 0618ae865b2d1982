package jobs

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// TestJobQueueFullLowersCapTripsNothing: the provider's queue_full (its
// per-account cap on unfinished jobs) halves the target's cap and leaves
// its breaker closed, even one that trips on a single failure; the
// refused submit goes to the next target.
func TestJobQueueFullLowersCapTripsNothing(t *testing.T) {
	h := newHarness(t, setup{targets: 2, sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour, MaxQueued: 2}},
		jobs: "  - name: video\n    poll_interval: 24h\n    max_in_flight: 8\n    breaker: {consecutive: 1}\n    targets:\n      - {provider: a, model: sora}\n      - {provider: b, model: sora}\n"})
	for i := range 3 {
		h.submit("web", videoBody, "Idempotency-Key", fmt.Sprint("k", i)).object(t)
	}
	if a, b := h.sims[0].Stats().JobsCreated, h.sims[1].Stats().JobsCreated; a != 2 || b != 1 {
		t.Fatalf("jobs created a %d, b %d: want the third on b after a's queue_full", a, b)
	}
	if n := h.sims[0].Stats().Outcomes[sim.OutcomeQueueFull]; n != 1 {
		t.Fatalf("a refused %d submits with queue_full, want 1", n)
	}
	st := h.jobs.Status()
	if a := st[0]; a.Cap != 4 || a.Submit != "closed" || a.InFlight != 2 {
		t.Errorf("a = %+v: want its cap halved to 4, its breaker closed, 2 jobs in flight", a)
	}
	if b := st[1]; b.Cap != 8 || b.Submit != "closed" {
		t.Errorf("b = %+v: want it untouched", b)
	}
}

// TestJobCapRefusesLocally: with every target's cap full, a submit is
// refused by the gateway without a call upstream.
func TestJobCapRefusesLocally(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Hour}},
		jobs: "  - name: video\n    poll_interval: 24h\n    max_in_flight: 2\n    targets:\n      - {provider: a, model: sora}\n"})
	h.submit("web", videoBody).object(t)
	h.submit("web", videoBody).object(t)
	r := h.submit("web", videoBody)
	if r.status != http.StatusTooManyRequests || r.code() != "queue_full" {
		t.Fatalf("third submit: %d %s, want the gateway's 429 queue_full", r.status, r.body)
	}
	if n := h.sims[0].Stats().APIs["videos"]; n != 2 {
		t.Errorf("the sim got %d submits, want 2", n)
	}
	_, settled := h.costs()
	if len(settled) != 1 || settled[0] != 0 {
		t.Errorf("settled %v: want the refused submit's reservation released at 0", settled)
	}
	if n := len(h.jobs.store.all(func(*record) bool { return true })); n != 2 {
		t.Errorf("%d records, want the refused submit without a key forgotten", n)
	}
}

// TestJobRuntimeUnavailableOpensResubmitBreaker: jobs accepted and then
// failed with runtime_unavailable are resubmitted (under a new key) and
// open the resubmit breaker, not the submit breaker: submits go on.
func TestJobRuntimeUnavailableOpensResubmitBreaker(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Minute, RunTime: time.Minute}},
		jobs: "  - name: video\n    poll_interval: 24h\n    resubmits: 1\n    breaker: {consecutive: 1}\n" +
			"    resubmit_breaker: {consecutive: 2, open: 10m}\n    targets:\n      - {provider: a, model: sora}\n"})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.JobFailed}}); err != nil {
		t.Fatal(err)
	}
	v := h.submit("web", videoBody).object(t)
	h.clk.Advance(3 * time.Minute)
	got := h.get("web", "/v1/videos/"+v.ID).object(t)
	if got.Status != "queued" || got.ID != v.ID || len(s.Jobs()) != 2 {
		t.Fatalf("after the first failure: %+v, sim jobs %+v: want it resubmitted under the same id", got, s.Jobs())
	}
	if st := h.jobs.Status()[0]; st.Resubmit != "closed" || st.Submit != "closed" {
		t.Fatalf("status %+v after one failed job", st)
	}
	h.clk.Advance(3 * time.Minute)
	got = h.get("web", "/v1/videos/"+v.ID).object(t)
	if got.Status != "failed" || got.Error == nil || got.Error.Code != "runtime_unavailable" {
		t.Fatalf("after the second failure: %+v, want failed with runtime_unavailable", got)
	}
	st := h.jobs.Status()[0]
	if st.Resubmit != "open" || st.Submit != "closed" || st.InFlight != 0 {
		t.Fatalf("status %+v: want the resubmit breaker open, the submit breaker closed, no slot held", st)
	}
	s.SetFaults(nil)
	if w := h.submit("web", videoBody).object(t); w.Status != "queued" {
		t.Errorf("a new submit with the resubmit breaker open: %+v", w)
	}
	_, settled := h.costs()
	if len(settled) != 1 || settled[0] != 0 {
		t.Errorf("settled %v: want the failed job settled at 0", settled)
	}
}

// TestJobResubmitBreakerOpenStopsResubmits: once the resubmit breaker is
// open, a failed job is reported failed at once.
func TestJobResubmitBreakerOpenStopsResubmits(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{RunTime: time.Minute}},
		jobs: "  - name: video\n    poll_interval: 24h\n    resubmits: 3\n" +
			"    resubmit_breaker: {consecutive: 1, open: 10m}\n    targets:\n      - {provider: a, model: sora}\n"})
	s := h.sims[0]
	if err := s.SetFaults([]sim.Fault{{Kind: sim.JobFailed, Code: "runtime_unavailable"}}); err != nil {
		t.Fatal(err)
	}
	v := h.submit("web", videoBody).object(t)
	h.clk.Advance(2 * time.Minute)
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "failed" {
		t.Fatalf("poll = %+v, want failed", got)
	}
	if n := len(s.Jobs()); n != 1 {
		t.Errorf("%d jobs made, want 1: the open resubmit breaker stops the resubmit", n)
	}
}
