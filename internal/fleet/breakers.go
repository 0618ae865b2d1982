package fleet

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/breaker"
)

// A shared breaker keeps its state in one Redis hash per target,
// {prefix}{br:<target>}: gen (bumped by every fleet transition), state
// (open, closed, forced_open, forced_closed, disabled) and until (unix ms,
// for open) and epoch (new when Redis lost the record). Each transition
// is announced on {prefix}breakers as "epoch|gen|state|until|target". Outcomes go into window buckets
// {prefix}{br:<target>}:w:<gen>:<bucket> (hash calls, fails, slow) that
// expire after two windows, so Redis holds a bounded amount per target;
// a new generation starts an empty window, so outcomes from before a
// fleet transition never count after it. Half-open probes take a permit
// from {prefix}{br:<target>}:p:<gen>, at most the breaker's probes for
// the fleet. The hash tag keeps a target's keys in one Cluster slot.

// fleetState is a breaker state as the fleet records it.
type fleetState struct {
	// epoch names the record's life: a Redis that lost its data (a
	// restart without persistence) starts a new one, whose generations
	// start again.
	epoch string
	gen   uint64
	state string
	until int64 // unix ms, for open
}

// shared is one target's breaker as shared with the fleet.
type shared struct {
	f    *Fleet
	name string
	key  string
	b    atomic.Pointer[breaker.Breaker]
	cfg  breaker.Config

	// Outcomes counted since the last flush.
	calls, fails, slow atomic.Int64
	run                run
	// until is the end of the fleet's latest open period (unix ms): it
	// names the period, so that every replica asks for the same probe
	// permits even before they agree on the generation.
	until atomic.Int64

	mu sync.Mutex
	// known is the fleet's state as last applied or announced here.
	known fleetState
	// want is a local transition not yet taken by Redis (it was down).
	want *fleetState
}

// Join prepares bc, the breaker configuration of target name, for a
// breaker shared with the fleet: its counted outcomes are published, its
// trips announced, its half-open probes limited fleet-wide. Call the
// function it returns with the breaker once built. A name joined again
// (a reload) replaces the old.
func (f *Fleet) Join(name string, bc *breaker.Config) func(*breaker.Breaker) {
	s := &shared{f: f, name: name, key: f.o.Prefix + "{br:" + name + "}", cfg: *bc}
	rec, user := bc.OnRecord, bc.OnStateChange
	consecutive := bc.ConsecutiveFailures > 0
	bc.OnRecord = func(failed, slow bool) {
		if consecutive {
			s.run.record(failed)
		}
		s.calls.Add(1)
		if failed {
			s.fails.Add(1)
		}
		if slow {
			s.slow.Add(1)
		}
		if rec != nil {
			rec(failed, slow)
		}
	}
	bc.OnStateChange = func(t breaker.Transition) {
		if user != nil {
			user(t)
		}
		s.local(t)
	}
	bc.ProbeGate = s.probeGate
	return func(b *breaker.Breaker) {
		s.b.Store(b)
		f.mu.Lock()
		f.breakers[name] = s
		f.mu.Unlock()
	}
}

// Leave stops sharing target name's breaker (the target is gone).
func (f *Fleet) Leave(name string) {
	f.mu.Lock()
	delete(f.breakers, name)
	f.mu.Unlock()
}

// local handles a transition of the local breaker: one the fleet did not
// cause is announced (from the sync loop, never on the caller's
// goroutine). Half-open is not announced: every replica enters it when
// the same open period ends.
func (s *shared) local(t breaker.Transition) {
	s.calls.Store(0) // what was counted belonged to the state left
	s.fails.Store(0)
	s.slow.Store(0)
	s.run.reset()
	if t.Reason == breaker.ReasonRemote {
		return
	}
	st := fleetState{state: stateName(t.To)}
	switch {
	case st.state == "":
		return // half-open
	case t.To == breaker.StateOpen:
		st.until = t.OpenUntil.UnixMilli()
		s.until.Store(max(s.until.Load(), st.until))
	}
	s.mu.Lock()
	if st.state == s.known.state && (st.state != "open" || st.until <= s.known.until) {
		s.mu.Unlock()
		return // the fleet's own state, applied here (an echo)
	}
	s.want = &st
	s.mu.Unlock()
	select {
	case s.f.publish <- s:
	default: // the loop is behind; the next sync sends it
	}
}

// stateName is a breaker state as the fleet records it; "" for half-open.
func stateName(st breaker.State) string {
	switch st {
	case breaker.StateOpen:
		return "open"
	case breaker.StateClosed:
		return "closed"
	case breaker.StateForcedOpen:
		return "forced_open"
	case breaker.StateForcedClosed:
		return "forced_closed"
	case breaker.StateDisabled:
		return "disabled"
	}
	return ""
}

// transitionScript records a transition unless the fleet is in that state
// already (for open: until as late), bumping the generation and
// announcing it; it returns the fleet's state after.
var transitionScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'gen', 'state', 'until', 'epoch')
local gen = tonumber(cur[1]) or 0
local epoch = cur[4] or ARGV[6]
local st = ARGV[1]
if cur[2] == st and (st ~= 'open' or (tonumber(cur[3]) or 0) >= tonumber(ARGV[2])) then
  return {gen, cur[2], cur[3] or '0', epoch}
end
gen = gen + 1
redis.call('HSET', KEYS[1], 'gen', gen, 'state', st, 'until', ARGV[2], 'epoch', epoch)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], epoch .. '|' .. gen .. '|' .. st .. '|' .. ARGV[2] .. '|' .. ARGV[5])
return {gen, st, ARGV[2], epoch}
`)

// announce sends a pending local transition now.
func (f *Fleet) announce(s *shared) {
	ctx, cancel := context.WithTimeout(context.Background(), f.bgTimeout())
	defer cancel()
	pipe := f.rdb.Pipeline()
	read := s.queue(pipe, ctx, f.clk.Now())
	if read == nil {
		return
	}
	_, err := pipe.Exec(ctx)
	if f.result("breaker_transition", err) {
		read()
	}
}

// queue adds the pending transition to pipe, and returns what to do with
// its answer (nil with none pending).
func (s *shared) queue(pipe redis.Pipeliner, ctx context.Context, now time.Time) func() {
	s.mu.Lock()
	w := s.want
	s.mu.Unlock()
	if w == nil {
		return nil
	}
	ttl := s.stateTTL(now, w.until)
	cmd := transitionScript.Eval(ctx, pipe, []string{s.key}, w.state, w.until, ttl.Milliseconds(), s.f.channel(), s.name, s.f.newEpoch())
	return func() {
		st, ok := scriptState(cmd)
		if !ok {
			return
		}
		s.mu.Lock()
		if s.want == w {
			s.want = nil
		}
		s.mu.Unlock()
		s.apply(st) // the fleet may have been open for longer
	}
}

// stateTTL is how long a breaker's record is kept: well past an open
// period, so that an idle target's record goes away.
func (s *shared) stateTTL(now time.Time, until int64) time.Duration {
	d := 24 * time.Hour
	if until > 0 {
		d = max(d, time.UnixMilli(until).Sub(now)+time.Hour)
	}
	return d
}

// scriptState reads the state transitionScript returned.
func scriptState(cmd *redis.Cmd) (fleetState, bool) {
	vals, err := cmd.Slice()
	if err != nil || len(vals) != 4 {
		return fleetState{}, false
	}
	gen, _ := vals[0].(int64)
	st, _ := vals[1].(string)
	until, _ := strconv.ParseInt(toString(vals[2]), 10, 64)
	epoch, _ := vals[3].(string)
	return fleetState{epoch: epoch, gen: uint64(gen), state: st, until: until}, st != ""
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// exchange adds to pipe this round's outcomes and the reads of the fleet's
// state and window; the function it returns applies the answers.
func (s *shared) exchange(pipe redis.Pipeliner, ctx context.Context, now time.Time) func() {
	s.mu.Lock()
	gen := s.known.gen
	s.mu.Unlock()
	state := pipe.HMGet(ctx, s.key, "gen", "state", "until", "epoch")
	judgeRun := s.exchangeRun(pipe, ctx, gen)
	win := s.cfg.Window
	if win <= 0 || !s.windowRule() {
		return func() {
			newGen := s.applyRead(state)
			if judgeRun != nil {
				judgeRun(newGen)
			}
		}
	}
	keys := s.windowKeys(gen, now)
	calls, fails, slow := s.calls.Swap(0), s.fails.Swap(0), s.slow.Swap(0)
	flushed := calls > 0
	if flushed {
		k := keys[len(keys)-1] // the current bucket
		pipe.HIncrBy(ctx, k, "calls", calls)
		pipe.HIncrBy(ctx, k, "fails", fails)
		pipe.HIncrBy(ctx, k, "slow", slow)
		pipe.PExpire(ctx, k, 2*win+s.bucket())
	}
	reads := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		reads[i] = pipe.HMGet(ctx, k, "calls", "fails", "slow")
	}
	return func() {
		if err := pipeErr(append(reads, state)); err != nil {
			if judgeRun != nil {
				judgeRun(false) // its own commands failed too: it keeps its outcomes
			}
			if flushed {
				// Not taken: sent again next round, so outcomes
				// seen while Redis was down are merged, not lost.
				s.calls.Add(calls)
				s.fails.Add(fails)
				s.slow.Add(slow)
			}
			return
		}
		newGen := s.applyRead(state)
		if judgeRun != nil {
			judgeRun(newGen)
		}
		if newGen {
			return // a new generation: this window is of the past one
		}
		var c, fl, sl int64
		for _, r := range reads {
			v := r.Val()
			if len(v) == 3 {
				c += num(v[0])
				fl += num(v[1])
				sl += num(v[2])
			}
		}
		s.judge(c, fl, sl)
	}
}

// windowKeys returns the keys of generation gen's window buckets at now,
// oldest first.
func (s *shared) windowKeys(gen uint64, now time.Time) []string {
	bucket := s.bucket()
	idx := now.UnixMilli() / bucket.Milliseconds()
	n := int64(s.cfg.Window / bucket)
	keys := make([]string, 0, n)
	g := strconv.FormatUint(gen, 10)
	for i := idx - n + 1; i <= idx; i++ {
		keys = append(keys, s.key+":w:"+g+":"+strconv.FormatInt(i, 10))
	}
	return keys
}

// pipeErr returns the first error among cmds.
func pipeErr(cmds []*redis.SliceCmd) error {
	for _, c := range cmds {
		if c.Err() != nil {
			return c.Err()
		}
	}
	return nil
}

// num reads a counter HMGET returned (nil: 0).
func num(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// bucket is the width of a window bucket: the breaker's own, never below
// 100ms.
func (s *shared) bucket() time.Duration {
	n := s.cfg.Buckets
	if n <= 0 {
		n = breaker.DefaultBuckets
	}
	return max(s.cfg.Window/time.Duration(n), 100*time.Millisecond)
}

// windowRule reports whether the breaker has a rule over its window.
func (s *shared) windowRule() bool {
	c := s.cfg
	return c.FailureThreshold > 0 || c.FailureRate > 0 || c.SlowCallRate > 0
}

// judge applies the breaker's window rules to the fleet's window: a closed
// breaker that the fleet's outcomes trip is tripped here, and the trip is
// announced to all.
func (s *shared) judge(calls, fails, slow int64) {
	b := s.b.Load()
	if b == nil || b.State() != breaker.StateClosed || calls == 0 {
		return
	}
	c := s.cfg
	trip := c.FailureThreshold > 0 && fails >= int64(c.FailureThreshold)
	if calls >= int64(max(c.MinCalls, 1)) {
		trip = trip || c.FailureRate > 0 && float64(fails)/float64(calls) >= c.FailureRate
		trip = trip || c.SlowCallRate > 0 && float64(slow)/float64(calls) >= c.SlowCallRate
	}
	if trip {
		b.Trip(breaker.ReasonExternal)
	}
}

// applyRead applies the fleet's state read from Redis, reporting whether
// it was a new generation.
func (s *shared) applyRead(cmd *redis.SliceCmd) bool {
	v := cmd.Val()
	if len(v) != 4 || v[0] == nil {
		return false
	}
	gen, _ := strconv.ParseUint(toString(v[0]), 10, 64)
	until, _ := strconv.ParseInt(toString(v[2]), 10, 64)
	st, _ := v[1].(string)
	epoch, _ := v[3].(string)
	return s.apply(fleetState{epoch: epoch, gen: gen, state: st, until: until})
}

// apply makes the local breaker match the fleet's state st, if it is
// newer than what this replica knows; it reports whether it was.
func (s *shared) apply(st fleetState) bool {
	s.mu.Lock()
	if st.epoch == s.known.epoch && st.gen <= s.known.gen {
		s.mu.Unlock()
		return false
	}
	s.known = st
	s.mu.Unlock()
	b := s.b.Load()
	if b == nil {
		return true
	}
	switch st.state {
	case "open":
		s.until.Store(max(s.until.Load(), st.until))
		b.OpenUntil(time.UnixMilli(st.until))
	case "closed":
		if m := b.State(); m == breaker.StateForcedOpen || m == breaker.StateForcedClosed || m == breaker.StateDisabled {
			b.Reset()
		} else {
			b.CloseRemote()
		}
	case "forced_open":
		b.ForceOpen()
	case "forced_closed":
		b.ForceClosed()
	case "disabled":
		b.Disable()
	}
	return true
}

// probeScript takes one of max half-open probe permits for a generation.
var probeScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then return 0 end
return 1
`)

// probeGate asks the fleet for a half-open probe permit: one of the
// breaker's probes across all replicas for this open period. This is the
// one call on the request path that waits on Redis, bounded by Timeout;
// without an answer the local breaker decides alone.
func (s *shared) probeGate() bool {
	ctx, cancel := s.f.ctx()
	defer cancel()
	probes := max(s.cfg.HalfOpenProbes, 1)
	wait := s.cfg.HalfOpenMaxWait
	if wait <= 0 {
		wait = breaker.DefaultHalfOpenMaxWait
	}
	n, err := probeScript.Run(ctx, s.f.rdb, []string{s.key + ":p:" + strconv.FormatInt(s.until.Load(), 10)}, probes, (2 * wait).Milliseconds()).Int64()
	if !s.f.result("probe_permit", err) {
		s.f.fallback("probe_permit")
		return true
	}
	return n == 1
}

// announcement is a transition another replica announced.
type announcement struct {
	name  string
	state fleetState
}

// parseAnnouncement reads "epoch|gen|state|until|target".
func parseAnnouncement(p string) (announcement, bool) {
	parts := strings.SplitN(p, "|", 5)
	if len(parts) != 5 || parts[0] == "" {
		return announcement{}, false
	}
	gen, err1 := strconv.ParseUint(parts[1], 10, 64)
	until, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil {
		return announcement{}, false
	}
	return announcement{name: parts[4], state: fleetState{epoch: parts[0], gen: gen, state: parts[2], until: until}}, true
}
