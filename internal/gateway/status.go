package gateway

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/mcpgw"
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

// statusDoc is the status document: GET /fusebox/status, and the status
// part of the dashboard's events. It never includes keys or tokens.
type statusDoc struct {
	Time time.Time `json:"time"`
	// IntervalMS is the sampling interval of the history.
	IntervalMS int64          `json:"interval_ms"`
	Models     []statusModel  `json:"models"`
	Targets    []statusTarget `json:"targets"`
	Keys       []statusKey    `json:"keys"`
	Totals     statusTotals   `json:"totals"`
	Clients    []statusClient `json:"clients"`
	// Timeline is the recent events, newest first (GET /fusebox/status
	// and the first event of a stream only).
	Timeline []timelineEntry `json:"timeline,omitempty"`
	// Jobs is each job target's breakers and cap (jobs:), if any.
	Jobs []statusJobTarget `json:"jobs,omitempty"`
	// MCP is each MCP server's replicas and their breakers (mcp:), if any.
	MCP []mcpgw.ServerStatus `json:"mcp,omitempty"`
}

// statusJobTarget is a job target: its submit and resubmit breakers, and
// its cap on jobs in flight (learned down on queue_full).
type statusJobTarget struct {
	Name     string `json:"name"`
	Submit   string `json:"submit_breaker"`
	Resubmit string `json:"resubmit_breaker"`
	Cap      int    `json:"cap"`
	InFlight int    `json:"in_flight"`
}

// statusModel is an alias and its ladder, in order.
type statusModel struct {
	Name     string   `json:"name"`
	Strategy string   `json:"strategy"`
	Targets  []string `json:"targets"`
}

// handleStatus serves the status document as JSON, for the dashboard and
// operators.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	doc := s.status(true)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(doc)
}

// status builds the status document, with the timeline if asked.
func (s *Server) status(withTimeline bool) statusDoc {
	st := s.state()
	now := s.clk.Now()
	doc := statusDoc{Time: now, IntervalMS: s.dash.hist.every.Milliseconds(), Models: []statusModel{},
		Targets: []statusTarget{}, Clients: []statusClient{}}
	for _, a := range st.router.Aliases() {
		m := statusModel{Name: a.Name, Strategy: a.Strategy.String(), Targets: []string{}}
		for _, t := range a.Targets {
			m.Targets = append(m.Targets, t.Name)
		}
		doc.Models = append(doc.Models, m)
	}
	reasons := s.keyReasons()
	doc.Keys = keysOf(st.router.Keys(), now, reasons)
	for _, t := range ladderOrder(st.router) {
		doc.Targets = append(doc.Targets, s.targetStatus(st, t, now, doc.Keys))
	}
	doc.Totals, doc.Clients = s.totals()
	if withTimeline {
		doc.Timeline = s.dash.timeline.recent()
	}
	if s.jobs != nil {
		for _, t := range s.jobs.Status() {
			doc.Jobs = append(doc.Jobs, statusJobTarget{t.Name, t.Submit, t.Resubmit, t.Cap, t.InFlight})
		}
	}
	doc.MCP = s.mcpStatus()
	return doc
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

// helloDoc is the first event of a dashboard stream: the status with the
// timeline, and every target's history.
func (s *Server) helloDoc() any {
	return struct {
		Status  statusDoc          `json:"status"`
		History map[string][]point `json:"history"`
		SpanMS  int64              `json:"span_ms"`
	}{s.status(true), s.dash.hist.points(), historySpan.Milliseconds()}
}

// publishSample sends the live streams the status and each target's new
// point, once per sample.
func (s *Server) publishSample(time.Time) {
	if s.dash.hub.count() == 0 {
		return
	}
	s.dash.hub.publish(encodeEvent("sample", struct {
		Status statusDoc        `json:"status"`
		Points map[string]point `json:"points"`
	}{s.status(false), s.dash.hist.latest()}))
}
