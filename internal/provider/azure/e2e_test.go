package azure

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// newSim starts the simulated provider, which serves Azure OpenAI's
// deployments and v1 paths and accepts api-key k1.
func newSim(t *testing.T) *httptest.Server {
	s, err := sim.New(sim.Config{Azure: sim.Azure{Keys: []string{"k1"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); srv.Close() })
	return srv
}

func send(t *testing.T, up *Upstream, c *router.Call) (*http.Response, string) {
	t.Helper()
	resp, err := up.Send(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// Against a simulated Azure OpenAI resource, each operation is answered in
// OpenAI's format, on the deployments API and the v1 API alike, and a
// refused key comes back as Azure refuses it.
func TestE2EAgainstTheSimulatedResource(t *testing.T) {
	srv := newSim(t)
	chat := `{"model":"gpt-4o-prod","messages":[{"role":"user","content":"hello"}]}`
	for _, version := range []string{"", V1} {
		up := newUpstream(t, Config{Endpoint: srv.URL, APIVersion: version, Responses: version == V1})
		resp, body := send(t, up, &router.Call{Path: "/chat/completions", Model: "gpt-4o-prod", Key: "k1", Body: []byte(chat)})
		var answer struct {
			Object  string
			Choices []struct{ Message struct{ Content string } }
		}
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &answer) != nil || answer.Object != "chat.completion" ||
			len(answer.Choices) != 1 || answer.Choices[0].Message.Content == "" {
			t.Errorf("%q chat: %d %s", version, resp.StatusCode, body)
		}
		stream := `{"model":"gpt-4o-prod","stream":true,"messages":[{"role":"user","content":"hello"}]}`
		resp, body = send(t, up, &router.Call{Path: "/chat/completions", Model: "gpt-4o-prod", Key: "k1", Body: []byte(stream), Stream: true})
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
			!strings.Contains(body, "chat.completion.chunk") || !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") {
			t.Errorf("%q stream: %d %s", version, resp.StatusCode, body)
		}
		resp, body = send(t, up, &router.Call{Path: "/embeddings", Model: "emb", Key: "k1", Body: []byte(`{"model":"emb","input":"hi"}`)})
		if resp.StatusCode != 200 || !strings.Contains(body, `"embedding"`) {
			t.Errorf("%q embeddings: %d %.200s", version, resp.StatusCode, body)
		}
		resp, body = send(t, up, &router.Call{Path: "/chat/completions", Model: "gpt-4o-prod", Key: "wrong", Body: []byte(chat)})
		if resp.StatusCode != 401 || !strings.Contains(body, "invalid subscription key") {
			t.Errorf("%q a wrong key: %d %s", version, resp.StatusCode, body)
		}
	}
	up := newUpstream(t, Config{Endpoint: srv.URL, APIVersion: V1, Responses: true})
	resp, body := send(t, up, &router.Call{Path: "/responses", Model: "gpt-4.1", Key: "k1", Body: []byte(`{"model":"gpt-4.1","input":"hello"}`)})
	if resp.StatusCode != 200 || !strings.Contains(body, `"object":"response"`) {
		t.Errorf("responses: %d %.300s", resp.StatusCode, body)
	}
}
