package latency_test

import (
	"fmt"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/latency"
)

// A target's Window gives the hedge delay (its recent p95) and an adaptive
// timeout: max(floor, 3 × p99), bounded by a ceiling.
func ExampleWindow() {
	fake := clocktest.New(time.Time{})
	w := latency.New(latency.Settings{Span: 2 * time.Minute, Clock: fake})
	for range 97 {
		w.Observe(300 * time.Millisecond)
	}
	for range 3 {
		w.Observe(20 * time.Second) // a few slow completions
	}

	p95, n := w.Quantile(0.95)
	p99, _ := w.Quantile(0.99)
	const floor, ceiling = time.Second, 2 * time.Minute
	timeout := min(max(floor, 3*p99), ceiling)
	fmt.Println("samples:", n)
	fmt.Println("hedge after:", p95)
	fmt.Println("timeout:", timeout)

	fake.Advance(2 * time.Minute)
	fmt.Println("two minutes later:", w.Count())
	// Output:
	// samples: 100
	// hedge after: 304ms
	// timeout: 58.368s
	// two minutes later: 0
}
