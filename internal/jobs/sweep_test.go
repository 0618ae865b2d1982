package jobs

import (
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// TestJobBackgroundPollSettles: a job nobody polls is polled by the
// gateway: its slot is freed and its cost settled; past retention its
// record is forgotten.
func TestJobBackgroundPollSettles(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{RunTime: time.Minute}},
		jobs: "  - name: video\n    poll_interval: 30s\n    retention: 1h\n    targets:\n      - {provider: a, model: sora, price: {per_job: 2}}\n"})
	v := h.submit("web", videoBody).object(t)
	if s := h.jobs.Status()[0]; s.InFlight != 1 {
		t.Fatalf("status %+v", s)
	}
	h.clk.Advance(2 * time.Minute) // the poller's timer fires at 30s: the job is in progress then
	waitFor(t, "the background poll to settle the job", func() bool {
		_, settled := h.costs()
		if len(settled) == 0 {
			h.clk.Advance(30 * time.Second) // the next round
			return false
		}
		return settled[0] == 2
	})
	if s := h.jobs.Status()[0]; s.InFlight != 0 {
		t.Errorf("status %+v: the completed job still holds its slot", s)
	}
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "completed" {
		t.Errorf("poll = %+v", got)
	}
	h.clk.Advance(2 * time.Hour)
	waitFor(t, "the record to be forgotten", func() bool {
		if h.get("web", "/v1/videos/"+v.ID).status == http.StatusNotFound {
			return true
		}
		h.clk.Advance(30 * time.Second)
		return false
	})
}

// TestJobCostAfterRestartIsCharged: a job whose reservation was lost to a
// restart is charged its cost when it completes.
func TestJobCostAfterRestartIsCharged(t *testing.T) {
	h := newHarness(t, setup{dir: t.TempDir(), sim: sim.Config{Jobs: sim.Jobs{RunTime: time.Minute}}})
	v := h.submit("web", videoBody).object(t)
	h.restart()
	h.clk.Advance(2 * time.Minute)
	h.get("web", "/v1/videos/"+v.ID).object(t)
	reserved, settled := h.costs()
	// The first reservation (1.3) was lost with the restart; the cost is
	// reserved and settled at once after it.
	if len(reserved) != 2 || len(settled) != 1 || settled[0] < 1.29 || settled[0] > 1.31 {
		t.Errorf("reserved %v, settled %v", reserved, settled)
	}
}

// TestJobBudgetRefused: a submit the budget cannot take is a 429 and
// never reaches a provider.
func TestJobBudgetRefused(t *testing.T) {
	h := newHarness(t, setup{})
	h.stop()
	j, err := New(Options{Aliases: h.cfg.Jobs, Providers: h.cfg.Providers, Clock: h.clk, Identify: identify,
		Reserve: func(string, float64) (func(float64), bool) { return nil, false }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	j.Register(mux)
	h.jobs, h.gw = j, newServer(mux)
	r := h.submit("web", videoBody)
	if r.status != http.StatusTooManyRequests || r.code() != "budget_exceeded" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if n := h.sims[0].Stats().APIs["videos"]; n != 0 {
		t.Errorf("%d submits reached the provider", n)
	}
}
