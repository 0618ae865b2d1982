package gateway

import (
	"math"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// burstBody is what burst sends; burstEstimate is what each of its
// requests reserves on twoTargets: a token per four bytes of the body at
// $2 per million, and its 3 output tokens at $8.
const (
	burstBody     = `{"model":"smart","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`
	burstEstimate = float64(len(burstBody)/4)*2/1e6 + 3*8/1e6
)

// budgetRuns is how many times TestReplicasHoldABudgetWhenRedisIsSlow
// runs its burst: FUSEBOX_BUDGET_RUNS, or 5.
func budgetRuns(t *testing.T) int {
	if s := os.Getenv("FUSEBOX_BUDGET_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("FUSEBOX_BUDGET_RUNS=%q: want a count", s)
		}
		return n
	}
	return 5
}

// Issue 30: a $0.0005 budget, 60 concurrent requests over three replicas,
// with fleet.timeout 1ms so that most Redis calls time out (and some of
// those are applied by Redis all the same): the fleet admits no more than
// the budget and one request's estimate per replica, run after run.
func TestReplicasHoldABudgetWhenRedisIsSlow(t *testing.T) {
	rs := redistest.Start(t)
	const budget, replicas, requests = 0.0005, 3, 60
	most := int(math.Floor((budget + replicas*burstEstimate) / burstEstimate))
	for run := range budgetRuns(t) {
		t.Run("run "+strconv.Itoa(run), func(t *testing.T) {
			cfg := "state: " + rs.URL() + "\nfleet: {sync: 10ms, timeout: 1ms, prefix: \"run" + strconv.Itoa(run) + ":\"}\n" +
				"clients:\n  - {name: web, key: kw, budget: {daily: 0.0005}}\n" + twoTargets
			release := make(chan struct{})
			p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
				<-release
				chatOK("primary")(w, r, n)
			})
			s := newUpstream(t, chatOK("s"))
			var urls []string
			for range replicas {
				_, gw := gateway(t, nil, cfg, p, s)
				urls = append(urls, gw.URL)
			}
			ok := burst(t, p, release, requests, urls...)
			t.Logf("%d of %d admitted, at most %d may be", ok, requests, most)
			if ok > most {
				t.Fatalf("%d of %d admitted ($%g reserved) against a $%g budget; at most %d may be (the budget and one request's $%g per replica)",
					ok, requests, float64(ok)*burstEstimate, budget, most, burstEstimate)
			}
		})
	}
}
