package jobs

import (
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

const imagesJobs = "  - name: draw\n    api: images\n    targets:\n" +
	"      - {provider: a, model: img-a, price: {per_image: 0.04}}\n      - {provider: b, model: img-b, price: {per_image: 0.02}}\n"

// TestJobImagesFailOver: an images request that meets an outage or a
// capacity refusal goes to the next target and is priced per image there.
func TestJobImagesFailOver(t *testing.T) {
	for _, f := range []sim.Fault{{Kind: sim.ErrorStorm, Status: 502}, {Kind: sim.Capacity}, {Kind: sim.Reset}} {
		t.Run(string(f.Kind), func(t *testing.T) {
			h := newHarness(t, setup{targets: 2, jobs: imagesJobs})
			h.sims[0].SetFaults([]sim.Fault{f})
			r := h.do(t.Context(), http.MethodPost, "/v1/images/generations", "web", `{"model":"draw","prompt":"a cat","n":3}`)
			if r.status != http.StatusOK || strings.Count(string(r.body), "b64_json") != 3 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if a, b := h.sims[0].Stats().Images, h.sims[1].Stats().Images; a != 0 || b != 3 {
				t.Errorf("images a %d, b %d", a, b)
			}
			// The handler settles once the answer has gone out.
			waitFor(t, "the settlement", func() bool { _, s := h.costs(); return len(s) > 0 })
			reserved, settled := h.costs()
			if len(reserved) != 1 || math.Abs(reserved[0]-0.12) > 1e-9 || len(settled) != 1 || math.Abs(settled[0]-0.06) > 1e-9 {
				t.Errorf("reserved %v, settled %v: want 3 × 0.04 reserved, 3 × 0.02 settled", reserved, settled)
			}
		})
	}
}

// TestJobImagesClientErrorStops: the caller's own error goes back as it
// is, without failover, and costs nothing.
func TestJobImagesClientErrorStops(t *testing.T) {
	h := newHarness(t, setup{targets: 2, jobs: imagesJobs})
	r := h.do(t.Context(), http.MethodPost, "/v1/images/generations", "web", `{"model":"draw","prompt":""}`)
	if r.status != http.StatusBadRequest {
		t.Fatalf("%d %s, want the provider's 400", r.status, r.body)
	}
	if n := h.sims[1].Stats().APIs["images"]; n != 0 {
		t.Errorf("the second target got %d calls", n)
	}
	if r := h.do(t.Context(), http.MethodPost, "/v1/videos", "web", `{"model":"draw","prompt":"x"}`); r.status != http.StatusNotFound {
		t.Errorf("an images alias on /v1/videos: %d", r.status)
	}
}
