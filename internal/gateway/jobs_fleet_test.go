package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/sim"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Two replicas sharing state answer for each other's jobs: a video
// submitted on A is found on B by the same Idempotency-Key (no second
// submit upstream), polled on B once A saw it complete, and downloaded on
// B; a delete asked of B is a 409 naming the replica that can, and
// another client still gets a 404. With state: memory, B knows nothing of
// A's job.
func TestReplicasShareJobs(t *testing.T) {
	simSrv, err := sim.New(sim.Config{Name: "studio", Jobs: sim.Jobs{ContentBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	var submits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/videos") {
			submits.Add(1)
		}
		simSrv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { up.Close(); simSrv.Close() })
	cfg := `
clients:
  - {name: studio, key: ks}
  - {name: other, key: ko}
providers:
  p: {type: openai, base_url: "` + up.URL + `/v1", keys: [pk]}
models:
  - name: chat
    targets: [{provider: p, model: m}]
jobs:
  - name: video
    poll_interval: 24h
    targets: [{provider: p, model: sora-2}]
`
	for _, state := range []string{"redis", "memory"} {
		t.Run(state, func(t *testing.T) {
			c := cfg
			if state == "redis" {
				c = "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms, timeout: 2s}\n" + cfg
			}
			_, ga := gateway(t, nil, c)
			_, gb := gateway(t, nil, c)
			client := func(base, key string) openai.Client {
				return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
			}
			a, b := client(ga.URL, "ks"), client(gb.URL, "ks")
			ctx := t.Context()
			keyed := option.WithHeader("Idempotency-Key", "job-"+state)
			v, err := a.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "a fox"}, keyed)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := a.Videos.Get(ctx, v.ID); err != nil || got.Status != openai.VideoStatusCompleted {
				t.Fatalf("A's poll: %+v %v", got, err)
			}
			before := submits.Load()
			if state == "memory" {
				if _, err := b.Videos.Get(ctx, v.ID); !isStatus(err, http.StatusNotFound) {
					t.Errorf("B with its own state: %v, want a 404", err)
				}
				return
			}
			eventually(t, "B to see the job A completed", func() bool {
				got, err := b.Videos.Get(ctx, v.ID)
				return err == nil && got.Status == openai.VideoStatusCompleted
			})
			again, err := b.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "a fox"}, keyed)
			if err != nil || again.ID != v.ID || submits.Load() != before {
				t.Errorf("the key resent to B: %+v %v, %d new submits; want A's job and none", again, err, submits.Load()-before)
			}
			resp, err := b.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != 64<<10 {
				t.Errorf("downloaded %d bytes from B", n)
			}
			if _, err := b.Videos.Delete(ctx, v.ID); !isStatus(err, http.StatusConflict) {
				t.Errorf("a delete asked of B: %v, want a 409", err)
			}
			other := client(gb.URL, "ko")
			if _, err := other.Videos.Get(ctx, v.ID); !isStatus(err, http.StatusNotFound) {
				t.Errorf("another client on B: %v, want a 404", err)
			}
			if _, err := a.Videos.Delete(ctx, v.ID); err != nil {
				t.Errorf("a delete asked of A: %v", err)
			}
			eventually(t, "B to see the delete", func() bool {
				_, err := b.Videos.Get(ctx, v.ID)
				return isStatus(err, http.StatusNotFound)
			})
		})
	}
}
