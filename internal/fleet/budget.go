package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A client's spending is one figure across the fleet, kept in
// {prefix}{bud:<client>}:d:<YYYY-MM-DD> and :m:<YYYY-MM> (hash field
// spent, USD; they expire after their period). Requests in flight hold
// reservations in {prefix}{bud:<client>}:r (a sorted set of reservation
// ids by expiry) and :ra (their amounts, and _total): a reservation whose
// replica died before settling it expires after ReservationTTL. Admission
// is one script that drops expired reservations and reserves only if the
// spending, the reservations and this request fit both limits, so a burst
// spread over replicas cannot overshoot a budget.

// ReservationTTL is how long a reservation that is never settled (its
// replica died) holds part of a budget.
const ReservationTTL = 15 * time.Minute

// Ledger is one client's spending, shared with the fleet. It is safe for
// concurrent use.
type Ledger struct {
	f   *Fleet
	key string

	mu sync.Mutex
	// day and month are the fleet's spending as last read, for the
	// periods named by dayOf and monthOf.
	day, month     float64
	dayOf, monthOf string
	// settles are settlements for the next round; queued their cost.
	settles []settlement
	queued  float64
	held    float64 // the fleet's reservations, as last read
	lease   leaseState
	over    overdraft
}

// Reservation is what a request holds of a budget until it is settled.
type Reservation struct {
	id     string
	usd    float64
	local  bool // this replica's overdraft (Redis did not answer)
	leased bool // admitted from this replica's lease
}

// USD returns the amount reserved.
func (r Reservation) USD() float64 { return r.usd }

// Ledger returns client's shared spending.
func (f *Fleet) Ledger(client string) *Ledger {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.ledgers[client]; ok {
		return l
	}
	l := &Ledger{f: f, key: f.o.Prefix + "{bud:" + client + "}"}
	f.ledgers[client] = l
	return l
}

// periods returns the keys of now's UTC day and month.
func (l *Ledger) periods(now time.Time) (day, month string) {
	now = now.UTC()
	return l.key + ":d:" + now.Format("2006-01-02"), l.key + ":m:" + now.Format("2006-01")
}

// reserveScript: KEYS day, month, reservations, amounts, the
// reservation's settlement marker; ARGV usd, daily
// limit, monthly limit (0: none), id, expiry (unix ms), now (unix ms),
// the keys' TTL (ms, relative: Redis's clock need not be the replicas'),
// this replica's lease id and what of it to release first (its free part,
// given up so that it does not stand in this request's way).
// Returns {1 or 0, refused period or "", day spent, month spent, held}.
// A reservation that arrives after its release (it timed out, and its
// replica settled it at nothing) or twice is not made again.
var reserveScript = redis.NewScript(dropExpired(6) + `
if redis.call('EXISTS', KEYS[5]) == 1 or redis.call('HEXISTS', KEYS[4], ARGV[4]) == 1 then return {0, 'late', '', '', ''} end
local rel = tonumber(ARGV[9])
if rel > 0 then
  local mine = tonumber(redis.call('HGET', KEYS[4], ARGV[8]) or '0')
  if rel >= mine - 1e-9 then
    redis.call('HINCRBYFLOAT', KEYS[4], '_total', -mine)
    redis.call('HDEL', KEYS[4], ARGV[8])
    redis.call('ZREM', KEYS[3], ARGV[8])
  else
    redis.call('HINCRBYFLOAT', KEYS[4], '_total', -rel)
    redis.call('HINCRBYFLOAT', KEYS[4], ARGV[8], -rel)
  end
end
local held = math.max(tonumber(redis.call('HGET', KEYS[4], '_total') or '0'), 0)
local day = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
local month = tonumber(redis.call('HGET', KEYS[2], 'spent') or '0')
local usd, dl, ml = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if dl > 0 and day + held + usd > dl then return {0, 'daily', tostring(day), tostring(month), tostring(held)} end
if ml > 0 and month + held + usd > ml then return {0, 'monthly', tostring(day), tostring(month), tostring(held)} end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[4], ARGV[1])
redis.call('HINCRBYFLOAT', KEYS[4], '_total', usd)
redis.call('PEXPIRE', KEYS[3], ARGV[7])
redis.call('PEXPIRE', KEYS[4], ARGV[7])
return {1, '', tostring(day), tostring(month), tostring(held + usd)}
`)

// Reserve asks the fleet for usd of the client's budget (limits daily and
// monthly, 0 for none), at now. It returns the reservation, or the period
// ("daily", "monthly") it does not fit in. A busy replica admits from its
// lease without waiting on Redis; otherwise Redis decides, in one script.
// Without an answer in time it admits only its overdraft: one request at
// a time that Redis does not know, within its share of what was left.
func (l *Ledger) Reserve(now time.Time, usd, daily, monthly float64) (Reservation, string) {
	l.mu.Lock()
	if l.reserveLeasedLocked(now, usd, daily, monthly) {
		l.mu.Unlock()
		return Reservation{usd: usd, leased: true}, ""
	}
	release := l.releaseLocked()
	l.mu.Unlock()
	r := Reservation{id: newSettlementID(), usd: usd}
	day, month := l.periods(now)
	ctx, cancel := l.f.ctx()
	defer cancel()
	exp := now.Add(ReservationTTL).UnixMilli()
	vals, err := reserveScript.Run(ctx, l.f.rdb, []string{day, month, l.key + ":r", l.key + ":ra", l.key + ":s:" + r.id},
		usd, daily, monthly, r.id, exp, now.UnixMilli(), ReservationTTL.Milliseconds(), l.leaseID(), release).Slice()
	if release > 0 {
		l.mu.Lock()
		l.lease.busy = false
		l.mu.Unlock()
	}
	if l.f.result("budget_reserve", err) && len(vals) == 5 {
		ok, _ := vals[0].(int64)
		which, _ := vals[1].(string)
		if which == "late" { // a retry of a call Redis had applied
			return r, ""
		}
		l.read(day, month, toString(vals[2]), toString(vals[3]), toString(vals[4]))
		if ok != 1 {
			return Reservation{}, which
		}
		return r, ""
	}
	l.f.fallback("budget_reserve")
	return l.reserveLocal(r, day, month, daily, monthly, exp)
}

// reserveLocal decides without Redis's answer: the request is this
// replica's overdraft, or refused. Redis may have made the reservation
// after all (the call timed out, not failed): an overdraft keeps its id,
// so registering it later is a no-op, and a refusal releases it with the
// next round.
func (l *Ledger) reserveLocal(r Reservation, day, month string, daily, monthly float64, exp int64) (Reservation, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res, which := l.reserveOverdraftLocked(r, day, month, daily, monthly, exp)
	if which != "" {
		l.settles = append(l.settles, settlement{id: r.id, day: day, month: month})
	}
	return res, which
}

// read records the fleet's spending and reservations as Redis gave them.
func (l *Ledger) read(day, month, spentDay, spentMonth, held string) {
	d, _ := strconv.ParseFloat(spentDay, 64)
	m, _ := strconv.ParseFloat(spentMonth, 64)
	h, _ := strconv.ParseFloat(held, 64)
	l.mu.Lock()
	l.dayOf, l.monthOf, l.day, l.month, l.held = day, month, d, m, max(h, 0)
	l.over.reads++
	l.mu.Unlock()
}

// settleScript: KEYS day, month, reservations, amounts, the settlement's
// marker; ARGV id, cost, the marker's TTL (ms). A settlement is applied
// once: a round that timed out may still reach Redis (a hung server reads
// it when it wakes), and the next round sends it again.
var settleScript = redis.NewScript(`
if not redis.call('SET', KEYS[5], '1', 'NX', 'PX', ARGV[3]) then return 0 end
local a = redis.call('HGET', KEYS[4], ARGV[1])
if a then
  redis.call('HINCRBYFLOAT', KEYS[4], '_total', -tonumber(a))
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
end
local c = tonumber(ARGV[2])
if c > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], 172800000)
  redis.call('HINCRBYFLOAT', KEYS[2], 'spent', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], 5356800000)
end
return 1
`)

// settledTTL is how long Redis remembers a settlement it applied, so that
// a resent one is not applied twice: a round a hung Redis reads when it
// wakes, and the round that sends it again, arrive within moments of
// each other.
const settledTTL = 2 * time.Minute

// newSettlementID returns a name for a reservation or settlement.
func newSettlementID() string {
	var id [8]byte
	rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// settle adds to pipe the script that applies st.
func (l *Ledger) settle(pipe redis.Pipeliner, ctx context.Context, st settlement) *redis.Cmd {
	return settleScript.Eval(ctx, pipe, []string{st.day, st.month, l.key + ":r", l.key + ":ra", l.key + ":s:" + st.id},
		st.id, strconv.FormatFloat(st.cost, 'g', -1, 64), settledTTL.Milliseconds())
}

// Settle replaces reservation r with what the request cost. It does not
// wait on Redis: the settlement goes with the next sync round (the
// reservation holds the budget until then), and without Redis it is kept
// for a later round, so nothing spent is lost.
func (l *Ledger) Settle(now time.Time, r Reservation, cost float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.leased {
		day, month := l.periods(now)
		l.settleLeasedLocked(r, cost, day, month)
		return
	}
	day, month := l.periods(now)
	if r.local && l.over.id == r.id {
		l.over.settled = true // its settlement releases it, wherever it is
	}
	l.settles = append(l.settles, settlement{id: r.id, cost: cost, day: day, month: month})
}

// settlement is a reservation settled here and not yet in Redis, with the
// keys of the day and month it was settled in.
type settlement struct {
	id         string
	cost       float64
	day, month string
}

// pendingLocked returns what the settlements not yet in Redis (the
// lease's included) add to the periods day and month.
func (l *Ledger) pendingLocked(day, month string) (d, m float64) {
	for _, sts := range [2][]settlement{l.settles, l.lease.spent} {
		for _, st := range sts {
			if st.day == day {
				d += st.cost
			}
			if st.month == month {
				m += st.cost
			}
		}
	}
	return d, m
}

// Spent returns the client's spending in now's UTC day and month, as last
// known here (the fleet's, plus what this replica could not send yet).
func (l *Ledger) Spent(now time.Time) (day, month float64) {
	d, m := l.periods(now)
	l.mu.Lock()
	defer l.mu.Unlock()
	day, month = l.pendingLocked(d, m)
	if l.dayOf == d {
		day += l.day
	}
	if l.monthOf == m {
		month += l.month
	}
	return day, month
}

// exchange adds to pipe the spending this replica could not send, and the
// reads of the fleet's; the function it returns applies the answers.
func (l *Ledger) exchange(pipe redis.Pipeliner, ctx context.Context, now time.Time) func() {
	day, month := l.periods(now)
	keys := []string{day, month, l.key + ":r", l.key + ":ra"}
	l.mu.Lock()
	n := len(l.settles)
	settles := append([]settlement(nil), l.settles...) // still counted as pending until Redis has them
	l.mu.Unlock()
	sent := make([]*redis.Cmd, len(settles))
	for i, st := range settles {
		sent[i] = l.settle(pipe, ctx, st)
	}
	lease := l.exchangeLease(pipe, ctx, now, keys)
	over := l.exchangeOverdraft(pipe, ctx, keys)
	d := pipe.HGet(ctx, day, "spent")
	m := pipe.HGet(ctx, month, "spent")
	h := pipe.HGet(ctx, l.key+":ra", "_total")
	return func() {
		l.mu.Lock()
		var kept []settlement // not taken: sent again next round
		for i, st := range settles {
			switch {
			case sent[i].Err() != nil:
				kept = append(kept, st)
			case l.over.open && st.id == l.over.id:
				l.over.freeLocked()
			}
		}
		l.settles = append(kept, l.settles[n:]...)
		l.mu.Unlock()
		lease()
		over()
		if answered(d) && answered(m) && answered(h) {
			l.read(day, month, d.Val(), m.Val(), h.Val())
		}
	}
}

// answered reports a read that Redis answered (nil included).
func answered(c *redis.StringCmd) bool { return c.Err() == nil || c.Err() == redis.Nil }
