package gateway

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// budget is one client's daily and monthly limits and its spending. It is
// safe for concurrent use.
type budget struct {
	limit config.Budget
	*spending
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
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !day.Equal(b.day) {
		b.day, b.spentDay = day, 0
	}
	if !month.Equal(b.month) {
		b.month, b.spentMonth = month, 0
	}
}

// over reports which budget is spent ("daily" or "monthly") and when it
// resets; "" when the client may go on.
func (b *budget) over() (which string, resets time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked(b.clk.Now())
	switch {
	case b.limit.Daily > 0 && b.spentDay >= b.limit.Daily:
		return "daily", b.day.AddDate(0, 0, 1)
	case b.limit.Monthly > 0 && b.spentMonth >= b.limit.Monthly:
		return "monthly", b.month.AddDate(0, 1, 0)
	}
	return "", time.Time{}
}

// spend adds an answer's cost.
func (b *spending) spend(usd float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked(b.clk.Now())
	b.spentDay += usd
	b.spentMonth += usd
}

// checkBudget refuses a client over its budget with a 429 that names the
// budget and when it resets.
func (x *exchange) checkBudget(c *client) bool {
	if c.budget == nil {
		return true
	}
	which, resets := c.budget.over()
	if which == "" {
		return true
	}
	limit := c.budget.limit.Daily
	if which == "monthly" {
		limit = c.budget.limit.Monthly
	}
	x.w.Header().Set("Retry-After", retryAfter(resets.Sub(x.s.clk.Now())))
	x.error(http.StatusTooManyRequests, "insufficient_quota", "budget_exceeded", "",
		"Client "+strconv.Quote(c.name)+" has spent its "+which+" budget of $"+strconv.FormatFloat(limit, 'f', -1, 64)+
			"; it resets at "+resets.Format(time.RFC3339)+".")
	return false
}

// left returns what the client may still spend in the current day and
// month, never below zero; NaN for a period without a limit.
func (b *budget) left() (day, month float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked(b.clk.Now())
	day, month = math.NaN(), math.NaN()
	if b.limit.Daily > 0 {
		day = max(b.limit.Daily-b.spentDay, 0)
	}
	if b.limit.Monthly > 0 {
		month = max(b.limit.Monthly-b.spentMonth, 0)
	}
	return day, month
}
