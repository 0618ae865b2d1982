package router

import (
	"io"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
)

// Time the caller spends blocked writing to a slow client is not the
// upstream's silence: the idle budget waits while a write is under way and
// counts from its end.
func TestWritesToASlowClientDoNotCountAsSilence(t *testing.T) {
	clk, r, ev, at, read := stalledStream(t, Budgets{Idle: 3 * time.Second})
	at.Writing()
	clk.Advance(10 * time.Second) // the client takes 10 s to take the write
	checkUncut(t, r, ev, "a/m")
	at.Written()
	clk.Advance(3*time.Second - time.Millisecond)
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.StreamStalled, 13*time.Second)
	recv(t, read, "end of the body read")
	at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
}

// The total budget is moved on by the time blocked on the client.
func TestTotalBudgetExcludesTimeBlockedOnTheClient(t *testing.T) {
	clk, r, ev, at, read := stalledStream(t, Budgets{Total: 5 * time.Second})
	clk.Advance(time.Second)
	at.Writing()
	clk.Advance(4 * time.Second)
	at.Written()
	clk.Advance(4*time.Second - time.Millisecond) // 9 s since sent, 4 of them the client's
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.Timeout, 9*time.Second)
	recv(t, read, "end of the body read")
	at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
}
