package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// A component takes a clock.Clock and waits with clock.Sleep; a test drives it
// with the fake instead of sleeping.
func ExampleSleep() {
	fake := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	done := make(chan error)
	go func() { done <- clock.Sleep(context.Background(), fake, 30*time.Second) }()

	fake.WaitForTimers(1) // the goroutine is parked on the clock
	fake.Advance(30 * time.Second)
	fmt.Println(<-done, fake.Now().Format(time.TimeOnly))
	// Output: <nil> 00:00:30
}

// A Stopwatch gives cheap elapsed durations for hot paths.
func ExampleStopwatch() {
	fake := clocktest.New(time.Time{})
	sw := clock.NewStopwatch(fake)
	fake.Advance(250 * time.Millisecond)
	fmt.Println(sw.Elapsed())
	// Output: 250ms
}
