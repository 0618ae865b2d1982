// Command breaker shows the circuit breaker riding out a scripted outage of
// a simulated upstream: calls fail fast while it is open, a probe finds the
// recovery, and traffic resumes. It needs no network and runs in about three
// seconds:
//
//	go run ./examples/breaker
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
)

// upstream fails every call between down and up (offsets from start).
type upstream struct {
	start, down, up time.Time
	calls           int
}

var errUnavailable = errors.New("503 service unavailable")

func (u *upstream) call(ctx context.Context) error {
	u.calls++
	now := time.Now()
	if now.After(u.down) && now.Before(u.up) {
		return errUnavailable
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	start := time.Now()
	up := &upstream{start: start, down: start.Add(800 * time.Millisecond), up: start.Add(1800 * time.Millisecond)}
	since := func() string { return fmt.Sprintf("%5.2fs", time.Since(start).Seconds()) }

	b, err := breaker.New(breaker.Config{
		Name:                "primary",
		Window:              time.Second,
		FailureRate:         0.5,
		MinCalls:            10,
		ConsecutiveFailures: 5,
		OpenDuration:        300 * time.Millisecond,
		OpenBackoff:         1.5,
		HalfOpenSuccesses:   2,
		OnStateChange: func(t breaker.Transition) {
			fmt.Printf("%s  breaker %s: %v -> %v (%v)\n", since(), t.Name, t.From, t.To, t.Reason)
		},
	})
	if err != nil {
		return err
	}
	fmt.Printf("%s  upstream fails from 0.80s to 1.80s; one call every 10ms\n", since())
	var ok, failed, refused int
	ctx := context.Background()
	for time.Since(start) < 3*time.Second {
		switch err := b.Execute(ctx, up.call); {
		case err == nil:
			ok++
		case errors.Is(err, breaker.ErrOpen):
			refused++
		default:
			failed++
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := b.Snapshot()
	fmt.Printf("%s  %d calls: %d ok, %d failed, %d refused at once; upstream saw %d calls; breaker %v\n",
		since(), ok+failed+refused, ok, failed, refused, up.calls, s.State)
	return nil
}
