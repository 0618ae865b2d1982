package sim

import (
	"context"
	"io"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// Draws have the configured median and p99.
func TestLatencyDistribution(t *testing.T) {
	s, err := New(Config{Seed: 5, Latency: Latency{Median: 200 * time.Millisecond, P99: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(s.cfg.Latency.firstByte(false, s.spreadLocked()))
	}
	slices.Sort(d)
	med, p99 := time.Duration(d[n/2]), time.Duration(d[n*99/100])
	if math.Abs(float64(med-200*time.Millisecond)) > float64(15*time.Millisecond) {
		t.Errorf("median %v, want about 200ms", med)
	}
	if math.Abs(float64(p99-2*time.Second)) > float64(250*time.Millisecond) {
		t.Errorf("p99 %v, want about 2s", p99)
	}
	if max := time.Duration(d[n-1]); max > 8*time.Second {
		t.Errorf("max %v, want at most 4×p99", max)
	}
}

// A non-streamed call waits its latency on the clock; a cancelled one
// returns at once.
func TestLatencyOnTheClock(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake, Latency: Latency{Median: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- serve(s, "POST", "/v1/embeddings", `{"model":"e","input":"x"}`).Code }()
	fake.WaitForTimers(1)
	fake.Advance(999 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("answered before its latency")
	default:
	}
	fake.Advance(time.Millisecond)
	if code := <-done; code != 200 {
		t.Errorf("status %d, want 200", code)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody(false))).WithContext(ctx))
		done <- rec.Code
	}()
	fake.WaitForTimers(1)
	cancel()
	<-done
	if st := s.Stats(); st.Outcomes[OutcomeCanceled] != 1 || fake.Pending() != 0 {
		t.Errorf("stats %+v, %d timers pending; want 1 canceled, none", st, fake.Pending())
	}
}

// A stream waits TTFB, then sends chunks at the token rate.
func TestStreamTiming(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake,
		Latency: Latency{Median: time.Second, TTFB: 300 * time.Millisecond, TokensPerSecond: 30},
		Output:  Output{Tokens: 9, ChunkTokens: 3}})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		s.ServeHTTP(newFlushRecorder(pw), httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody(true))))
		pw.Close()
	}()
	evs := eventChan(pr)
	fake.WaitForTimers(1)
	start := fake.Now()
	fake.Advance(300 * time.Millisecond) // TTFB: role chunk and first content chunk
	for _, want := range []string{"role", "content"} {
		if ev := <-evs; ev.err != nil {
			t.Fatalf("want a %s chunk, got %v", want, ev.err)
		}
	}
	for i := range 2 { // two more chunks, 100ms apart (3 tokens at 30/s)
		fake.WaitForTimers(1)
		fake.Advance(100 * time.Millisecond)
		if ev := <-evs; ev.err != nil {
			t.Fatalf("chunk %d: %v", i+2, ev.err)
		}
	}
	var rest []string
	for ev := range evs {
		if ev.err != nil {
			break
		}
		rest = append(rest, ev.data)
	}
	if len(rest) != 3 || rest[2] != "[DONE]" || fake.Now().Sub(start) != 500*time.Millisecond {
		t.Errorf("after the content: %q at %v; want finish, usage, [DONE] at 500ms", rest, fake.Now().Sub(start))
	}
}
