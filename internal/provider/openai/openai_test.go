package openai

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
)

func TestSendShapesTheRequest(t *testing.T) {
	var got *http.Request
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, body = r, string(b)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		auth, header, want string
	}{
		{"", "Authorization", "Bearer k1"},
		{"api-key", "Api-Key", "k1"},
	} {
		up, err := New(Config{BaseURL: srv.URL + "/openai/v1/", Auth: tc.auth, Header: http.Header{"Openai-Organization": {"org-1"}}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := up.Send(t.Context(), &router.Call{Path: "/chat/completions", Key: "k1", Body: []byte(`{"model":"m"}`), Stream: true, IdempotencyKey: "idem-0"})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch {
		case got.URL.Path != "/openai/v1/chat/completions":
			t.Errorf("path %s", got.URL.Path)
		case got.Header.Get(tc.header) != tc.want:
			t.Errorf("%s = %q; want %q", tc.header, got.Header.Get(tc.header), tc.want)
		case got.Header.Get("Idempotency-Key") != "idem-0" || got.Header.Get("Accept") != "text/event-stream":
			t.Errorf("headers %v", got.Header)
		case got.Header.Get("Openai-Organization") != "org-1" || body != `{"model":"m"}`:
			t.Errorf("extra header or body lost: %v %s", got.Header, body)
		}
		up.CloseIdle()
	}
	if _, err := New(Config{BaseURL: "api.openai.com"}); err == nil {
		t.Fatal("a base URL without a scheme was accepted")
	}
}
