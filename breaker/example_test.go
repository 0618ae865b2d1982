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

// Replicas of a gateway keep one breaker in step. Each publishes its own
// transitions (here straight to the others; in a fleet, through a shared
// store) and applies the others' with OpenUntil and CloseRemote, skipping
// ReasonRemote ones so nothing echoes. ProbeGate lets one replica at a time
// probe for the fleet.
func ExampleBreaker_OpenUntil() {
	clk := clocktest.New(time.Time{})
	var fleet []*breaker.Breaker
	prober := "" // who holds the fleet's probe slot
	for _, name := range []string{"replica-a", "replica-b"} {
		b, _ := breaker.New(breaker.Config{
			Name: name, ConsecutiveFailures: 2, OpenDuration: 5 * time.Second, Clock: clk,
			ProbeGate: func() bool {
				if prober != "" && prober != name {
					return false
				}
				prober = name
				return true
			},
			OnStateChange: func(t breaker.Transition) {
				fmt.Printf("%s: %v -> %v (%v)\n", t.Name, t.From, t.To, t.Reason)
				if t.To != breaker.StateHalfOpen {
					prober = ""
				}
				if t.Reason == breaker.ReasonRemote {
					return // applied from another replica: not ours to publish
				}
				for _, other := range fleet {
					switch {
					case other.Name() == t.Name:
					case t.To == breaker.StateOpen:
						other.OpenUntil(t.OpenUntil)
					case t.To == breaker.StateClosed:
						other.CloseRemote()
					}
				}
			},
		})
		fleet = append(fleet, b)
	}
	a, b := fleet[0], fleet[1]
	for range 2 {
		p, _ := a.Allow()
		p.Failure()
	}
	_, err := b.Allow()
	fmt.Println(err)

	clk.Advance(5 * time.Second)
	probe, _ := a.Allow() // a takes the fleet's probe
	_, err = b.Allow()    // b's own slot is free, the fleet's is not
	fmt.Println(err)
	probe.Success()
	fmt.Println(a.State(), b.State())
	// Output:
	// replica-a: closed -> open (consecutive-failures)
	// replica-b: closed -> open (remote)
	// breaker replica-b: open, next probe in 5s
	// replica-a: open -> half-open (open-elapsed)
	// replica-b: open -> half-open (open-elapsed)
	// breaker replica-b: half-open, all probe slots in use
	// replica-a: half-open -> closed (probes-succeeded)
	// replica-b: half-open -> closed (remote)
	// closed closed
}

// A trip rule over the whole fleet: OnRecord feeds every replica's counted
// outcomes to a shared tally (a store, in a real fleet), and the caller
// trips every replica when the fleet has seen 3 failures, though no replica
// reached its own limit.
func ExampleBreaker_Trip() {
	clk := clocktest.New(time.Time{})
	failures := 0
	var fleet []*breaker.Breaker
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		b, _ := breaker.New(breaker.Config{
			Name: name, ConsecutiveFailures: 5, Clock: clk,
			OnRecord: func(failed, slow bool) {
				if failed {
					failures++
				}
			},
			OnStateChange: func(t breaker.Transition) {
				fmt.Printf("%s: %v -> %v (%v)\n", t.Name, t.From, t.To, t.Reason)
			},
		})
		fleet = append(fleet, b)
	}
	for _, b := range fleet {
		p, _ := b.Allow()
		p.Failure()
	}
	if failures >= 3 {
		for _, b := range fleet {
			b.Trip(breaker.ReasonExternal)
		}
	}
	// Output:
	// replica-a: closed -> open (external)
	// replica-b: closed -> open (external)
	// replica-c: closed -> open (external)
}
