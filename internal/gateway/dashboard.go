package gateway

import (
	_ "embed"
	"net/http"
)

//go:embed dashboard/index.html
var dashboardHTML []byte

// handleDashboard serves the live dashboard: one self-contained page (no
// build step, no external asset; its charts are hand-drawn SVG) that
// reads GET /fusebox/events with the admin token in a header, falling
// back to polling /fusebox/status. The page holds no data of its own, so
// it is served to anyone while the admin API is on; it takes the token
// once (from a #token= or ?token= it was opened with, or typed in), keeps
// it in the tab's session storage, and takes it out of the URL and the
// history entry at once.
func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	s.writePage(w, dashboardHTML)
}

//go:embed dashboard/requests.html
var requestsHTML []byte

// handleRequestsPage serves the request log's view: filters over GET
// /fusebox/requests, with the dashboard's token (this tab's session
// storage). Like the dashboard it holds no data of its own.
func (s *Server) handleRequestsPage(w http.ResponseWriter, r *http.Request) {
	s.writePage(w, requestsHTML)
}

// writePage serves one of the embedded pages while the admin API is on,
// locked down: no referrer, no sniffing, nothing loaded from elsewhere,
// never framed.
func (s *Server) writePage(w http.ResponseWriter, page []byte) {
	if s.state().cfg.AdminToken.Value() == "" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "admin_disabled", "",
			"The admin API is off: set admin_token in the configuration to turn it on.")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Write(page)
}
