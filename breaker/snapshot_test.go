package breaker

import (
	"testing"
	"time"
)

// ConsecutiveSuccesses counts the closed-state rules' successes since their
// last failure or the last state change.
func TestConsecutiveSuccesses(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: time.Second, SlowCallDuration: time.Second})
	want := func(step string, n int64) {
		t.Helper()
		if got := b.Snapshot().ConsecutiveSuccesses; got != n {
			t.Fatalf("%s: ConsecutiveSuccesses %d; want %d", step, got, n)
		}
	}
	want("new breaker", 0)
	for range 3 {
		mustAllow(t, b).Success()
	}
	mustAllow(t, b).Report(Outcome{Result: Success, Duration: time.Hour}) // slow, still a success
	mustAllow(t, b).Ignore()
	want("4 successes and an ignored call", 4)
	mustAllow(t, b).Failure()
	want("after a failure", 0)
	mustAllow(t, b).Success()
	mustAllow(t, b).Success()
	want("2 successes after the failure", 2)
	late := mustAllow(t, b)
	b.Reset() // a state change
	want("after Reset", 0)
	late.Success() // dropped: from the generation before
	want("a dropped success", 0)
	mustAllow(t, b).Success()
	want("1 success after Reset", 1)

	// Probes do not count, and the state change to closed starts afresh.
	for range 3 {
		mustAllow(t, b).Failure()
	}
	clk.Advance(time.Second)
	mustAllow(t, b).Success() // the probe closes the breaker
	wantState(t, b, StateClosed)
	want("closed by a probe", 0)

	// Disabled records into the rules; forced closed does not.
	b.Disable()
	mustAllow(t, b).Success()
	want("disabled", 1)
	b.ForceClosed()
	mustAllow(t, b).Success()
	want("forced closed", 0)
}
