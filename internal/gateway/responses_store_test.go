package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// The stored responses' lifecycle through the gateway's handler, with
// openai-go: a directory store outlives its Server, input items are
// listed, cancel is refused in OpenAI's shape, store: false keeps nothing.

const storeLadder = `
clients:
  - {name: a, key: key-a}
  - {name: b, key: key-b}
responses: {dir: %q}
providers:
  up: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - name: smart
    targets: [{provider: up, model: m}]
`

// A response kept in responses.dir is found by a new Server on the same
// directory (a restart): read back, listed, and continued with
// previous_response_id, its conversation reaching the target.
func TestStoredResponsesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	up := newUpstream(t, chatOK("up"))
	cfg := fmt.Sprintf(storeLadder, dir, up.URL)
	srv, gw := start(t, Options{}, cfg)
	c := newClient(gw.URL, option.WithAPIKey("key-a"))
	first, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("remember: blue")})
	if err != nil {
		t.Fatal(err)
	}
	gw.Close()
	srv.Close()

	_, gw2 := start(t, Options{}, cfg)
	c2 := newClient(gw2.URL, option.WithAPIKey("key-a"))
	got, err := c2.Responses.Get(t.Context(), first.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != first.ID || got.OutputText() != "hello from up" {
		t.Fatalf("after the restart: %v %v", got, err)
	}
	other := newClient(gw2.URL, option.WithAPIKey("key-b"))
	if _, err := other.Responses.Get(t.Context(), first.ID, responses.ResponseGetParams{}); !isStatus(err, 404) {
		t.Errorf("another client read it after the restart: %v", err)
	}
	second, err := c2.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("which colour?"),
		PreviousResponseID: openai.String(first.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if sent := up.body(1); !strings.Contains(sent, "remember: blue") || !strings.Contains(sent, "hello from up") || !strings.Contains(sent, "which colour?") {
		t.Errorf("the continued conversation sent %s", sent)
	}
	page, err := c2.Responses.InputItems.List(t.Context(), second.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, it := range page.Data {
		if it.ID == "" {
			t.Errorf("an input item without an id: %s", it.RawJSON())
		}
		texts = append(texts, itemText(t, it)...)
	}
	if want := "user:remember: blue|assistant:hello from up|user:which colour?"; strings.Join(texts, "|") != want {
		t.Errorf("input items %q; want %q", strings.Join(texts, "|"), want)
	}
	newest, err := c2.Responses.InputItems.List(t.Context(), second.ID, responses.InputItemListParams{Limit: openai.Int(1)})
	if err != nil || len(newest.Data) != 1 || itemText(t, newest.Data[0])[0] != "user:which colour?" || !newest.HasMore {
		t.Errorf("newest first, one: %+v %v", newest, err)
	}
}

// itemText is an input item's role and text parts, "role:text" each.
func itemText(t *testing.T, it responses.ResponseItemUnion) []string {
	var m struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(it.RawJSON()), &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range m.Content {
		out = append(out, m.Role+":"+p.Text)
	}
	return out
}

// Cancel: the gateway runs no background responses, so cancelling one of
// the client's own is a 400 in OpenAI's shape saying so; an unknown id,
// or another client's, is a 404 as for GET.
func TestCancelAResponse(t *testing.T) {
	up := newUpstream(t, chatOK("up"))
	_, gw := start(t, Options{}, fmt.Sprintf(storeLadder, t.TempDir(), up.URL))
	c := newClient(gw.URL, option.WithAPIKey("key-a"))
	r, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Responses.Cancel(t.Context(), r.ID)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type != "invalid_request_error" || !strings.Contains(apiErr.Message, "background") {
		t.Errorf("cancel of a finished response: %v", err)
	}
	for _, tc := range []struct {
		key, id string
	}{{"key-b", r.ID}, {"key-a", "resp_0123"}, {"key-a", "../../etc/passwd"}} {
		cc := newClient(gw.URL, option.WithAPIKey(tc.key))
		_, err := cc.Responses.Cancel(t.Context(), tc.id)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "not_found" {
			t.Errorf("cancel of %s by %s: %v; want 404", tc.id, tc.key, err)
		}
	}
	req, _ := http.NewRequest("POST", gw.URL+"/v1/responses/"+r.ID+"/cancel", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("cancel without a key: %d", resp.StatusCode)
	}
	if got, err := c.Responses.Get(t.Context(), r.ID, responses.ResponseGetParams{}); err != nil || got.Status != "completed" {
		t.Errorf("after the refused cancel: %v %v", got, err)
	}
}

// store: false keeps nothing: GET is a 404 and a later turn cannot
// continue it; streamed or not.
func TestStoreFalseKeepsNothing(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Header.Get("Accept") == "text/event-stream" {
			streamOf([]string{"hello"}, nil)(w, r, n)
			return
		}
		chatOK("up")(w, r, n)
	})
	_, gw := start(t, Options{}, fmt.Sprintf(storeLadder, t.TempDir(), up.URL))
	c := newClient(gw.URL, option.WithAPIKey("key-a"))
	for _, stream := range []bool{false, true} {
		r := respond(t, c, stream, responses.ResponseNewParams{Model: "smart", Input: textInput("hi"), Store: openai.Bool(false)})
		if !strings.Contains(r.RawJSON(), `"store":false`) || r.OutputText() == "" {
			t.Errorf("stream %v: %s", stream, r.RawJSON())
		}
		if _, err := c.Responses.Get(t.Context(), r.ID, responses.ResponseGetParams{}); !isStatus(err, 404) {
			t.Errorf("stream %v: GET of a store: false response: %v", stream, err)
		}
		_, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("again"), PreviousResponseID: openai.String(r.ID)})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "previous_response_not_found" {
			t.Errorf("stream %v: continuing it: %v", stream, err)
		}
	}
}
