package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/fuseboxhq/fusebox/breaker"
)

// handleReady answers 200 when every model alias has a target whose breaker
// is not refusing, and 503 naming the aliases that have none.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	var down []string
	for _, a := range s.Router().Aliases() {
		ok := false
		for _, t := range a.Targets {
			if st := t.Breaker().State(); st != breaker.StateOpen && st != breaker.StateForcedOpen {
				ok = true
				break
			}
		}
		if !ok {
			down = append(down, a.Name)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if len(down) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"ready": false, "models_without_target": down})
		return
	}
	switch {
	case s.fleet == nil:
		w.Write([]byte(`{"ready":true}` + "\n"))
	case s.fleet.Up():
		w.Write([]byte(`{"ready":true,"state":"shared"}` + "\n"))
	default:
		// Ready still: requests are served on this replica's own state.
		w.Write([]byte(`{"ready":true,"state":"degraded","detail":"Redis unreachable: this replica goes on with its own state"}` + "\n"))
	}
}

// handleBreaker lets an operator force a target's breaker open or closed,
// disable it or reset it: POST /fusebox/breaker?target=provider/model&action=…
// Every action is logged.
func (s *Server) handleBreaker(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	name, action := r.URL.Query().Get("target"), r.URL.Query().Get("action")
	var b *breaker.Breaker
	for _, t := range s.Router().Targets() {
		if t.Name == name {
			b = t.Breaker()
		}
	}
	if b == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_target", "target", "No target named "+quote(name)+".")
		return
	}
	switch action {
	case "force-open":
		b.ForceOpen()
	case "force-closed":
		b.ForceClosed()
	case "disable":
		b.Disable()
	case "reset":
		b.Reset()
	default:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "unknown_action", "action",
			"Unknown action "+quote(action)+": want force-open, force-closed, disable or reset.")
		return
	}
	s.log.Warn("admin breaker action", "target", name, "action", action, "state", b.State().String(), "remote", r.RemoteAddr)
	s.dash.admin(name, "", action, b.State().String())
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"target": name, "state": b.State().String()})
}

// handleKey lets an operator take a provider key out of the rotation or
// put it back: POST /fusebox/key?id=provider#0&action=disable|enable.
// Keys are named by ID only; the action is logged.
func (s *Server) handleKey(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	id, action := r.URL.Query().Get("id"), r.URL.Query().Get("action")
	if action != "enable" && action != "disable" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "unknown_action", "action",
			"Unknown action "+quote(action)+": want enable or disable.")
		return
	}
	if err := s.Router().SetKeyEnabled(id, action == "enable"); err != nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_key", "id", "No key with ID "+quote(id)+".")
		return
	}
	s.log.Warn("admin key action", "key", id, "action", action, "remote", r.RemoteAddr)
	s.dash.admin("", id, action, map[bool]string{true: "in rotation", false: "disabled"}[action == "enable"])
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"keys": s.Router().Keys()})
}

// handleReload reads the configuration file again and puts it in force:
// POST /fusebox/reload. A configuration that does not load is refused with
// a 422 naming each problem, and the old one stays in force. Logged.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	res, err := s.Reload()
	if err != nil {
		s.log.Error("admin reload refused", "error", err.Error(), "remote", r.RemoteAddr)
		status := http.StatusUnprocessableEntity
		if errors.Is(err, ErrNoLoader) {
			status = http.StatusNotImplemented
		}
		writeError(w, status, "invalid_request_error", "config_invalid", "",
			"The new configuration was refused and the old one stays in force: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	s.log.Warn("admin reload", "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}
