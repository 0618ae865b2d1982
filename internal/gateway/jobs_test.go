package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/sim"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// The job aliases are served by the gateway for its own clients: a video
// submitted with openai-go by one client is polled and downloaded by it,
// counted against its budget when it completes, refused to a client whose
// model list lacks the alias, invisible (404) to another client, and its
// target's breakers and cap are in /fusebox/status.
func TestVideoThroughTheGateway(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	simSrv, err := sim.New(sim.Config{Clock: clk, Name: "studio", Jobs: sim.Jobs{QueueTime: time.Minute, ContentBytes: 100 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(simSrv)
	t.Cleanup(func() { up.Close(); simSrv.Close() })
	s, gw := gateway(t, clk, `
admin_token: adm
clients:
  - {name: studio, key: ks, models: [video], budget: {daily: 10}}
  - {name: other, key: ko}
  - {name: chatonly, key: kc, models: [chat]}
providers:
  p: {type: openai, base_url: "`+up.URL+`/v1", keys: [pk]}
models:
  - name: chat
    targets: [{provider: p, model: m}]
jobs_dir: `+t.TempDir()+`
jobs:
  - name: video
    poll_interval: 24h
    targets:
      - {provider: p, model: sora-2, price: {per_second: 0.1, per_job: 0.5}}
`)
	client := func(key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(gw.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	}
	ctx := t.Context()
	studio := client("ks")
	v, err := studio.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "a fox", Seconds: openai.VideoSeconds12})
	if err != nil {
		t.Fatal(err)
	}
	other, chatOnly, wrong := client("ko"), client("kc"), client("nope")
	if _, err := other.Videos.Get(ctx, v.ID); !isStatus(err, http.StatusNotFound) {
		t.Errorf("another client's poll: %v, want a 404", err)
	}
	if _, err := chatOnly.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "x"}); !isStatus(err, http.StatusForbidden) {
		t.Errorf("a client without the alias: %v, want a 403", err)
	}
	if _, err := wrong.Videos.New(ctx, openai.VideoNewParams{Model: "video", Prompt: "x"}); !isStatus(err, http.StatusUnauthorized) {
		t.Errorf("a wrong key: %v, want a 401", err)
	}
	clk.Advance(2 * time.Minute)
	got, err := studio.Videos.Get(ctx, v.ID)
	if err != nil || got.Status != openai.VideoStatusCompleted {
		t.Fatalf("poll = %+v, %v", got, err)
	}
	resp, err := studio.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 100<<10 {
		t.Errorf("downloaded %d bytes", n)
	}
	st := s.state()
	day, _ := st.clientNamed("studio").budget.left()
	if want := 10 - (12*0.1 + 0.5); math.Abs(day-want) > 1e-9 {
		t.Errorf("studio's budget left %v, want %v", day, want)
	}
	req, _ := http.NewRequest("GET", gw.URL+"/fusebox/status", nil)
	req.Header.Set("Authorization", "Bearer adm")
	sr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Body.Close()
	var doc struct {
		Jobs []statusJobTarget `json:"jobs"`
	}
	json.NewDecoder(sr.Body).Decode(&doc)
	if len(doc.Jobs) != 1 || doc.Jobs[0].Name != "p/sora-2" || doc.Jobs[0].Submit != "closed" {
		t.Errorf("status jobs = %+v", doc.Jobs)
	}
}

// isStatus reports whether err is an API error with the status code.
func isStatus(err error, code int) bool {
	var apiErr *openai.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == code
}
