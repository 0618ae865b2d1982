package fleet

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A busy replica holds a lease on part of a client's budget: one
// reservation in Redis (id "lease:<replica>"), sized each sync round to
// what the replica's requests asked for over the last LeaseAhead rounds,
// from which it admits requests without a round trip to Redis. The lease
// is itself a reservation, so the fleet's admission script counts it as
// held, and the budget is never overshot while Redis answers: what one
// replica leases, no other can reserve. A lease grows by at most the
// replica's share (divided by the replicas alive) of an eighth of what
// the budget has left, and not at all when that share would not hold four
// requests; it shrinks to what its requests hold once they stop asking
// (and when the replica stops), and Redis drops it LeaseTTL after its
// replica stopped renewing it (it died). A request the lease cannot cover
// asks Redis itself, as an idle replica's first request does, having
// given up the lease's free part; near the end of a budget every request
// does, and the budget is spent to the cent.

// LeaseTTL is how long Redis keeps a replica's budget lease after the
// replica stopped renewing it.
const LeaseTTL = 10 * time.Second

// LeaseAhead is how many sync rounds of a replica's recent demand its
// budget lease holds: what its requests asked for over that many rounds.
const LeaseAhead = 4

// leaseState is a Ledger's lease on the client's budget. It is guarded by
// the Ledger's mutex.
type leaseState struct {
	held  float64   // what Redis holds for this replica, as last granted
	until time.Time // when Redis drops it unless renewed
	used  float64   // reservations admitted from it, in flight
	// spent are the costs of those settled here and not yet in Redis,
	// per day and month; tried are the first of them, sent at least once
	// and never added to again (Redis may have them).
	spent []settlement
	tried int
	// busy is set while a lease change is on its way to Redis, so that
	// two changes never cross.
	busy bool

	asked  float64             // what reservations asked for since the last round
	count  int                 // how many asked
	recent [LeaseAhead]float64 // what they asked for in each of the last rounds
	round  int                 // rounds so far
	size   float64             // a request's reservation, on average, as last seen
	// daily and monthly are the limits the last request asked under.
	daily, monthly float64
}

// spentTotal returns the costs not yet sent.
func (s *leaseState) spentTotal() float64 {
	var t float64
	for _, st := range s.spent {
		t += st.cost
	}
	return t
}

// free returns what the lease can still admit.
func (s *leaseState) free() float64 { return s.held - s.used - s.spentTotal() }

// reserveLeasedLocked admits usd from the lease, if it covers it. It
// counts the demand either way.
func (l *Ledger) reserveLeasedLocked(now time.Time, usd, daily, monthly float64) bool {
	s := &l.lease
	s.asked += usd
	s.count++
	if daily != s.daily || monthly != s.monthly {
		// The limits changed (a reload): what the lease was granted under
		// the old ones is not admitted from until the next round.
		s.daily, s.monthly = daily, monthly
		s.held = min(s.held, s.used+s.spentTotal())
	}
	if !now.Before(s.until) || usd > s.free() {
		return false
	}
	s.used += usd
	return true
}

// settleLeasedLocked settles a reservation admitted from the lease.
func (l *Ledger) settleLeasedLocked(r Reservation, cost float64, day, month string) {
	s := &l.lease
	s.used = max(s.used-r.usd, 0)
	if cost <= 0 {
		return
	}
	if n := len(s.spent); n > s.tried && s.spent[n-1].day == day && s.spent[n-1].month == month {
		s.spent[n-1].cost += cost
		return
	}
	s.spent = append(s.spent, settlement{id: newSettlementID(), cost: cost, day: day, month: month})
}

// releaseLocked gives up the lease's free part before a request asks
// Redis itself, so the request is not refused for what this replica holds
// unused; it returns the amount Redis should release (0 while another
// lease change is on its way).
func (l *Ledger) releaseLocked() float64 {
	s := &l.lease
	free := s.free()
	if s.busy || free <= 0 {
		return 0
	}
	s.held -= free
	s.busy = true
	return free
}

// leaseScript resizes a replica's lease: KEYS day, month, reservations,
// amounts; ARGV lease id, floor (what the lease must keep holding: its
// requests in flight and what it may admit until the answer), extra (what
// it would like on top), daily and monthly limits (0: none), expiry (unix
// ms), now (unix ms), the keys' TTL (ms), replicas alive, a request's
// size. Returns the amount granted: the floor, and of the extra at most
// the replica's share of an eighth of what the budget has left, and none
// when that share would not hold four requests.
var leaseScript = redis.NewScript(`
local mine = tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0')
local held = math.max(tonumber(redis.call('HGET', KEYS[4], '_total') or '0'), 0)
local others = math.max(held - mine, 0)
local floor, extra = tonumber(ARGV[2]), tonumber(ARGV[3])
local n = math.max(tonumber(ARGV[9]), 1)
local dl, ml = tonumber(ARGV[4]), tonumber(ARGV[5])
local share = math.huge
if dl > 0 then
  local day = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
  share = math.min(share, (dl - day - others - floor) / (8 * n))
end
if ml > 0 then
  local month = tonumber(redis.call('HGET', KEYS[2], 'spent') or '0')
  share = math.min(share, (ml - month - others - floor) / (8 * n))
end
if share < 4 * tonumber(ARGV[10]) then share = 0 end
local grant = floor + math.max(math.min(extra, share), 0)
if grant < 1e-9 then grant = 0 end
redis.call('HINCRBYFLOAT', KEYS[4], '_total', grant - mine)
if grant > 0 then
  redis.call('HSET', KEYS[4], ARGV[1], grant)
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
  redis.call('PEXPIRE', KEYS[4], ARGV[8])
else
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return tostring(grant)
`)

// standbyLocked returns what a busy replica's lease holds at least, so
// that it can go on admitting while Redis does not answer: its share of
// an eighth of what the budget had left at the last read (this replica's
// lease aside), and nothing once that would not hold four requests, as
// the lease script grants. day and month are the current periods' keys.
func (l *Ledger) standbyLocked(day, month string) float64 {
	s := &l.lease
	size := s.size
	if s.count > 0 {
		size = s.asked / float64(s.count)
	}
	if l.dayOf != day || l.monthOf != month || size <= 0 {
		return 0
	}
	others := max(l.held-s.held, 0)
	left := math.Inf(1)
	if s.daily > 0 {
		left = s.daily - l.day - others
	}
	if s.monthly > 0 {
		left = min(left, s.monthly-l.month-others)
	}
	share := left / float64(8*max(l.f.Replicas(), 1))
	if math.IsInf(share, 1) || share < 4*size {
		return 0
	}
	return share
}

// Leased returns what this replica's lease on the client's budget holds,
// as Redis last granted it (0 when it holds none).
func (l *Ledger) Leased() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lease.held
}

// leaseID is this replica's lease in a client's reservations.
func (l *Ledger) leaseID() string { return "lease:" + l.f.id }

// exchangeLease adds to pipe this round's lease settlement: the costs
// its requests settled, and the lease resized to the replica's demand.
// The function it returns applies the grant. Nothing is sent for a
// replica that holds no lease and was not asked for one.
func (l *Ledger) exchangeLease(pipe redis.Pipeliner, ctx context.Context, now time.Time, keys []string) func() {
	l.mu.Lock()
	p, ok := l.lease.plan(l.f.closed.Load(), l.standbyLocked(keys[0], keys[1]))
	l.mu.Unlock()
	if !ok {
		return func() {}
	}
	// The costs first: the lease's script then sees the periods' spending
	// with them.
	cmds := make([]*redis.Cmd, len(p.sent))
	for i, st := range p.sent {
		cmds[i] = l.settle(pipe, ctx, st)
	}
	grant := leaseScript.Eval(ctx, pipe, keys, l.leaseID(), p.floor, p.extra, p.daily, p.monthly,
		now.Add(LeaseTTL).UnixMilli(), now.UnixMilli(), ReservationTTL.Milliseconds(), l.f.Replicas(), p.size)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lease.granted(now, p, grant, cmds)
	}
}

// leasePlan is one round's change of a lease.
type leasePlan struct {
	sent                 []settlement // the costs sent
	floor, extra         float64      // what Redis is asked to keep, and to add
	daily, monthly, size float64
}

// plan records this round's demand and plans the lease's change (for a
// replica leaving, down to what its requests hold; for a busy one, at
// least standby); false when there is nothing to send.
func (s *leaseState) plan(leaving bool, standby float64) (leasePlan, bool) {
	if s.count > 0 {
		s.size = s.asked / float64(s.count)
	}
	s.recent[s.round%LeaseAhead] = s.asked
	s.asked, s.count = 0, 0
	s.round++
	var ahead float64 // what the last LeaseAhead rounds asked for
	for _, a := range s.recent {
		ahead += a
	}
	if leaving {
		ahead = 0 // down to what its requests hold
	} else if ahead > 0 {
		ahead = max(ahead, standby)
	}
	if s.busy || s.held == 0 && ahead == 0 && len(s.spent) == 0 {
		return leasePlan{}, false
	}
	cost := s.spentTotal()
	// What the lease may admit until the grant arrives is capped now, so
	// what Redis is asked to keep (floor) covers all of it.
	s.held = min(s.held, s.used+cost+ahead)
	p := leasePlan{sent: slices.Clone(s.spent), floor: max(s.held-cost, s.used),
		daily: s.daily, monthly: s.monthly, size: s.size}
	p.extra = max(s.used+ahead-p.floor, 0)
	s.busy, s.tried = true, len(p.sent)
	return p, true
}

// granted applies Redis's answer to plan p: the costs it took are no
// longer pending, and the lease is what it granted. Without an answer the
// costs stay to be sent again, and Redis still holds at least s.held.
func (s *leaseState) granted(now time.Time, p leasePlan, grant *redis.Cmd, costs []*redis.Cmd) {
	s.busy = false
	taken := grant.Err() == nil
	for _, c := range costs {
		taken = taken && c.Err() == nil
	}
	if !taken {
		return
	}
	s.spent, s.tried = s.spent[len(p.sent):], 0
	text, _ := grant.Text()
	g, _ := strconv.ParseFloat(text, 64)
	s.held, s.until = g, now.Add(LeaseTTL)
}

// dropExpired starts the admission scripts: the reservations (KEYS[3],
// scored by expiry in unix ms; their amounts in KEYS[4]) that expired by
// ARGV[now] (unix ms) are released.
func dropExpired(now int) string {
	return `
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[` + strconv.Itoa(now) + `])
for _, id in ipairs(gone) do
  local a = tonumber(redis.call('HGET', KEYS[4], id) or '0')
  redis.call('HINCRBYFLOAT', KEYS[4], '_total', -a)
  redis.call('HDEL', KEYS[4], id)
  redis.call('ZREM', KEYS[3], id)
end
`
}
