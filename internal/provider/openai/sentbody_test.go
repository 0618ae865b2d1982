package openai

import (
	"io"
	"net/http"
	"testing"
)

// A call's body is sent whole, can be had again while the request may be
// resent (a reused connection the server closed), and not after: then
// neither the request nor its body holds the bytes.
func TestSentBodyLetsGo(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/chat/completions", nil)
	body := []byte(`{"model":"m","messages":[]}`)
	r := newSentBody(req, body)
	if req.ContentLength != int64(len(body)) {
		t.Fatalf("ContentLength %d", req.ContentLength)
	}
	if got, _ := io.ReadAll(req.Body); string(got) != string(body) {
		t.Fatalf("sent %q", got)
	}
	if req.Body.(*sentBody).b != nil {
		t.Error("the body kept its bytes after its end")
	}
	again, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(again); string(got) != string(body) {
		t.Fatalf("resent %q", got)
	}
	r.spend()
	if _, err := req.GetBody(); err == nil {
		t.Error("GetBody after the answer gave the body again")
	}
	empty, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", nil)
	newSentBody(empty, nil)
	if empty.Body != http.NoBody || empty.GetBody != nil || empty.ContentLength != 0 {
		t.Errorf("an empty body: %v %v %d", empty.Body, empty.GetBody != nil, empty.ContentLength)
	}
}
