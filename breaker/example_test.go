package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Trip after 3 failures in a row, stay open 5 s, close after 2 good probes.
func Example() {
	clk := clocktest.New(time.Time{})
	b, err := breaker.New(breaker.Config{
		Name:                "openai/gpt-4.1",
		ConsecutiveFailures: 3,
		OpenDuration:        5 * time.Second,
		HalfOpenSuccesses:   2,
		Clock:               clk,
		OnStateChange: func(t breaker.Transition) {
			fmt.Printf("%s: %v -> %v (%v)\n", t.Name, t.From, t.To, t.Reason)
		},
	})
	if err != nil {
		panic(err)
	}
	outage := errors.New("503 service unavailable")
	call := func(fail bool) error {
		return b.Execute(context.Background(), func(context.Context) error {
			if fail {
				return outage
			}
			return nil
		})
	}
	for range 3 {
		_ = call(true)
	}
	err = call(false)
	var open *breaker.OpenError
	if errors.As(err, &open) {
		fmt.Println("refused, retry in", open.RetryAfter())
	}
	clk.Advance(5 * time.Second)
	_ = call(false)
	_ = call(false)
	fmt.Println(b.State())
	// Output:
	// openai/gpt-4.1: closed -> open (consecutive-failures)
	// refused, retry in 5s
	// openai/gpt-4.1: open -> half-open (open-elapsed)
	// openai/gpt-4.1: half-open -> closed (probes-succeeded)
	// closed
}

// A proxy reports late: Allow before sending, report when the response (or
// stream) ends. Throttles are ignored, and a wait hint holds the breaker
// open at least that long.
func ExampleBreaker_Allow() {
	clk := clocktest.New(time.Time{})
	b, _ := breaker.New(breaker.Config{
		Window: 10 * time.Second, FailureRate: 0.5, MinCalls: 4,
		OpenDuration: 5 * time.Second, Clock: clk,
	})
	statuses := []int{200, 429, 503, 200, 503}
	for _, status := range statuses {
		p, err := b.Allow()
		if err != nil {
			fmt.Println(status, "refused:", err)
			continue
		}
		switch {
		case status == 429:
			p.Ignore() // a throttle says nothing about health
		case status >= 500:
			p.Report(breaker.Outcome{Result: breaker.Failure, RetryAfter: 20 * time.Second})
		default:
			p.Success()
		}
	}
	s := b.Snapshot()
	fmt.Println(s.State, s.Calls, s.Failures, s.RetryAfter)
	// Output: open 4 2 20s
}

// A Group keeps one breaker per key, made on first use.
func ExampleGroup() {
	type target struct{ provider, model string }
	g := breaker.NewGroup(func(t target) breaker.Config {
		return breaker.Config{Name: t.provider + "/" + t.model, ConsecutiveFailures: 1}
	})
	b, _ := g.Get(target{"anthropic", "claude-opus-4-7"})
	p, _ := b.Allow()
	p.Failure()
	g.Get(target{"openai", "gpt-4.1"})
	for _, s := range g.Snapshots() {
		fmt.Println(s.Name, s.State)
	}
	// Output:
	// anthropic/claude-opus-4-7 open
	// openai/gpt-4.1 closed
}
