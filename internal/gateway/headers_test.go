package gateway

import (
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
)

// The answer's headers share the exchange's array: adding to one copies it,
// never overwriting the next, and past the array's end they are set as usual.
func TestSetHeaderSharesNoValue(t *testing.T) {
	rw := httptest.NewRecorder()
	x := &exchange{w: &recorder{ResponseWriter: rw}}
	x.setHeader("X-A", "a")
	x.setHeader("X-B", "b")
	rw.Header().Add("X-A", "a2")
	if got := rw.Header()["X-B"]; !slices.Equal(got, []string{"b"}) {
		t.Fatalf("X-B = %q after an Add to X-A, want [b]", got)
	}
	if got := rw.Header()["X-A"]; !slices.Equal(got, []string{"a", "a2"}) {
		t.Fatalf("X-A = %q, want [a a2]", got)
	}
	for i := range 2 * len(x.hv) {
		x.setHeader("X-N"+strconv.Itoa(i), strconv.Itoa(i))
	}
	for i := range 2 * len(x.hv) {
		if got := rw.Header().Get("X-N" + strconv.Itoa(i)); got != strconv.Itoa(i) {
			t.Fatalf("X-N%d = %q, want %d", i, got, i)
		}
	}
	if got := rw.Header().Get("X-B"); got != "b" {
		t.Fatalf("X-B = %q at the end, want b", got)
	}
}
