package gateway

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// Three replicas on one Redis are one gateway to a dead primary: the
// replica that sees it fail trips it for all, and the others refuse it
// without sending it a failing call of their own, so the fleet sends the
// dead primary what one replica would. With state: memory each replica
// learns the outage for itself.
func TestReplicasShareAnOutage(t *testing.T) {
	for _, tc := range []struct {
		state    string
		replicas int // that send the primary its failing calls
	}{
		{"redis", 1},
		{"memory", 3},
	} {
		t.Run(tc.state, func(t *testing.T) {
			state := ""
			if tc.state == "redis" {
				state = "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms}\n"
			}
			p := newUpstream(t, status(http.StatusServiceUnavailable, "overloaded_error"))
			s := newUpstream(t, chatOK("secondary"))
			// No same-target retry: each request sends the primary one call.
			cfg := state + strings.Replace(twoTargets, "retry: {attempts: 1}", "retry: {attempts: 1, same_target_wait: 0s}", 1)
			var srvs []*Server
			var urls []string
			for range 3 {
				srv, gw := gateway(t, nil, cfg, p, s)
				srvs = append(srvs, srv)
				urls = append(urls, gw.URL)
			}
			primary := func(i int) breaker.State { return primaryOf(t, srvs[i]).Breaker().State() }
			// Replica A meets the outage: three failed calls trip it.
			for range 3 {
				if c, _ := chat(t, urls[0]); c != 200 {
					t.Fatalf("A answered %d; the secondary should have served", c)
				}
			}
			if primary(0) != breaker.StateOpen {
				t.Fatal("A's breaker for the primary did not trip")
			}
			perReplica := p.calls()
			if tc.replicas == 1 {
				for i := 1; i < 3; i++ {
					eventually(t, "the trip on the other replicas", func() bool { return primary(i) == breaker.StateOpen })
				}
			}
			for i := 1; i < 3; i++ {
				for range 3 {
					if c, _ := chat(t, urls[i]); c != 200 {
						t.Fatalf("replica %d answered %d", i, c)
					}
				}
			}
			if got, want := p.calls(), tc.replicas*perReplica; got != want {
				t.Errorf("the dead primary got %d calls from the fleet, want %d (%d from one replica)", got, want, perReplica)
			}
		})
	}
}

// chat sends one chat completion (with the client key, if given) and
// returns its status and body.
func chat(t *testing.T, base string, key ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	if len(key) > 0 {
		req.Header.Set("Authorization", "Bearer "+key[0])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// A client's budget is one figure for the fleet: 50 concurrent requests
// spread over three replicas, against a budget worth three, spend no more
// than the budget (each replica alone would let three through: nine);
// afterwards every replica sees the same spending.
func TestReplicasShareABudget(t *testing.T) {
	// A timeout generous for a loaded test machine: what is tested here is
	// the shared figure, not the fallback when Redis is slow.
	state := "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms, timeout: 2s}\n"
	release := make(chan struct{})
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		<-release // all 50 are admitted or refused before any answers
		chatOK("primary")(w, r, n)
	})
	s := newUpstream(t, chatOK("s"))
	// Each answer costs $0.00003; each request reserves about $0.00006.
	cfg := state + "clients:\n  - {name: web, key: kw, budget: {daily: 0.0002}}\n" + twoTargets
	var srvs []*Server
	var urls []string
	for range 3 {
		srv, gw := gateway(t, nil, cfg, p, s)
		srvs = append(srvs, srv)
		urls = append(urls, gw.URL)
	}
	ok := burst(t, p, release, 50, urls...)
	spent := float64(ok) * 0.00003
	if ok == 0 || spent > 0.0002 {
		t.Fatalf("%d served across the fleet, $%g spent of a $0.0002 budget", ok, spent)
	}
	for i, srv := range srvs {
		eventually(t, "replica "+strconv.Itoa(i)+" to see the fleet's spending", func() bool {
			left := srv.budgetsLeft()[0].Daily
			return math.Abs(left-(0.0002-spent)) < 1e-12
		})
	}
}

// Redis killed in the middle of traffic: no client request fails (a
// budgeted client's included: it is admitted from its replica's lease), the
// replicas say so (/readyz, fusebox_state_backend_up), and once Redis is
// back (empty) a trip on one replica reaches the other again.
func TestReplicasWhenRedisDies(t *testing.T) {
	for _, tc := range []struct {
		name        string
		lose, bring func(*redistest.Server)
	}{
		{"killed", (*redistest.Server).Stop, (*redistest.Server).Restart},
		{"hung (SIGSTOP)", (*redistest.Server).Pause, (*redistest.Server).Resume},
	} {
		t.Run(tc.name, func(t *testing.T) { replicasThroughARedisOutage(t, tc.lose, tc.bring) })
	}
}

// replicasThroughARedisOutage runs two replicas' traffic, budgeted and
// not, through Redis lost by lose and brought back by bring.
func replicasThroughARedisOutage(t *testing.T, lose, bring func(*redistest.Server)) {
	rs := redistest.Start(t)
	defer rs.Resume() // a hung server must wake for its cleanup
	p := newUpstream(t, chatOK("primary"))
	s := newUpstream(t, chatOK("secondary"))
	cfg := "state: " + rs.URL() + "\nfleet: {sync: 10ms, timeout: 20ms}\n" +
		"clients:\n  - {name: web, key: kw, budget: {daily: 100}}\n  - {name: open, key: ko}\n" + twoTargets
	a, ga := gateway(t, nil, cfg, p, s)
	b, gb := gateway(t, nil, cfg, p, s)
	ua, ub := ga.URL, gb.URL
	send := func(n int) {
		t.Helper()
		for i := range n {
			if c, body := chat(t, []string{ua, ub}[i%2], []string{"kw", "ko"}[i/2%2]); c != 200 {
				t.Fatalf("a request failed while Redis was down: %d %s", c, body)
			}
		}
	}
	send(10)
	// Busy replicas hold leases on the budget, from which they go on
	// admitting while Redis does not answer (docs/FLEET.md).
	for !(a.fleet.Ledger("web").Leased() > 1 && b.fleet.Ledger("web").Leased() > 1) {
		send(4)
	}
	lose(rs)
	send(20)
	for _, srv := range []*Server{a, b} {
		eventually(t, "the replica to see Redis lost", func() bool { return !srv.fleet.Up() })
	}
	resp, err := http.Get(ua + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	ready, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(ready), `"state":"degraded"`) {
		t.Errorf("/readyz while Redis is down: %d %s", resp.StatusCode, ready)
	}
	if m := scrape(t, ua); !strings.Contains(m, "fusebox_state_backend_up 0") {
		t.Error("fusebox_state_backend_up is not 0 while Redis is down")
	}
	bring(rs)
	eventually(t, "the replicas to see Redis back", func() bool { return a.fleet.Up() && b.fleet.Up() })
	send(10)
	primaryOf(t, a).Breaker().ForceOpen()
	eventually(t, "the force-open on the other replica after Redis came back", func() bool {
		return primaryOf(t, b).Breaker().State() == breaker.StateForcedOpen
	})
	if m := scrape(t, ua); !strings.Contains(m, "fusebox_state_backend_up 1") {
		t.Error("fusebox_state_backend_up is not 1 once Redis is back")
	}
}

// primaryOf returns srv's target for the primary of twoTargets.
func primaryOf(t *testing.T, srv *Server) *router.Target {
	t.Helper()
	for _, tg := range srv.Router().Targets() {
		if tg.Name == "primary/gpt-4.1" {
			return tg
		}
	}
	t.Fatal("no primary target")
	return nil
}

// An Idempotency-Key resent to another replica gets the stored answer,
// byte for byte, without another upstream call; duplicates sent to two
// replicas at once make one upstream call; another body under the key is
// refused on any replica.
func TestReplicasShareIdempotencyKeys(t *testing.T) {
	state := "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms, timeout: 2s}\n"
	release := make(chan struct{})
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 2 {
			<-release // the second key's first call waits for its duplicate
		}
		chatOK("primary")(w, r, n)
	})
	cfg := state + twoTargets
	_, ga := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	sb, gb := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	waiting := make(chan struct{}, 1)
	sb.testHookIdemWait = func() { waiting <- struct{}{} }
	c1, _, b1 := post(t, ga.URL, "k1", hi)
	c2, h2, b2 := post(t, gb.URL, "k1", hi)
	if c1 != 200 || c2 != 200 || b1 != b2 {
		t.Fatalf("A: %d %s\nB: %d %s", c1, b1, c2, b2)
	}
	if h2.Get("X-Fusebox-Idempotent-Replay") != "true" {
		t.Error("B's answer was not a replay")
	}
	if n := p.calls(); n != 1 {
		t.Fatalf("%d upstream calls for one key over two replicas, want 1", n)
	}
	if c, _, b := post(t, gb.URL, "k1", `{"model":"smart","messages":[{"role":"user","content":"other"}]}`); c != 422 {
		t.Errorf("another body under the key on B: %d %s", c, b)
	}

	// Two at once, one per replica.
	answers := make(chan string, 2)
	go func() { _, _, b := post(t, ga.URL, "k2", hi); answers <- b }()
	eventually(t, "the first of the duplicates at the upstream", func() bool { return p.calls() == 2 })
	go func() { _, _, b := post(t, gb.URL, "k2", hi); answers <- b }()
	select {
	case <-waiting: // B waits on the fleet's record
	case <-time.After(10 * time.Second):
		t.Fatal("the duplicate on B never waited for A's request")
	}
	close(release)
	a, b := <-answers, <-answers
	if a != b || p.calls() != 2 {
		t.Errorf("duplicates on two replicas: %d upstream calls (want 2 in all), answers equal: %v", p.calls(), a == b)
	}
}

// A conversation keeps its target on another replica: served by the
// secondary on A (the primary failed its first call), it goes to the
// secondary first on B too; with state: memory, B starts from the primary.
func TestReplicasShareStickySessions(t *testing.T) {
	for _, tc := range []struct{ state, want string }{{"redis", "secondary/deepseek-chat"}, {"memory", "primary/gpt-4.1"}} {
		t.Run(tc.state, func(t *testing.T) {
			state := ""
			if tc.state == "redis" {
				state = "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms, timeout: 2s}\n"
			}
			p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					status(http.StatusServiceUnavailable, "overloaded_error")(w, r, n)
					return
				}
				chatOK("primary")(w, r, n)
			})
			s := newUpstream(t, chatOK("secondary"))
			cfg := state + strings.Replace(twoTargets, "retry: {attempts: 1}", "retry: {attempts: 1, same_target_wait: 0s}", 1)
			a, ga := gateway(t, nil, cfg, p, s)
			_, gb := gateway(t, nil, cfg, p, s)
			send := func(base string) string {
				t.Helper()
				req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
					strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`))
				req.Header.Set("X-Fusebox-Session", "conv-1")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.Header.Get("X-Fusebox-Target")
			}
			if got := send(ga.URL); got != "secondary/deepseek-chat" {
				t.Fatalf("A served the conversation from %q; want the secondary after the primary's 503", got)
			}
			if a.fleet != nil {
				a.fleet.Close() // sends what it served before it goes
			}
			if got := send(gb.URL); got != tc.want {
				t.Errorf("B served the conversation from %q, want %q", got, tc.want)
			}
		})
	}
}

// With cache.store: redis, an answer one replica cached is served by
// another from the fleet, fresh while it is and stale when no target can
// answer, and only to the client key it belongs to. With the memory store
// each replica has its own.
func TestReplicasShareTheCache(t *testing.T) {
	for _, store := range []string{"redis", "memory"} {
		t.Run(store, func(t *testing.T) {
			clk := clocktest.New(time.Time{})
			var down atomic.Bool
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if down.Load() {
					status(http.StatusServiceUnavailable, "overloaded_error")(w, r, n)
					return
				}
				counting(w, r, n)
			})
			cfg := "state: " + redistest.Start(t).URL() + "\nfleet: {timeout: 2s}\n" +
				strings.Replace(fmt.Sprintf(cachedModel, up.URL+"/v1", "client"), "scope: client}", "scope: client, store: "+store+"}", 1)
			a, ga := start(t, Options{Clock: clk}, cfg)
			_, gb := start(t, Options{Clock: clk}, cfg)
			_, gc := start(t, Options{Clock: clk}, cfg)
			if got, mark := ask(t, ga.URL, "key-alice", "smart"); got != "hello from answer 1" || mark != "miss" {
				t.Fatalf("A: %q (%s)", got, mark)
			}
			a.fleet.Close() // its sync round sends what it cached
			clk.Advance(time.Minute)
			want, wantMark := "hello from answer 1", "hit"
			if store == "memory" {
				want, wantMark = "hello from answer 2", "miss"
			}
			if got, mark := ask(t, gb.URL, "key-alice", "smart"); got != want || mark != wantMark {
				t.Fatalf("B: %q (%s); want %q (%s)", got, mark, want, wantMark)
			}
			if got, mark := ask(t, gb.URL, "key-bob", "smart"); mark != "miss" || got == "hello from answer 1" {
				t.Fatalf("another client key on B: %q (%s); want its own answer", got, mark)
			}
			if store == "memory" {
				return
			}
			if n := up.calls(); n != 2 {
				t.Errorf("%d upstream calls; want 2 (alice once for the fleet, bob once)", n)
			}
			// Past the TTL, with the upstream down, C (which never saw the
			// answer) serves it stale from the fleet.
			clk.Advance(10 * time.Minute)
			down.Store(true)
			if got, mark := ask(t, gc.URL, "key-alice", "smart"); got != "hello from answer 1" || mark != "stale" {
				t.Fatalf("C with the upstream down: %q (%s); want the stale answer", got, mark)
			}
		})
	}
}

// A 600 rpm target holds within 5 % over a whole minute (on the fake
// clock) while three replicas are offered twice that, round robin: what
// the primary receives is counted where it arrives. With state: memory
// each replica paces it alone, and the three send the primary all 1200.
func TestReplicasHoldATargetLimitOverAMinute(t *testing.T) {
	for _, tc := range []struct {
		state      string
		lo, hi     int // primary calls
		replicasOK func(*Server) bool
	}{
		{"redis", 570, 630, func(s *Server) bool { return s.fleet.Replicas() == 3 }},
		{"memory", 1200, 1200, func(*Server) bool { return true }},
	} {
		t.Run(tc.state, func(t *testing.T) {
			clk := clocktest.New(time.Unix(1_800_000_000, 0))
			state := ""
			if tc.state == "redis" {
				state = "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 50ms, timeout: 2s}\n"
			}
			p := newUpstream(t, chatOK("primary"))
			s := newUpstream(t, chatOK("secondary"))
			cfg := state + strings.Replace(twoTargets, `keys: [pk1, pk2]}`, `keys: [pk1], limits: {rpm: 600, max_wait: 1ms}}`, 1)
			var srvs []*Server
			var urls []string
			for range 3 {
				srv, gw := gateway(t, clk, cfg, p, s)
				srvs, urls = append(srvs, srv), append(urls, gw.URL)
			}
			for _, srv := range srvs {
				eventually(t, "every replica to count the fleet", func() bool {
					clk.Advance(time.Millisecond) // the sync rounds run on the fake clock
					return tc.replicasOK(srv)
				})
			}
			const step = 50 * time.Millisecond // 20 requests a second: 1200 rpm offered
			for i := range int(time.Minute / step) {
				if c, body := chat(t, urls[i%3]); c != 200 {
					t.Fatalf("request %d: %d %s", i, c, body)
				}
				clk.Advance(step)
			}
			got := p.calls()
			t.Logf("state %s: the primary (600 rpm) got %d of %d requests in a minute", tc.state, got, int(time.Minute/step))
			if got < tc.lo || got > tc.hi {
				t.Errorf("the primary (600 rpm) got %d requests in a minute from three replicas; want %d..%d", got, tc.lo, tc.hi)
			}
		})
	}
}

// A conversation stored through one replica continues on another: its
// previous_response_id is the fleet's.
func TestReplicasShareStoredResponses(t *testing.T) {
	up := newUpstream(t, chatOK("up"))
	cfg := "state: " + redistest.Start(t).URL() + "\nfleet: {timeout: 2s}\n" + twoTargets
	_, ga := gateway(t, nil, cfg, up, up)
	_, gb := gateway(t, nil, cfg, up, up)
	resp, err := http.Post(ga.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"smart","input":"remember 42"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := between(string(b), `"id":"`, `"`)
	if !strings.HasPrefix(id, "resp_") {
		t.Fatalf("no response id in %s", b)
	}
	get, err := http.Get(gb.URL + "/v1/responses/" + id)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("B does not find A's response: %d", get.StatusCode)
	}
	next, err := http.Post(gb.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"smart","input":"what number?","previous_response_id":"`+id+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	next.Body.Close()
	if next.StatusCode != 200 || !strings.Contains(up.bodies[len(up.bodies)-1], "remember 42") {
		t.Errorf("B continued the conversation with %d, sending %s", next.StatusCode, up.bodies[len(up.bodies)-1])
	}
}

// responses.max_entries bounds a client's stored responses in Redis too:
// past it the oldest is gone on every replica, the newest found on all.
func TestReplicasBoundStoredResponses(t *testing.T) {
	up := newUpstream(t, chatOK("up"))
	cfg := "state: " + redistest.Start(t).URL() + "\nfleet: {timeout: 2s}\nresponses: {max_entries: 2}\n" + twoTargets
	_, ga := gateway(t, nil, cfg, up, up)
	_, gb := gateway(t, nil, cfg, up, up)
	var ids []string
	for range 3 {
		resp, err := http.Post(gb.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"smart","input":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ids = append(ids, between(string(b), `"id":"`, `"`))
	}
	for _, g := range []string{ga.URL, gb.URL} {
		for i, want := range []int{404, 200, 200} {
			get, err := http.Get(g + "/v1/responses/" + ids[i])
			if err != nil {
				t.Fatal(err)
			}
			get.Body.Close()
			if get.StatusCode != want {
				t.Errorf("%s: response %d answered %d, want %d", g, i, get.StatusCode, want)
			}
		}
	}
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// A streamed answer kept under an Idempotency-Key is replayed byte for
// byte by another replica; and each client's records in Redis are held to
// idempotency.max_records: past it, the oldest key makes an upstream call
// again on a replica that never saw it, while the newest is replayed.
func TestReplicasReplayStreamsAndBoundEachClient(t *testing.T) {
	rs := redistest.Start(t)
	state := "state: " + rs.URL() + "\nfleet: {sync: 10ms, timeout: 2s}\nidempotency: {max_records: 2}\n"
	p := newUpstream(t, counting)
	cfg := state + twoTargets
	_, ga := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	_, gb := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	stream := `{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	c1, _, b1 := post(t, ga.URL, "s1", stream)
	c2, h2, b2 := post(t, gb.URL, "s1", stream)
	if c1 != 200 || c2 != 200 || b1 != b2 || !strings.Contains(b1, "data: [DONE]") {
		t.Fatalf("A: %d %q\nB: %d %q", c1, b1, c2, b2)
	}
	if h2.Get("X-Fusebox-Idempotent-Replay") != "true" || p.calls() != 1 {
		t.Fatalf("B's stream: replay %q, %d upstream calls; want a replay and 1 call", h2.Get("X-Fusebox-Idempotent-Replay"), p.calls())
	}
	post(t, ga.URL, "s2", hi)
	post(t, ga.URL, "s3", hi) // the client's third record: s1 goes from Redis
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	eventually(t, "the oldest record deleted by the next sync round", func() bool {
		keys, _ := rdb.Keys(t.Context(), "fusebox:{idem:*").Result()
		return len(keys) == 2
	})
	calls := p.calls()
	if _, h, _ := post(t, gb.URL, "s3", hi); h.Get("X-Fusebox-Idempotent-Replay") != "true" || p.calls() != calls {
		t.Errorf("the newest key on B: replay %q, %d new upstream calls", h.Get("X-Fusebox-Idempotent-Replay"), p.calls()-calls)
	}
	fresh := gateway // a replica that never saw s1 either
	_, gc := fresh(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	if _, h, _ := post(t, gc.URL, "s1", stream); h.Get("X-Fusebox-Idempotent-Replay") == "true" || p.calls() != calls+1 {
		t.Errorf("the client's oldest key past max_records was still replayed from Redis (%d new calls)", p.calls()-calls)
	}
}
