package jobs

import (
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// TestVideoWithOpenAIClient: the official SDK, which submits
// multipart/form-data, drives the whole job through the gateway.
func TestVideoWithOpenAIClient(t *testing.T) {
	h := newHarness(t, setup{sim: sim.Config{Jobs: sim.Jobs{QueueTime: time.Minute, ContentBytes: 300 << 10}}})
	c := openai.NewClient(option.WithBaseURL(h.gw.URL+"/v1/"), option.WithAPIKey("web"), option.WithMaxRetries(0),
		option.WithHTTPClient(h.gw.Client()))
	ctx := t.Context()
	v, err := c.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "a fox", Seconds: openai.VideoSeconds12})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != openai.VideoStatusQueued || v.Model != "video" {
		t.Fatalf("new = %+v", v)
	}
	if jobs := h.sims[0].Jobs(); len(jobs) != 1 || jobs[0].Model != "sora-a" || jobs[0].Seconds != 12 {
		t.Fatalf("sim jobs %+v: want the SDK's multipart submit sent with the target's model", jobs)
	}
	h.clk.Advance(2 * time.Minute)
	got, err := c.Videos.Get(ctx, v.ID)
	if err != nil || got.Status != openai.VideoStatusCompleted {
		t.Fatalf("get = %+v, %v", got, err)
	}
	resp, err := c.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || n != 300<<10 {
		t.Errorf("download: %d, %d bytes", resp.StatusCode, n)
	}
	page, err := c.Videos.List(ctx, openai.VideoListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != v.ID {
		t.Errorf("list = %+v, %v", page, err)
	}
	if d, err := c.Videos.Delete(ctx, v.ID); err != nil || !d.Deleted {
		t.Errorf("delete = %+v, %v", d, err)
	}
	if _, err := c.Videos.Get(ctx, v.ID); err == nil {
		t.Error("get after delete succeeded")
	}
	_, settled := h.costs()
	if len(settled) != 1 || math.Abs(settled[0]-1.7) > 1e-9 {
		t.Errorf("settled %v, want 12 s × 0.1 + 0.5", settled)
	}
}
