package batch

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeRoom is max bytes of storage; it counts the writes it refused.
type fakeRoom struct {
	mu      sync.Mutex
	max     int64
	used    int64
	refused int
}

func (f *fakeRoom) Grow(total int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if total > f.used && total > f.max {
		f.refused++
		return false
	}
	f.used = total
	return true
}

func (f *fakeRoom) Left() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.max - f.used
}

// evenLines returns n chat lines whose results are all one length: the
// custom_id is padded as the line number grows.
func evenLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		id := strings.Repeat("x", 4-len(itoa(i))) + itoa(i)
		fmt.Fprintf(&b, `{"custom_id":%q,"method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi"}]}}`+"\n", id)
	}
	return b.String()
}

// countingHandler is h, counting the requests it serves.
func countingHandler(h http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

// resultSize is the length of one result of evenLines through okHandler.
func resultSize(t *testing.T) int64 {
	t.Helper()
	p := paths(t)
	run(t, p, evenLines(1), Options{Handler: okHandler("0.001")})
	fi, err := os.Stat(p.Out)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// With room for 5½ results and 8 lines at a time, the batch sends 5
// lines, writes all 5 and stops for storage: no answer is paid for and
// then dropped, and the files never pass the room.
func TestRoomStopsTheBatchBeforeAnAnswerIsLost(t *testing.T) {
	size := resultSize(t)
	room := &fakeRoom{max: 5*size + size/2}
	var served atomic.Int64
	p := paths(t)
	s := run(t, p, evenLines(40), Options{Handler: countingHandler(okHandler("0.001"), &served), Concurrency: 8, Room: room})
	out, _ := os.ReadFile(p.Out)
	if s.Stopped != StoppedStorage || s.OK != 5 || served.Load() != 5 || room.refused != 0 {
		t.Fatalf("stopped %q, %d ok, %d served, %d writes refused; want storage_limit, 5, 5, 0", s.Stopped, s.OK, served.Load(), room.refused)
	}
	if int64(len(out)) != room.used || room.used > room.max || bytes.Count(out, []byte("\n")) != 5 {
		t.Fatalf("output %d bytes, %d lines; the room counts %d of %d", len(out), bytes.Count(out, []byte("\n")), room.used, room.max)
	}
}

// A result larger than any before it, with no room for it, is not
// written: the batch stops, and what it wrote is kept and counted.
func TestRoomRefusesAResultTooLarge(t *testing.T) {
	size := resultSize(t)
	room := &fakeRoom{max: 4 * size}
	ok := okHandler("0.001")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := new(bytes.Buffer)
		body.ReadFrom(r.Body)
		if !strings.Contains(body.String(), "big") {
			ok(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, strings.Repeat("z", int(5*size)))
	})
	input := evenLines(2) + `{"custom_id":"xbig","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"big"}]}}` + "\n" + evenLines(5)[len(evenLines(2)):]
	p := paths(t)
	s := run(t, p, input, Options{Handler: h, Concurrency: 1, Room: room})
	out, _ := os.ReadFile(p.Out)
	if s.Stopped != StoppedStorage || s.OK != 2 || room.refused != 1 || int64(len(out)) != room.used || room.used != 2*size {
		t.Fatalf("stopped %q (%s), %d ok, %d refused, output %d bytes, room %d; want storage_limit, 2 ok, 1 refused, %d bytes",
			s.Stopped, s.Reason, s.OK, room.refused, len(out), room.used, 2*size)
	}
	// The refused line is not journaled: a later run with room sends it.
	s = run(t, p, input, Options{Handler: h, Concurrency: 1})
	if s.Stopped != "" || s.TotalOK != 6 || s.Skipped != 2 {
		t.Fatalf("rerun: %+v; want the 4 lines left answered", s)
	}
}

// A batch with no room at all sends nothing.
func TestNoRoomSendsNothing(t *testing.T) {
	var served atomic.Int64
	s := run(t, paths(t), evenLines(3), Options{Handler: countingHandler(okHandler("0"), &served), Room: &fakeRoom{}})
	if s.Stopped != StoppedStorage || served.Load() != 0 {
		t.Fatalf("stopped %q, %d served; want storage_limit and none", s.Stopped, served.Load())
	}
}
