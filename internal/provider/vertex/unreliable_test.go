package vertex

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A Vertex that never answers is left when the context ends; one that
// answers 200 with garbage is a 502, for either model family; a stream cut
// short is a read error, never [DONE].
func TestUnreliableVertex(t *testing.T) {
	ts := newTokenServer(t, 3600)
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	mode := make(chan string, 1)
	v := newFakeVertex(t, func(w http.ResponseWriter, r *http.Request) {
		switch <-mode {
		case "hang":
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "garbage":
			io.WriteString(w, "<html>oops</html>")
		case "cut":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`+"\n\n")
		case "cut-claude":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\"}}\n\n")
		}
	})
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})

	mode <- "hang"
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	if resp, err := u.Send(ctx, chat("gemini-2.5-flash", false)); !errors.Is(err, context.Canceled) {
		if resp != nil {
			resp.Body.Close()
		}
		t.Errorf("hung Vertex: got %v", err)
	}

	for _, model := range []string{"gemini-2.5-flash", "claude-sonnet-4-5@20250929"} {
		mode <- "garbage"
		resp, err := u.Send(context.Background(), chat(model, false))
		if err != nil {
			t.Fatal(err)
		}
		if body := readAll(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "bad_upstream_response") {
			t.Errorf("%s garbage: got %d %s", model, resp.StatusCode, body)
		}
	}

	for m, model := range map[string]string{"cut": "gemini-2.5-flash", "cut-claude": "claude-sonnet-4-5@20250929"} {
		mode <- m
		resp, err := u.Send(context.Background(), chat(model, true))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(string(b), "[DONE]") {
			t.Errorf("%s cut short: got %v after %s", model, err, b)
		}
	}
}
