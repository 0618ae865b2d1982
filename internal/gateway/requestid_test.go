package gateway

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// A new request id is req_ and 16 hex digits, different for every request,
// and costs one allocation; a client's own id of up to 128 bytes is kept,
// a longer one replaced.
func TestRequestID(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	form := regexp.MustCompile(`^req_[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := requestID(r)
		if !form.MatchString(id) || seen[id] {
			t.Fatalf("id %q: well formed %v, seen before %v", id, form.MatchString(id), seen[id])
		}
		seen[id] = true
	}
	if n := testing.AllocsPerRun(100, func() { requestID(r) }); n > 1 {
		t.Errorf("a new id: %.0f allocations", n)
	}
	r.Header.Set("X-Request-Id", "client-7")
	if id := requestID(r); id != "client-7" {
		t.Errorf("the client's id: %q", id)
	}
	r.Header.Set("X-Request-Id", strings.Repeat("x", 129))
	if id := requestID(r); !form.MatchString(id) {
		t.Errorf("a 129-byte client id: %q", id)
	}
}
