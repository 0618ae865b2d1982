package apierror

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	w := httptest.NewRecorder()
	Write(w, 429, "server_error", "queue_full", "", `a "quoted" <message>`)
	want := `{"error":{"message":"a \"quoted\" \u003cmessage\u003e","type":"server_error","param":null,"code":"queue_full"}}`
	if w.Code != 429 || w.Body.String() != want || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Length") != "111" {
		t.Fatalf("%d %s %v", w.Code, w.Body, w.Header())
	}
}

func TestRetryAfter(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "1", time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", time.Minute: "60"} {
		if got := RetryAfter(d); got != want {
			t.Errorf("RetryAfter(%v) = %s, want %s", d, got, want)
		}
	}
}
