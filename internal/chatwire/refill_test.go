package chatwire

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// refiller yields its events one per step, then its error.
type refiller struct {
	Refill
	events []string
	end    error
	steps  int
}

func (r *refiller) step() {
	r.steps++
	if len(r.events) == 0 {
		r.Err = r.end
		return
	}
	r.Out = append(r.Out, r.events[0]...)
	r.events = r.events[1:]
}

func (r *refiller) Read(p []byte) (int, error) { return r.Pull(p, r.step) }

// Every byte is read, through a buffer smaller than an event, empty steps
// included; the error comes once the bytes are drained, and stays; no
// step runs while bytes are left.
func TestPullDrainsThenFails(t *testing.T) {
	cut := errors.New("cut")
	r := &refiller{events: []string{"abc", "", "defgh"}, end: cut}
	var got []byte
	p := make([]byte, 2)
	for {
		n, err := r.Read(p)
		got = append(got, p[:n]...)
		if err != nil {
			if err != cut {
				t.Fatalf("error %v, want cut", err)
			}
			break
		}
		if n == 0 {
			t.Fatal("a read of nothing without an error")
		}
	}
	if string(got) != "abcdefgh" {
		t.Errorf("read %q, want abcdefgh", got)
	}
	if r.steps != 4 {
		t.Errorf("%d steps, want 4 (three events and the end)", r.steps)
	}
	if n, err := r.Read(p); n != 0 || err != cut || r.steps != 4 {
		t.Errorf("after the end: %d, %v, %d steps", n, err, r.steps)
	}
	r2 := &refiller{events: []string{"x"}, end: io.EOF}
	if b, err := io.ReadAll(r2); string(b) != "x" || err != nil {
		t.Errorf("ReadAll: %q, %v", b, err)
	}
}

// A streamed answer has the translator's body, an unknown length, no
// encoding of the old body's, and the event stream type; other headers
// stay.
func TestStreamed(t *testing.T) {
	resp := &http.Response{ContentLength: 42, Header: http.Header{
		"Content-Length": {"42"}, "Content-Encoding": {"gzip"},
		"Content-Type": {"application/json"}, "X-Request-Id": {"r"},
	}}
	body := io.NopCloser(strings.NewReader("data: x\n\n"))
	if got := Streamed(resp, body); got != resp {
		t.Fatal("Streamed returned another response")
	}
	if resp.Body != body || resp.ContentLength != -1 {
		t.Errorf("body %v, length %d", resp.Body == body, resp.ContentLength)
	}
	want := http.Header{"Content-Type": {"text/event-stream"}, "X-Request-Id": {"r"}}
	if !reflect.DeepEqual(resp.Header, want) {
		t.Errorf("headers %v, want %v", resp.Header, want)
	}
}
