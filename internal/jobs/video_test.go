package jobs

import (
	"bytes"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

func TestVideoSubmitPollDownload(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Minute, RunTime: 2 * time.Minute, ContentBytes: 100 << 10}}})
	r := h.submit("web", videoBody)
	v := r.object(t)
	if v.Status != "queued" || v.Model != "video" || len(v.ID) != len("video_")+32 {
		t.Fatalf("submit = %s: want a queued job of alias video under the gateway's id", r.body)
	}
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "queued" || got.ID != v.ID {
		t.Fatalf("poll = %+v, want queued", got)
	}
	if r := h.get("web", "/v1/videos/"+v.ID+"/content"); r.status != http.StatusBadRequest || r.code() != "video_not_ready" {
		t.Errorf("content before completion: %d %s", r.status, r.body)
	}
	h.clk.Advance(90 * time.Second)
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "in_progress" {
		t.Fatalf("poll = %+v, want in_progress", got)
	}
	h.clk.Advance(2 * time.Minute)
	if got := h.get("web", "/v1/videos/"+v.ID).object(t); got.Status != "completed" {
		t.Fatalf("poll = %+v, want completed", got)
	}
	c := h.get("web", "/v1/videos/"+v.ID+"/content")
	if c.status != http.StatusOK || len(c.body) != 100<<10 || c.header.Get("Content-Type") != "video/mp4" {
		t.Fatalf("content: %d, %d bytes, %q", c.status, len(c.body), c.header.Get("Content-Type"))
	}
	st := h.sims[0].Stats()
	if st.JobsCreated != 1 || st.JobsCompleted != 1 || st.BilledSeconds != 8 {
		t.Errorf("sim stats = %+v, want one 8 s job billed", st)
	}
	reserved, settled := h.costs()
	// 8 s at 0.1 a second, plus 0.5 a job.
	if len(reserved) != 1 || math.Abs(reserved[0]-1.3) > 1e-9 || len(settled) != 1 || math.Abs(settled[0]-1.3) > 1e-9 {
		t.Errorf("reserved %v, settled %v: want 1.3 reserved at submit and settled at completion", reserved, settled)
	}
	list := h.get("web", "/v1/videos")
	if list.status != http.StatusOK || !bytes.Contains(list.body, []byte(v.ID)) {
		t.Errorf("list = %d %s", list.status, list.body)
	}
	if r := h.do(t.Context(), http.MethodDelete, "/v1/videos/"+v.ID, "web", ""); r.status != http.StatusOK {
		t.Errorf("delete = %d %s", r.status, r.body)
	}
	if r := h.get("web", "/v1/videos/"+v.ID); r.status != http.StatusNotFound {
		t.Errorf("poll after delete = %d, want 404", r.status)
	}
	if s := h.jobs.Status()[0]; s.InFlight != 0 {
		t.Errorf("status %+v: the completed job still holds a slot", s)
	}
}
