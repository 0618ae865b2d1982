package gateway

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// The video and image aliases are models like the chat ones: listed by
// GET /v1/models and answered by GET /v1/models/{alias}, to the clients
// whose model list allows them only.
func TestJobAliasesAreModels(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	_, gw := gateway(t, clk, `
clients:
  - {name: all, key: ka}
  - {name: chatonly, key: kc, models: [chat]}
providers:
  p: {type: openai, base_url: "http://127.0.0.1:1/v1", keys: [pk]}
models:
  - name: chat
    targets: [{provider: p, model: m}]
jobs_dir: `+t.TempDir()+`
jobs:
  - name: sora-2
    targets: [{provider: p, model: sora-2}]
  - name: pictures
    api: images
    targets: [{provider: p, model: gpt-image-1}]
`)
	client := func(key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(gw.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	}
	ctx := t.Context()
	all, chatOnly := client("ka"), client("kc")

	ids := func(c openai.Client) []string {
		t.Helper()
		page, err := c.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range page.Data {
			got = append(got, m.ID)
		}
		slices.Sort(got)
		return got
	}
	if got, want := ids(all), []string{"chat", "pictures", "sora-2"}; !slices.Equal(got, want) {
		t.Errorf("GET /v1/models = %q; want %q", got, want)
	}
	if got, want := ids(chatOnly), []string{"chat"}; !slices.Equal(got, want) {
		t.Errorf("GET /v1/models for a chat-only client = %q; want %q", got, want)
	}
	for _, id := range []string{"sora-2", "pictures"} {
		if m, err := all.Models.Get(ctx, id); err != nil || m.ID != id {
			t.Errorf("GET /v1/models/%s = %+v, %v", id, m, err)
		}
		if _, err := chatOnly.Models.Get(ctx, id); !isStatus(err, http.StatusNotFound) {
			t.Errorf("GET /v1/models/%s for a client without it: %v; want a 404", id, err)
		}
	}
	if _, err := all.Models.Get(ctx, "sora-3"); !isStatus(err, http.StatusNotFound) {
		t.Errorf("GET /v1/models/sora-3: %v; want a 404", err)
	}
}
