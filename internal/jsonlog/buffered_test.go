package jsonlog

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is an underlying writer that keeps each Write as one string. Its
// lock is only for reading writes from the test while Buffered may write.
type recorder struct {
	mu     sync.Mutex
	writes []string
	err    error // returned by every Write while set
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}

// step is one action on a Buffered and the underlying writes expected
// after it, counted from the start.
type step struct {
	write   string        // Write this, if not empty
	advance time.Duration // then move the clock this far
	flush   bool          // then Flush
	close   bool          // then Close
	want    []string
	pending int // flush timers pending on the clock afterwards
}

func runSteps(t *testing.T, s BufferedSettings, steps []step) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	s.Clock = clk
	var w recorder
	b := NewBuffered(&w, s)
	for i, st := range steps {
		if st.write != "" {
			if n, err := b.Write([]byte(st.write)); n != len(st.write) || err != nil {
				t.Fatalf("step %d: Write = %d, %v; want %d, nil", i, n, err, len(st.write))
			}
		}
		clk.Advance(st.advance)
		if st.flush {
			if err := b.Flush(); err != nil {
				t.Fatalf("step %d: Flush = %v", i, err)
			}
		}
		if st.close {
			if err := b.Close(); err != nil {
				t.Fatalf("step %d: Close = %v", i, err)
			}
		}
		if got := w.got(); !slices.Equal(got, st.want) && (len(got) != 0 || len(st.want) != 0) {
			t.Fatalf("step %d: writes = %q; want %q", i, got, st.want)
		}
		if got := clk.Pending(); got != st.pending {
			t.Fatalf("step %d: %d timers pending; want %d", i, got, st.pending)
		}
	}
}

func TestBuffered(t *testing.T) {
	const every = 100 * time.Millisecond
	tests := []struct {
		name  string
		s     BufferedSettings
		steps []step
	}{
		{"a line waits FlushEvery", BufferedSettings{}, []step{
			{pending: 0},
			{write: "a\n", pending: 1},
			{advance: every - 1, pending: 1},
			{advance: 1, want: []string{"a\n"}},
			{advance: time.Hour, want: []string{"a\n"}}, // idle: no timer
		}},
		{"lines within FlushEvery go out in one write", BufferedSettings{FlushEvery: time.Second}, []step{
			{write: "a\n", advance: 300 * time.Millisecond, pending: 1},
			{write: "b\n", advance: 300 * time.Millisecond, pending: 1},
			{write: "c\n", advance: 399 * time.Millisecond, pending: 1},
			{advance: time.Millisecond, want: []string{"a\nb\nc\n"}},
			{write: "d\n", pending: 1, want: []string{"a\nb\nc\n"}},
			{advance: time.Second, want: []string{"a\nb\nc\n", "d\n"}},
		}},
		{"filling MaxBuffer exactly does not flush", BufferedSettings{MaxBuffer: 10}, []step{
			{write: "aaaa\n", pending: 1},
			{write: "bbbb\n", pending: 1},
			{advance: every, want: []string{"aaaa\nbbbb\n"}},
		}},
		{"overflowing MaxBuffer flushes first", BufferedSettings{MaxBuffer: 10}, []step{
			{write: "aaaa\n", advance: every / 2, pending: 1},
			{write: "bbbb\n", pending: 1},
			{write: "cc\n", pending: 1, want: []string{"aaaa\nbbbb\n"}},
			{advance: every - 1, pending: 1, want: []string{"aaaa\nbbbb\n"}}, // cc's own FlushEvery
			{advance: 1, want: []string{"aaaa\nbbbb\n", "cc\n"}},
		}},
		{"oversized line is written through in order", BufferedSettings{MaxBuffer: 10}, []step{
			{write: "a\n", pending: 1},
			{write: "0123456789abc\n", want: []string{"a\n", "0123456789abc\n"}},
			{write: "b\n", pending: 1, want: []string{"a\n", "0123456789abc\n"}},
			{advance: every, want: []string{"a\n", "0123456789abc\n", "b\n"}},
		}},
		{"oversized line into an empty buffer", BufferedSettings{MaxBuffer: 10}, []step{
			{write: "0123456789abc\n", want: []string{"0123456789abc\n"}},
		}},
		{"Flush writes at once and stops the timer", BufferedSettings{}, []step{
			{write: "a\n", pending: 1},
			{flush: true, want: []string{"a\n"}},
			{flush: true, want: []string{"a\n"}}, // nothing held: no empty write
		}},
		{"Close flushes, then writes go through", BufferedSettings{}, []step{
			{write: "a\n", pending: 1},
			{write: "b\n", close: true, want: []string{"a\nb\n"}},
			{write: "c\n", want: []string{"a\nb\n", "c\n"}},
			{close: true, want: []string{"a\nb\n", "c\n"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.s, tt.steps) })
	}
}

// Write must not keep p, whether it buffers it or writes it through.
func TestBufferedDoesNotRetain(t *testing.T) {
	var w recorder
	b := NewBuffered(&w, BufferedSettings{Clock: clocktest.New(time.Time{}), MaxBuffer: 10})
	big, small := []byte("0123456789abc\n"), []byte("a\n")
	b.Write(big) // goes through
	b.Write(small)
	small[0] = 'x'
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := w.got(), []string{"0123456789abc\n", "a\n"}; !slices.Equal(got, want) {
		t.Errorf("writes = %q; want %q", got, want)
	}
	if string(big) != "0123456789abc\n" {
		t.Errorf("caller's slice changed to %q", big)
	}
}

func TestBufferedErrors(t *testing.T) {
	boom := errors.New("boom")
	clk := clocktest.New(time.Time{})
	w := &recorder{err: boom}
	b := NewBuffered(w, BufferedSettings{Clock: clk, MaxBuffer: 4})

	// Errors from timer flushes, overflow flushes and write-through are
	// kept, never returned by Write.
	for _, line := range []string{"a\n", "b\n", "c\n", "toolong\n"} {
		if n, err := b.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", line, n, err, len(line))
		}
	}
	if err := b.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush = %v; want %v", err, boom)
	}
	if err := b.Flush(); err != nil {
		t.Fatalf("second Flush = %v; want nil, the error was reported", err)
	}
	b.Write([]byte("d\n"))
	clk.Advance(time.Second)
	if err := b.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close = %v; want %v from the timer's flush", err, boom)
	}
	// After Close, Write reports the underlying writer's result itself.
	if _, err := b.Write([]byte("e\n")); !errors.Is(err, boom) {
		t.Fatalf("Write after Close = %v; want %v", err, boom)
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

func TestBufferedShortWrite(t *testing.T) {
	b := NewBuffered(shortWriter{}, BufferedSettings{Clock: clocktest.New(time.Time{})})
	b.Write([]byte("abcd\n"))
	if err := b.Flush(); err == nil || !strings.Contains(err.Error(), "short write") {
		t.Fatalf("Flush = %v; want a short write error", err)
	}
}

// chunkLines checks that every write is whole lines and returns them.
func chunkLines(t *testing.T, writes []string) []string {
	t.Helper()
	var lines []string
	for _, w := range writes {
		if !strings.HasSuffix(w, "\n") {
			t.Fatalf("write does not end a line: %q", w)
		}
		lines = append(lines, strings.SplitAfter(w, "\n")...)
		lines = lines[:len(lines)-1] // the empty string after the last "\n"
	}
	return lines
}

// lineFor is the i-th line of writer g: 4 to about 300 bytes.
func lineFor(g, i int) string {
	return fmt.Sprintf("%d %d %s\n", g, i, strings.Repeat("x", (g*7919+i*31)%300))
}

// TestBufferedConcurrent has writers of lines of many sizes (some above
// MaxBuffer) race each other, Flush and the clock. Every line must arrive
// whole, once, and in its writer's order. The underlying writer has no lock:
// -race checks that Buffered never writes to it concurrently.
func TestBufferedConcurrent(t *testing.T) {
	const writers, perWriter = 8, 300
	clk := clocktest.New(time.Time{})
	var out chunkWriter
	b := NewBuffered(&out, BufferedSettings{Clock: clk, MaxBuffer: 256})
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				clk.Advance(10 * time.Millisecond)
				b.Flush()
			}
		}
	})
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				b.Write([]byte(lineFor(g, i)))
			}
		})
	}
	wg.Wait()
	close(stop)
	ticker.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	for _, line := range chunkLines(t, out.chunks) {
		var g, i int
		if _, err := fmt.Sscan(line, &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("bad line %q: %v", line, err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: got line %d; want %d", g, i, next[g])
		}
		if line != lineFor(g, i) {
			t.Fatalf("line mangled: %q", line)
		}
		next[g]++
	}
	for g, n := range next {
		if n != perWriter {
			t.Errorf("writer %d: %d lines arrived; want %d", g, n, perWriter)
		}
	}
}

// syncWriter signals each write on a channel, so a test can wait for the
// real clock's flush without sleeping.
type syncWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	s.wrote <- struct{}{}
	return len(p), nil
}

// TestBufferedRealClock runs the flush timer on the system clock; goleak in
// TestMain then checks its goroutine is gone.
func TestBufferedRealClock(t *testing.T) {
	w := &syncWriter{wrote: make(chan struct{}, 10)}
	b := NewBuffered(w, BufferedSettings{FlushEvery: time.Millisecond})
	b.Write([]byte("a\n"))
	b.Write([]byte("b\n"))
	<-w.wrote // the timer's flush
	b.Write([]byte("c\n"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if got := w.buf.String(); got != "a\nb\nc\n" {
		t.Errorf("got %q; want %q", got, "a\nb\nc\n")
	}
}
