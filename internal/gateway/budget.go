package gateway

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
)

// budget is one client's daily and monthly limits and its spending. It is
// safe for concurrent use.
type budget struct {
	limit config.Budget
	*spending
	// ledger, with state: redis://…, is the spending of the whole fleet,
	// which then decides and records instead of spending.
	ledger *fleet.Ledger
}

// spending is what a client has spent in the current UTC day and month. A
// configuration reload hands it to the client's new budget, so changing a
// limit does not forgive the spend.
type spending struct {
	clk clock.Clock

	// mu guards the fields below.
	mu         sync.Mutex
	day, month time.Time // start of the current periods
	spentDay   float64
	spentMonth float64
	// reserved is what requests admitted and not yet settled may cost:
	// admission counts it as spent, so concurrent requests cannot all
	// pass a budget that has room for one.
	reserved float64
}

// newBudget returns a budget with limit b that adds to s's spending, or
// to a new one when s is nil.
func newBudget(b config.Budget, s *spending, clk clock.Clock) *budget {
	if s == nil {
		s = &spending{clk: clock.Or(clk)}
	}
	return &budget{limit: b, spending: s}
}

// rollLocked starts new periods when the clock has passed into them.
func (b *spending) rollLocked(now time.Time) {
	day, month := periods(now)
	if !day.Equal(b.day) {
		b.day, b.spentDay = day, 0
	}
	if !month.Equal(b.month) {
		b.month, b.spentMonth = month, 0
	}
}

// reserve admits a request that may cost up to usd, counting it against
// the budget until it is settled; it returns "" when it fits, or which
// budget ("daily", "monthly") it does not fit in and when that resets.
// With a fleet, the reservation is the fleet's.
func (b *budget) reserve(usd float64) (res fleet.Reservation, which string, resets time.Time) {
	if b.ledger != nil {
		now := b.clk.Now()
		res, which = b.ledger.Reserve(now, usd, b.limit.Daily, b.limit.Monthly)
		return res, which, periodEnd(now, which)
	}
	which, resets = b.reserveLocal(usd)
	return res, which, resets
}

// periods returns the starts of the UTC day and month that hold now.
func periods(now time.Time) (day, month time.Time) {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC),
		time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// periodEnd returns when the budget period which ("daily", "monthly")
// that holds now ends.
func periodEnd(now time.Time, which string) time.Time {
	day, month := periods(now)
	switch which {
	case "daily":
		return day.AddDate(0, 0, 1)
	case "monthly":
		return month.AddDate(0, 1, 0)
	}
	return time.Time{}
}

// reserveLocal is reserve on this replica's spending.
func (b *budget) reserveLocal(usd float64) (which string, resets time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked(b.clk.Now())
	switch {
	case b.limit.Daily > 0 && b.spentDay+b.reserved+usd > b.limit.Daily:
		return "daily", b.day.AddDate(0, 0, 1)
	case b.limit.Monthly > 0 && b.spentMonth+b.reserved+usd > b.limit.Monthly:
		return "monthly", b.month.AddDate(0, 1, 0)
	}
	b.reserved += usd
	return "", time.Time{}
}

// settleReservation replaces a reservation made by reserve (res, with the
// fleet; reserved, here) with what was spent.
func (b *budget) settleReservation(res fleet.Reservation, reserved, usd float64) {
	if b.ledger != nil {
		b.ledger.Settle(b.clk.Now(), res, usd)
		return
	}
	b.settle(reserved, usd)
}

// settle replaces a reservation of reserved with what the request cost.
func (b *spending) settle(reserved, usd float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked(b.clk.Now())
	b.reserved = max(b.reserved-reserved, 0)
	b.spentDay += usd
	b.spentMonth += usd
}

// checkBudget admits the request against the client's budget: it
// reserves what the request may cost at most — its prompt estimated from
// the body and its output from max_tokens (or defaultOutput), at the price
// of the dearest target the walk may reach — and refuses with a 429 that
// names the budget and when it resets when that does not fit (or a 503
// when, with Redis not answering, its replica cannot admit it without
// risking the budget: docs/FLEET.md). The answer
// settles the reservation (settleBudget).
func (x *exchange) checkBudget(c *client, body []byte) bool {
	if c.budget == nil {
		return true
	}
	est := x.estimate(body)
	res, which, resets := c.budget.reserve(est)
	if which == "" {
		x.reserved, x.resv = est, res
		return true
	}
	if which == fleet.Unconfirmed {
		x.w.Header().Set("Retry-After", "1")
		x.error(http.StatusServiceUnavailable, "server_error", "budget_unconfirmed", "",
			"Client "+strconv.Quote(c.name)+"'s budget cannot be confirmed for this request (up to $"+
				strconv.FormatFloat(est, 'f', -1, 64)+") while the fleet's shared state does not answer; retry shortly.")
		return false
	}
	limit := c.budget.limit.Daily
	if which == "monthly" {
		limit = c.budget.limit.Monthly
	}
	x.w.Header().Set("Retry-After", retryAfter(resets.Sub(x.s.clk.Now())))
	x.error(http.StatusTooManyRequests, "insufficient_quota", "budget_exceeded", "",
		"Client "+strconv.Quote(c.name)+" has no room left in its "+which+" budget of $"+strconv.FormatFloat(limit, 'f', -1, 64)+
			" for this request (up to $"+strconv.FormatFloat(est, 'f', -1, 64)+"); it resets at "+resets.Format(time.RFC3339)+".")
	return false
}

// defaultOutput is the output a request without max_tokens is reserved
// for.
const defaultOutput = 4096

// estimate returns the most a request may cost: prompt tokens estimated
// from the body (a token per four bytes), output from max_tokens or
// defaultOutput, at the price of the dearest of the alias's targets.
func (x *exchange) estimate(body []byte) float64 {
	in, out := len(body)/4, x.fields.MaxTokens
	if out <= 0 {
		out = defaultOutput
	}
	est := 0.0
	for _, t := range x.alias.Targets {
		est = max(est, x.alias.Price(t).Cost(in, 0, out))
	}
	return est
}

// settleBudget settles the request's reservation at finish: with what its
// answers' usage cost, or — when an upstream was sent the request and no
// usage came back (a stream cut off, a client that left) — with the
// reservation itself: nothing an upstream ran is free.
func (x *exchange) settleBudget() {
	c := x.clientRef
	if c == nil || c.budget == nil || x.reserved == 0 && x.prior+x.cost == 0 {
		return
	}
	cost := x.prior + x.cost
	if !x.priced && x.walk != nil && x.walk.Attempts > 0 && x.delivered {
		cost = max(cost, x.reserved)
	}
	c.budget.settleReservation(x.resv, x.reserved, cost)
	x.reserved = 0
}

// left returns what the client may still spend in the current day and
// month, never below zero; NaN for a period without a limit.
func (b *budget) left() (day, month float64) {
	var spentDay, spentMonth float64
	if b.ledger != nil {
		spentDay, spentMonth = b.ledger.Spent(b.clk.Now())
	} else {
		b.mu.Lock()
		b.rollLocked(b.clk.Now())
		spentDay, spentMonth = b.spentDay, b.spentMonth
		b.mu.Unlock()
	}
	day, month = math.NaN(), math.NaN()
	if b.limit.Daily > 0 {
		day = max(b.limit.Daily-spentDay, 0)
	}
	if b.limit.Monthly > 0 {
		month = max(b.limit.Monthly-spentMonth, 0)
	}
	return day, month
}
