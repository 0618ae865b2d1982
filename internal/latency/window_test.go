package latency

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func newFake(s Settings) (*Window, *clocktest.Clock) {
	fake := clocktest.New(time.Time{})
	s.Clock = fake
	return New(s), fake
}

// checkQuantiles compares w's quantiles with the exact nearest-rank
// quantiles of sorted, which holds every duration the window holds.
func checkQuantiles(t *testing.T, w *Window, sorted []time.Duration) {
	t.Helper()
	for _, q := range []float64{0.5, 0.95, 0.99, 1} {
		got, n := w.Quantile(q)
		want := sorted[rankOf(q, uint64(len(sorted)))-1]
		if n != len(sorted) {
			t.Errorf("Quantile(%v) count = %d; want %d", q, n, len(sorted))
		}
		if absDiff(got, want) > maxError(want) {
			t.Errorf("Quantile(%v) = %v; want %v ± %v", q, got, want, maxError(want))
		}
	}
}

func TestQuantileUniform(t *testing.T) {
	w, _ := newFake(Settings{})
	var sorted []time.Duration
	for ms := 1; ms <= 1000; ms++ {
		d := time.Duration(ms) * time.Millisecond
		w.Observe(d)
		sorted = append(sorted, d)
	}
	checkQuantiles(t, w, sorted)
}

func TestQuantileBimodal(t *testing.T) {
	w, _ := newFake(Settings{})
	var sorted []time.Duration
	for range 900 {
		w.Observe(300 * time.Millisecond)
		sorted = append(sorted, 300*time.Millisecond)
	}
	for range 100 {
		w.Observe(20 * time.Second)
		sorted = append(sorted, 20*time.Second)
	}
	checkQuantiles(t, w, sorted)
	if got, _ := w.Quantile(0.9); got > time.Second {
		t.Errorf("Quantile(0.9) = %v; want the 300ms mode", got)
	}
	if got, _ := w.Quantile(0.901); got < 10*time.Second {
		t.Errorf("Quantile(0.901) = %v; want the 20s mode", got)
	}
}

func TestQuantileOutOfRangeQ(t *testing.T) {
	w, _ := newFake(Settings{})
	w.Observe(5 * time.Millisecond)
	w.Observe(time.Second)
	low, high := bucketValue(bucketOf(5*time.Millisecond)), bucketValue(bucketOf(time.Second))
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0, low}, {-1, low}, {0.5, low}, {0.51, high}, {2, high}} {
		if got, n := w.Quantile(tt.q); got != tt.want || n != 2 {
			t.Errorf("Quantile(%v) = %v, %d; want %v, 2", tt.q, got, n, tt.want)
		}
	}
}

func TestEmptyWindow(t *testing.T) {
	w, _ := newFake(Settings{})
	if d, n := w.Quantile(0.99); d != 0 || n != 0 {
		t.Fatalf("Quantile on an empty window = %v, %d; want 0, 0", d, n)
	}
	if n := w.Count(); n != 0 {
		t.Fatalf("Count = %d; want 0", n)
	}
}

// One sample per 10s slot; the oldest leaves as each new slot begins.
func TestSamplesAgeOutSlotBySlot(t *testing.T) {
	w, fake := newFake(Settings{Span: time.Minute, Slots: 6}) // 10s slots
	for step := range 12 {
		w.Observe(time.Duration(step+1) * time.Second)
		oldest := max(0, step-5)
		wantCount := step - oldest + 1
		if got := w.Count(); got != wantCount {
			t.Fatalf("step %d: Count = %d; want %d", step, got, wantCount)
		}
		wantMin := bucketValue(bucketOf(time.Duration(oldest+1) * time.Second))
		if got, n := w.Quantile(0); got != wantMin || n != wantCount {
			t.Fatalf("step %d: Quantile(0) = %v, %d; want %v, %d", step, got, n, wantMin, wantCount)
		}
		fake.Advance(10 * time.Second)
	}
	// Now at 120s, the start of a seventh slot since 60s: the samples of
	// 70s..110s remain, and one leaves per slot.
	for left := 5; left >= 0; left-- {
		if got := w.Count(); got != left {
			t.Fatalf("at %v: Count = %d; want %d", fake.Now().Format("15:04:05"), got, left)
		}
		fake.Advance(10 * time.Second)
	}
	if d, n := w.Quantile(0.5); d != 0 || n != 0 {
		t.Fatalf("aged-out window: Quantile = %v, %d; want 0, 0", d, n)
	}
}

// A sample stays for at least Span−Span/Slots and less than Span.
func TestSampleLifetime(t *testing.T) {
	tests := []struct {
		offset   time.Duration // into its slot when the sample is observed
		lastSeen time.Duration // after the sample, it is still counted here
	}{
		{0, time.Minute - 1},
		{5 * time.Second, 55*time.Second - 1},
		{10*time.Second - 1, 50 * time.Second},
	}
	for _, tt := range tests {
		w, fake := newFake(Settings{Span: time.Minute, Slots: 6})
		fake.Advance(tt.offset)
		w.Observe(time.Second)
		fake.Advance(tt.lastSeen)
		if got := w.Count(); got != 1 {
			t.Errorf("observed %v into a slot, %v later: Count = %d; want 1", tt.offset, tt.lastSeen, got)
		}
		fake.Advance(1)
		if got := w.Count(); got != 0 {
			t.Errorf("observed %v into a slot, %v later: Count = %d; want 0", tt.offset, tt.lastSeen+1, got)
		}
	}
}

// A sample read before a slot rotated, counted after, is dropped: it is
// older than the window.
func TestStaleObserveIsDropped(t *testing.T) {
	w := New(Settings{Span: time.Minute, Slots: 6})
	slot := int64(10 * time.Second)
	w.observeAt(6*slot, time.Second) // slot 0, period 6
	w.observeAt(0, time.Second)      // slot 0, period 0: stale
	if got := w.countAt(6 * slot); got != 1 {
		t.Fatalf("Count = %d; want 1", got)
	}
	w.observeAt(7*slot, time.Second) // slot 1, period 7
	if got := w.countAt(7 * slot); got != 2 {
		t.Fatalf("Count = %d; want 2", got)
	}
}

func TestSettingsDefaults(t *testing.T) {
	tests := []struct {
		s         Settings
		slots     int
		slotLen   time.Duration
		wantBytes uintptr
	}{
		{Settings{}, 6, 20 * time.Second, 4 << 10},
		{Settings{Span: -1, Slots: -1}, 6, 20 * time.Second, 4 << 10},
		{Settings{Span: time.Minute, Slots: 60}, 60, time.Second, 40 << 10},
		{Settings{Span: 3, Slots: 10}, 3, 1, 4 << 10},
	}
	for _, tt := range tests {
		w := New(tt.s)
		if len(w.slots) != tt.slots || time.Duration(w.slotLen) != tt.slotLen {
			t.Errorf("New(%+v): %d slots of %v; want %d of %v",
				tt.s, len(w.slots), time.Duration(w.slotLen), tt.slots, tt.slotLen)
		}
		size := unsafe.Sizeof(*w) + uintptr(len(w.slots))*unsafe.Sizeof(slot{})
		if size > tt.wantBytes {
			t.Errorf("New(%+v) holds %d bytes; want at most %d", tt.s, size, tt.wantBytes)
		}
	}
}

func TestNilClockUsesSystemClock(t *testing.T) {
	w := New(Settings{})
	w.Observe(42 * time.Millisecond)
	if got, n := w.Quantile(1); n != 1 || absDiff(got, 42*time.Millisecond) > maxError(42*time.Millisecond) {
		t.Fatalf("Quantile(1) = %v, %d; want about 42ms, 1", got, n)
	}
}

// Eight goroutines observe while another reads; the clock stands still, so
// no slot rotates and every sample is counted.
func TestHammerCountsAddUp(t *testing.T) {
	const goroutines, each = 8, 5000
	w, _ := newFake(Settings{})
	stop := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() { readerErr <- readUntil(w, stop, goroutines*each) }()

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				w.Observe(time.Duration(g+1)*100*time.Millisecond + time.Duration(i)*time.Microsecond)
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	if got := w.Count(); got != goroutines*each {
		t.Fatalf("Count = %d; want %d", got, goroutines*each)
	}
	want := 800*time.Millisecond + each*time.Microsecond
	if got, _ := w.Quantile(1); absDiff(got, want) > maxError(want) {
		t.Fatalf("Quantile(1) = %v; want %v ± %v", got, want, maxError(want))
	}
}

// readUntil calls Quantile until stop is closed, checking that counts only
// grow and never pass max, and that every quantile is one the observers'
// durations (100ms to 805ms) can give.
func readUntil(w *Window, stop <-chan struct{}, max int) error {
	last := 0
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		d, n := w.Quantile(0.99)
		switch {
		case n < last || n > max:
			return fmt.Errorf("Quantile count = %d after %d; want it to grow up to %d", n, last, max)
		case n > 0 && (d < 90*time.Millisecond || d > 900*time.Millisecond):
			return fmt.Errorf("Quantile(0.99) = %v over %d samples; want 100ms..805ms", d, n)
		}
		last = n
	}
}

// Observers race slot rotations while the clock moves through several
// spans: nothing panics, no count exceeds what was observed, and everything
// ages out at the end.
func TestHammerWhileRotating(t *testing.T) {
	const goroutines = 8
	w, fake := newFake(Settings{Span: 6 * time.Second, Slots: 6})
	stop := make(chan struct{})
	var observed atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					w.Observe(time.Second)
					observed.Add(1)
				}
			}
		})
	}
	for range 300 { // 30s: five spans, 30 rotations
		fake.Advance(100 * time.Millisecond)
		if _, n := w.Quantile(0.95); int64(n) > observed.Load()+goroutines {
			t.Errorf("Quantile count = %d; more than the %d observed", n, observed.Load())
		}
	}
	close(stop)
	wg.Wait()
	if got := w.Count(); int64(got) > observed.Load() {
		t.Fatalf("Count = %d; more than the %d observed", got, observed.Load())
	}
	fake.Advance(6 * time.Second)
	if got := w.Count(); got != 0 {
		t.Fatalf("Count a Span after the last sample = %d; want 0", got)
	}
}
