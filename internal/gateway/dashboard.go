package gateway

import (
	_ "embed"
	"net/http"
)

//go:embed dashboard/index.html
var dashboardHTML []byte

// handleDashboard serves the live dashboard: one self-contained page that
// polls /fusebox/status with the admin token it was opened with.
func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
	w.Write(dashboardHTML)
}
