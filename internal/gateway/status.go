package gateway

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// admin reports whether the request carries the admin token as
// Authorization: Bearer, answering 401/404 otherwise. With no admin token
// configured the admin endpoints are off. The token is never taken from
// the URL, where browser history, proxies and logs would keep it.
func (s *Server) admin(w http.ResponseWriter, r *http.Request) bool {
	want := s.state().cfg.AdminToken.Value()
	if want == "" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "admin_disabled", "",
			"The admin API is off: set admin_token in the configuration to turn it on.")
		return false
	}
	if !bearer(r, want) {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_admin_token", "",
			"This endpoint needs the admin token (Authorization: Bearer <admin_token>).")
		return false
	}
	return true
}

// bearer reports whether r carries Authorization: Bearer want, compared
// in constant time.
func bearer(r *http.Request, want string) bool {
	a := r.Header.Get("Authorization")
	if len(a) <= 7 || !strings.EqualFold(a[:7], "bearer ") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(a[7:]), []byte(want)) == 1
}

// statusTarget is one target in the status document.
type statusTarget struct {
	Name         string  `json:"name"`
	State        string  `json:"state"`
	RetryAfterMS int64   `json:"retry_after_ms"`
	WindowCalls  int64   `json:"window_calls"`
	FailureRate  float64 `json:"failure_rate"`
	SlowCallRate float64 `json:"slow_call_rate"`
	Consecutive  int64   `json:"consecutive_failures"`
	Allowed      uint64  `json:"allowed"`
	Rejected     uint64  `json:"rejected"`
	Succeeded    uint64  `json:"succeeded"`
	Failed       uint64  `json:"failed"`
	Ignored      uint64  `json:"ignored"`
	LatencyMS    float64 `json:"latency_ms"`
	TTFBMS       float64 `json:"ttfb_ms"`
	ErrorRate    float64 `json:"error_rate"`
}

type statusModel struct {
	Name     string   `json:"name"`
	Strategy string   `json:"strategy"`
	Targets  []string `json:"targets"`
}

// handleStatus serves the breakers and health of every target as JSON, for
// the dashboard and operators. It never includes keys.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	doc := struct {
		Time    time.Time         `json:"time"`
		Models  []statusModel     `json:"models"`
		Targets []statusTarget    `json:"targets"`
		Keys    []router.KeyState `json:"keys"`
	}{Time: s.clk.Now(), Keys: s.Router().Keys()}
	for _, a := range s.Router().Aliases() {
		m := statusModel{Name: a.Name, Strategy: a.Strategy.String()}
		for _, t := range a.Targets {
			m.Targets = append(m.Targets, t.Name)
		}
		doc.Models = append(doc.Models, m)
	}
	for _, t := range ladderOrder(s.Router()) {
		b, h := t.Breaker().Snapshot(), t.Health()
		doc.Targets = append(doc.Targets, statusTarget{
			Name: t.Name, State: b.State.String(), RetryAfterMS: b.RetryAfter.Milliseconds(),
			WindowCalls: b.Calls, FailureRate: b.FailureRate, SlowCallRate: b.SlowCallRate, Consecutive: b.ConsecutiveFailures,
			Allowed: b.Totals.Allowed, Rejected: b.Totals.Rejected, Succeeded: b.Totals.Succeeded,
			Failed: b.Totals.Failed, Ignored: b.Totals.Ignored,
			LatencyMS: float64(h.Latency) / 1e6, TTFBMS: float64(h.TTFB) / 1e6, ErrorRate: h.ErrorRate,
		})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(doc)
}

// ladderOrder lists the router's targets as the aliases' ladders list
// them, in the order of the configuration, then the others (provider/model
// requests) by name.
func ladderOrder(r *router.Router) []*router.Target {
	seen := map[*router.Target]bool{}
	var out []*router.Target
	for _, a := range r.Aliases() {
		for _, t := range a.Targets {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	for _, t := range r.Targets() {
		if !seen[t] {
			out = append(out, t)
		}
	}
	return out
}
