package fleet

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// A replica that gets no answer from Redis in time admits only from what
// it already holds: its lease (which Redis holds for it), and then at
// most one request of its own, its overdraft. The overdraft is admitted
// only if it fits the replica's share (divided by the replicas alive) of
// what the budget had left at the last read, and only once Redis knows the
// replica's previous overdraft (registered as a reservation, or settled)
// and has been read since. So the fleet's spending never passes a budget
// by more than one request's estimate per replica, whatever Redis does:
// Redis admits nothing past the budget, and what it cannot see is at most
// one request per replica (docs/FLEET.md states the bound).

// overdraft is a Ledger's one reservation Redis may not know about. It is
// guarded by the Ledger's mutex.
type overdraft struct {
	open    bool   // admitted, and Redis does not know it yet
	id      string // its reservation id
	usd     float64
	exp     int64 // its reservation's expiry, unix ms
	settled bool  // its settlement is queued (the reservation is gone)
	// reads counts the Ledger's reads of the fleet's figures; freedAt is
	// the count when Redis last learned of an overdraft. A new overdraft
	// needs a read after that one, so that its share counts the last.
	reads, freedAt int
}

// allowedLocked reports whether a new overdraft may be admitted.
func (o *overdraft) allowedLocked() bool { return !o.open && o.reads > o.freedAt }

// freeLocked records that Redis knows the open overdraft.
func (o *overdraft) freeLocked() {
	o.open, o.settled, o.freedAt = false, false, o.reads
}

// registerScript makes an overdraft a reservation in Redis: KEYS day,
// month, reservations, amounts, the settlement's marker; ARGV id, usd,
// expiry (unix ms), the keys' TTL (ms). Nothing happens when Redis holds
// it already (a reservation that timed out was applied after all) or it
// was settled.
var registerScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[5]) == 1 or redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then return 0 end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
redis.call('HINCRBYFLOAT', KEYS[4], '_total', ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return 1
`)

// Unconfirmed is the refusal Reserve gives for a request that may fit the
// budget but that the replica cannot admit without Redis's answer (its
// overdraft is taken, or would not fit its share).
const Unconfirmed = "unconfirmed"

// reserveOverdraftLocked admits r as the overdraft if it fits the share of
// what was left at the last read (day and month are now's periods); it
// returns the period r does not fit in at all, or Unconfirmed.
func (l *Ledger) reserveOverdraftLocked(r Reservation, day, month string, daily, monthly float64, exp int64) (Reservation, string) {
	o := &l.over
	if l.dayOf != day || l.monthOf != month {
		return Reservation{}, Unconfirmed
	}
	pd, pm := l.pendingLocked(day, month)
	leftDay, leftMonth := daily-l.day-pd-l.held, monthly-l.month-pm-l.held
	switch {
	case daily > 0 && r.usd > leftDay:
		return Reservation{}, "daily"
	case monthly > 0 && r.usd > leftMonth:
		return Reservation{}, "monthly"
	}
	n := float64(max(l.f.Replicas(), 1))
	if !o.allowedLocked() || daily > 0 && r.usd > leftDay/n || monthly > 0 && r.usd > leftMonth/n {
		return Reservation{}, Unconfirmed
	}
	*o = overdraft{open: true, id: r.id, usd: r.usd, exp: exp, reads: o.reads, freedAt: o.freedAt}
	r.local = true
	return r, ""
}

// exchangeOverdraft adds to pipe the registration of an open overdraft not
// yet settled; the function it returns records what Redis took.
func (l *Ledger) exchangeOverdraft(pipe redis.Pipeliner, ctx context.Context, keys []string) func() {
	l.mu.Lock()
	o := l.over
	l.mu.Unlock()
	if !o.open || o.settled {
		return func() {}
	}
	cmd := registerScript.Eval(ctx, pipe, append(keys[:4:4], l.key+":s:"+o.id), o.id, o.usd, o.exp, ReservationTTL.Milliseconds())
	return func() {
		if cmd.Err() != nil {
			return
		}
		l.mu.Lock()
		if l.over.open && l.over.id == o.id {
			l.over.freeLocked()
		}
		l.mu.Unlock()
	}
}
