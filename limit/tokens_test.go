package limit

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"pgregory.net/rapid"
)

type op int

const (
	allowOp  op = iota // TryReserveAt(n): want ok, and retryIn when !ok
	settleOp           // settle the last admitted reservation with n
	limitsOp           // SetLimitsAt(limits)
	blockOp            // Block(t0 + wait)
)

// step is one row of a Pacer step table: at t0+at, do op.
type step struct {
	at     time.Duration
	op     op
	n      int
	ok     bool
	wait   time.Duration
	limits Limits
}

func newTestPacer(t *testing.T, l Limits) *Pacer {
	t.Helper()
	p, err := NewPacer(PacerSettings{Limits: l})
	if err != nil {
		t.Fatalf("NewPacer(%+v) = %v", l, err)
	}
	return p
}

func run(t *testing.T, p *Pacer, steps []step) {
	t.Helper()
	var last Reservation
	for i, s := range steps {
		now := t0.Add(s.at)
		switch s.op {
		case allowOp:
			r, ok, wait := p.TryReserveAt(now, s.n)
			if ok != s.ok || wait != s.wait {
				t.Fatalf("step %d: TryReserveAt(t0+%v, %d) = %v, %v; want %v, %v", i, s.at, s.n, ok, wait, s.ok, s.wait)
			}
			if ok {
				last = r
			}
		case settleOp:
			last.SettleAt(now, s.n)
		case limitsOp:
			if err := p.SetLimitsAt(now, s.limits); err != nil {
				t.Fatalf("step %d: SetLimitsAt = %v", i, err)
			}
		case blockOp:
			p.BlockAt(now, t0.Add(s.wait))
		}
	}
}

func TestRequestsBoundaries(t *testing.T) {
	run(t, newTestPacer(t, Limits{RequestsPerMinute: 60, RequestBurst: 2}), []step{
		{at: 0, ok: true},
		{at: 0, ok: true},
		{at: 0, ok: false, wait: time.Second},
		{at: 999 * time.Millisecond, ok: false, wait: time.Millisecond},
		{at: time.Second, ok: true},
		{at: time.Second, ok: false, wait: time.Second},
		{at: 10 * time.Second, ok: true}, // refilled to the burst, no more
		{at: 10 * time.Second, ok: true},
		{at: 10 * time.Second, ok: false, wait: time.Second},
	})
}

func TestTokensBoundaries(t *testing.T) {
	run(t, newTestPacer(t, Limits{TokensPerMinute: 600, TokenBurst: 100}), []step{ // 10/s
		{at: 0, n: 60, ok: true},
		{at: 0, n: 50, ok: false, wait: time.Second},
		{at: 500 * time.Millisecond, n: 50, ok: false, wait: 500 * time.Millisecond},
		{at: time.Second, n: 50, ok: true},
		{at: time.Second, n: 0, ok: true}, // a zero estimate costs a request only
		{at: time.Second, n: 1, ok: false, wait: 100 * time.Millisecond},
	})
}

func TestSettleRefundAndDebit(t *testing.T) {
	run(t, newTestPacer(t, Limits{TokensPerMinute: 600, TokenBurst: 100}), []step{
		{at: 0, n: 100, ok: true},
		{at: 0, op: settleOp, n: 40}, // refund 60
		{at: 0, n: 60, ok: true},
		{at: 0, n: 1, ok: false, wait: 100 * time.Millisecond},
		{at: 0, op: settleOp, n: 110}, // debit 50: balance -50
		{at: 0, n: 10, ok: false, wait: 6 * time.Second},
		{at: 5 * time.Second, n: 10, ok: false, wait: time.Second},
		{at: 6 * time.Second, n: 10, ok: true},
		{at: 6 * time.Second, op: settleOp, n: -5}, // negative counts as 0: refund 10
		{at: 6 * time.Second, n: 10, ok: true},
		{at: 100 * time.Second, op: settleOp, n: 0}, // refund caps at the burst
		{at: 100 * time.Second, n: 100, ok: true},
		{at: 100 * time.Second, n: 1, ok: false, wait: 100 * time.Millisecond},
	})
}

func TestOversizedRequestGoesOnlyWhenFull(t *testing.T) {
	run(t, newTestPacer(t, Limits{TokensPerMinute: 600}), []step{ // burst 600, 10/s
		{at: 0, n: 1, ok: true},
		{at: 0, n: 1000, ok: false, wait: 100 * time.Millisecond}, // waits for full, not for 1000
		{at: 100 * time.Millisecond, n: 1000, ok: true},           // balance -400
		{at: 100 * time.Millisecond, n: 1, ok: false, wait: 40100 * time.Millisecond},
		{at: 100*time.Millisecond + 40100*time.Millisecond, n: 1, ok: true},
	})
}

func TestBothDimensions(t *testing.T) {
	run(t, newTestPacer(t, Limits{RequestsPerMinute: 60, RequestBurst: 1, TokensPerMinute: 600, TokenBurst: 100}), []step{
		{at: 0, n: 10, ok: true},
		{at: 0, n: 10, ok: false, wait: time.Second},                   // requests
		{at: time.Second, n: 100, ok: true},                            // tokens back to 100
		{at: 2 * time.Second, n: 50, ok: false, wait: 4 * time.Second}, // tokens
		{at: 6 * time.Second, n: 50, ok: true},
	})
}

func TestSetLimitsMidway(t *testing.T) {
	run(t, newTestPacer(t, Limits{RequestsPerMinute: 60, RequestBurst: 1}), []step{
		{at: 0, ok: true},
		{at: 0, ok: false, wait: time.Second},
		{at: 0, op: limitsOp, limits: Limits{RequestsPerMinute: 120, RequestBurst: 1}},
		{at: 0, ok: false, wait: 500 * time.Millisecond},
		{at: 0, op: limitsOp, limits: Limits{}}, // no limit
		{at: 0, ok: true},
		{at: 0, ok: true},
		{at: 0, op: limitsOp, limits: Limits{RequestsPerMinute: 60, RequestBurst: 1}}, // starts full
		{at: 0, ok: true},
		{at: 0, ok: false, wait: time.Second},
		{at: 0, op: limitsOp, limits: Limits{RequestsPerMinute: 60, RequestBurst: 5}}, // debt kept, not refilled
		{at: time.Second, ok: true},
		{at: time.Second, ok: false, wait: time.Second},
		{at: 10 * time.Second, op: limitsOp, limits: Limits{RequestsPerMinute: 60, RequestBurst: 2}}, // cut to new burst
		{at: 10 * time.Second, ok: true},
		{at: 10 * time.Second, ok: true},
		{at: 10 * time.Second, ok: false, wait: time.Second},
	})
}

func TestBlock(t *testing.T) {
	run(t, newTestPacer(t, Limits{RequestsPerMinute: 60, RequestBurst: 1}), []step{
		{op: blockOp, wait: 20 * time.Second},
		{at: 0, ok: false, wait: 20 * time.Second},
		{op: blockOp, wait: 5 * time.Second}, // earlier: ignored
		{at: 19 * time.Second, ok: false, wait: time.Second},
		{at: 20 * time.Second, ok: true},
		{at: 20 * time.Second, ok: false, wait: time.Second},
	})
	run(t, newTestPacer(t, Limits{}), []step{ // a Pacer with no limits still blocks
		{at: 0, ok: true},
		{op: blockOp, wait: time.Minute},
		{at: 30 * time.Second, ok: false, wait: 30 * time.Second},
		{at: time.Minute, ok: true},
	})
}

func TestZeroPacerAdmitsEverything(t *testing.T) {
	p := newTestPacer(t, Limits{})
	for i := range 1000 {
		if ok, _ := p.AllowAt(t0, 1_000_000); !ok {
			t.Fatalf("call %d refused by a Pacer with no limits", i)
		}
	}
	var r Reservation // the zero Reservation is inert
	r.Settle(10)
	r.Cancel()
}

func TestNewPacerRejectsNegative(t *testing.T) {
	for _, s := range []PacerSettings{
		{Limits: Limits{RequestsPerMinute: -1}},
		{Limits: Limits{TokensPerMinute: -1}},
		{Limits: Limits{RequestBurst: -1}},
		{Limits: Limits{TokenBurst: -1}},
		{MaxWait: -1},
	} {
		if _, err := NewPacer(s); err == nil {
			t.Errorf("NewPacer(%+v) = nil error", s)
		}
	}
	p := newTestPacer(t, Limits{RequestsPerMinute: 5})
	if err := p.SetLimits(Limits{TokensPerMinute: -5}); err == nil {
		t.Error("SetLimits with a negative rate = nil error")
	}
	if got := p.Limits(); got != (Limits{RequestsPerMinute: 5}) {
		t.Errorf("Limits after a refused SetLimits = %+v", got)
	}
}

// Odd rates must not admit a call a nanosecond before its tokens exist, nor
// refuse it at the instant Allow promised.
func TestRetryInIsExact(t *testing.T) {
	for _, tpm := range []float64{7, 90_000, 1_000_003, 33.3} {
		p := newTestPacer(t, Limits{TokensPerMinute: tpm, TokenBurst: 10})
		now := t0
		for i := range 50 {
			ok, wait := p.AllowAt(now, 3)
			if ok {
				continue
			}
			if ok, _ := p.AllowAt(now.Add(wait-1), 3); ok {
				t.Fatalf("tpm %v call %d: admitted 1ns before retryIn %v", tpm, i, wait)
			}
			now = now.Add(wait)
			if ok, again := p.AllowAt(now, 3); !ok {
				t.Fatalf("tpm %v call %d: refused at retryIn %v, now %v more", tpm, i, wait, again)
			}
		}
	}
}

func newFakePacer(t *testing.T, l Limits, maxWait time.Duration) (*Pacer, *clocktest.Clock) {
	t.Helper()
	fc := clocktest.New(t0)
	p, err := NewPacer(PacerSettings{Limits: l, MaxWait: maxWait, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	return p, fc
}

type waitResult struct {
	r   Reservation
	err error
}

func goWait(ctx context.Context, p *Pacer, tokens int) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		r, err := p.Wait(ctx, tokens)
		ch <- waitResult{r, err}
	}()
	return ch
}

func TestWaitParksOnClock(t *testing.T) {
	p, fc := newFakePacer(t, Limits{RequestsPerMinute: 60, RequestBurst: 1}, 0)
	if _, err := p.Wait(context.Background(), 0); err != nil {
		t.Fatalf("first Wait = %v", err)
	}
	ch := goWait(context.Background(), p, 0)
	fc.WaitForTimers(1)
	fc.Advance(999 * time.Millisecond)
	select {
	case res := <-ch:
		t.Fatalf("Wait returned %v before its time", res.err)
	default:
	}
	fc.Advance(time.Millisecond)
	res := <-ch
	if res.err != nil || !res.r.ReadyAt().Equal(t0.Add(time.Second)) {
		t.Fatalf("Wait = %+v, %v; want ready at t0+1s", res.r.ReadyAt(), res.err)
	}
}

func TestWaitCancelGivesReservationBack(t *testing.T) {
	p, fc := newFakePacer(t, Limits{RequestsPerMinute: 600, TokensPerMinute: 600, TokenBurst: 100}, 0)
	if _, err := p.Wait(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := goWait(ctx, p, 100)
	fc.WaitForTimers(1)
	cancel()
	if res := <-ch; !errors.Is(res.err, context.Canceled) {
		t.Fatalf("cancelled Wait = %v; want context.Canceled", res.err)
	}
	if fc.Pending() != 0 {
		t.Fatal("cancelled Wait left its timer pending")
	}
	// The next caller waits for its own tokens only, not the cancelled ones.
	if _, wait := p.Reserve(100); wait != 10*time.Second {
		t.Fatalf("after cancel Reserve waits %v; want 10s", wait)
	}
}

func TestWaitTooLongIsLimited(t *testing.T) {
	p, _ := newFakePacer(t, Limits{RequestsPerMinute: 60, RequestBurst: 1}, 5*time.Second)
	p.BlockAt(t0, t0.Add(20*time.Second))
	_, err := p.Wait(context.Background(), 0)
	var le *LimitedError
	if !errors.Is(err, ErrLimited) || !errors.As(err, &le) || le.RetryAfter != 20*time.Second {
		t.Fatalf("Wait past MaxWait = %v; want *LimitedError{20s}", err)
	}
	if err.Error() != "limit: rate limited, retry in 20s" {
		t.Errorf("Error() = %q", err)
	}
	// Nothing was taken: once the block ends, a full bucket admits.
	if ok, _ := p.AllowAt(t0.Add(20*time.Second), 0); !ok {
		t.Fatal("refused Wait consumed a request")
	}

	p, _ = newFakePacer(t, Limits{RequestsPerMinute: 1, RequestBurst: 1}, 0)
	p.Allow(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute/2) // real deadline, never reached
	defer cancel()
	if _, err := p.Wait(ctx, 0); !errors.Is(err, ErrLimited) {
		t.Fatalf("Wait past the context deadline = %v; want ErrLimited", err)
	}
	cancel()
	if _, err := p.Wait(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a done context = %v; want context.Canceled", err)
	}
}

// admission is one admitted call seen by the property test.
type admission struct {
	at       time.Time
	estimate int
	cost     int // the settled usage, or the estimate until settled
	r        Reservation
	canceled bool
	refunded time.Time // when settled below its estimate; zero if not
}

// TestPropertyNeverOverAdmits checks that, for any sequence of immediate and
// future reservations, settles, cancels, blocks and clock advances, the
// tokens of the calls acting in a window [a, b] (counted at their settled
// usage as known when the last one was admitted) never exceed
// burst + rate*(b-a), plus the excess of the last call over the burst (an
// oversized call goes when the bucket is full). That holds for every window
// from the start, and for every window in which no earlier call was refunded:
// a refund is credited when it is settled, not back at the refunded call's
// time, so the long-run rate holds but a window starting between a call and
// its refund may see up to the refund more.
func TestPropertyNeverOverAdmits(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const perSec = 10.0
		burst := rapid.IntRange(1, 200).Draw(rt, "burst")
		p, err := NewPacer(PacerSettings{Limits: Limits{TokensPerMinute: perSec * 60, TokenBurst: burst}})
		if err != nil {
			rt.Fatal(err)
		}
		now := t0
		var adm []*admission
		check := func(j *admission) {
			for _, a := range adm {
				if a.canceled || a.at.After(j.at) || refundedInside(adm, a.at) {
					continue
				}
				sum := float64(j.estimate)
				for _, i := range adm {
					if !i.canceled && !i.at.Before(a.at) && !i.at.After(j.at) {
						sum += float64(i.cost)
					}
				}
				bound := float64(burst) + perSec*j.at.Sub(a.at).Seconds() + math.Max(0, float64(j.estimate-burst))
				if sum > bound+1e-6 {
					rt.Fatalf("window [%v, %v]: %v tokens > bound %v", a.at.Sub(t0), j.at.Sub(t0), sum, bound)
				}
			}
		}
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 5: // blocks only ever delay calls
				p.BlockAt(now, now.Add(time.Duration(rapid.Int64Range(0, int64(3*time.Second)).Draw(rt, "block"))))
			case 0: // immediate
				n := rapid.IntRange(0, 2*burst).Draw(rt, "n")
				r, ok, _ := p.TryReserveAt(now, n)
				if ok {
					a := &admission{at: r.ReadyAt(), estimate: n, cost: n, r: r}
					check(a)
					adm = append(adm, a)
				}
			case 1: // future
				n := rapid.IntRange(0, 2*burst).Draw(rt, "n")
				r, _ := p.ReserveAt(now, n)
				a := &admission{at: r.ReadyAt(), estimate: n, cost: n, r: r}
				check(a)
				adm = append(adm, a)
			case 2: // settle one not yet settled
				if len(adm) > 0 {
					a := adm[rapid.IntRange(0, len(adm)-1).Draw(rt, "i")]
					if !a.canceled && a.cost == a.estimate {
						a.cost = rapid.IntRange(0, 2*burst).Draw(rt, "actual")
						a.r.SettleAt(now, a.cost)
						if a.cost < a.estimate {
							a.refunded = now
						}
						a.estimate = -1 // settled once
					}
				}
			case 3: // cancel one still in the future
				if len(adm) > 0 {
					a := adm[rapid.IntRange(0, len(adm)-1).Draw(rt, "i")]
					if a.at.After(now) && !a.canceled && a.estimate >= 0 {
						a.r.CancelAt(now)
						a.canceled = true
					}
				}
			case 4:
				now = now.Add(time.Duration(rapid.Int64Range(0, int64(5*time.Second)).Draw(rt, "advance")))
			}
		}
	})
}

// refundedInside reports whether a call acting before start was refunded
// at or after it.
func refundedInside(adm []*admission, start time.Time) bool {
	for _, i := range adm {
		if i.at.Before(start) && !i.refunded.IsZero() && !i.refunded.Before(start) {
			return true
		}
	}
	return false
}

// Cancelling a reservation that waited on the token bucket must never take
// requests away: the request bucket's projection had passed its burst, and
// its room was read as negative.
func TestCancelNeverDebits(t *testing.T) {
	p, err := NewPacer(PacerSettings{Limits: Limits{RequestsPerMinute: 60, TokensPerMinute: 600, TokenBurst: 100}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []Reservation
	for range 3 {
		r, _ := p.ReserveAt(t0, 100)
		rs = append(rs, r)
	}
	before, _ := p.Available(t0)
	rs[1].CancelAt(t0)
	after, _ := p.Available(t0)
	if after < before {
		t.Fatalf("cancelling took requests away: %v -> %v", before, after)
	}
}
