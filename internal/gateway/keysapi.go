package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/internal/keys"
)

// The admin API of minted client keys, behind the admin token:
//
//	POST   /fusebox/keys        mint: {"name","models","limits","budget","weight"} → 201, the key shown once
//	GET    /fusebox/keys        list
//	GET    /fusebox/keys/{id}   one
//	PATCH  /fusebox/keys/{id}   change models, limits, budget, weight; {"rotate":true} for a new key
//	DELETE /fusebox/keys/{id}   revoke
//
// A key is never shown again after minting (or rotating): only its hint.

// maxKeyBody bounds an admin body: a key's settings are a few hundred
// bytes.
const maxKeyBody = 64 << 10

// keyView is a key as the admin API shows it: never its hash.
type keyView struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Name    string      `json:"name"`
	Key     string      `json:"key,omitempty"` // after minting or rotating only
	Hint    string      `json:"hint"`
	Models  []string    `json:"models"`
	Limits  keys.Limits `json:"limits"`
	Budget  keys.Budget `json:"budget"`
	Weight  int         `json:"weight"`
	Created time.Time   `json:"created"`
	Updated time.Time   `json:"updated"`
	// Shadowed: a configured client has this name, and wins; the key is
	// refused until one of them is renamed.
	Shadowed bool `json:"shadowed,omitempty"`
}

func (s *Server) viewOf(r keys.Record, token string) keyView {
	models := r.Models
	if models == nil {
		models = []string{}
	}
	return keyView{ID: r.ID, Object: "fusebox.key", Name: r.Name, Key: token, Hint: r.Hint, Models: models,
		Limits: r.Limits, Budget: r.Budget, Weight: r.Weight, Created: r.Created, Updated: r.Updated,
		Shadowed: s.configured(r.Name)}
}

// configured reports whether the configuration has a client named name.
func (s *Server) configured(name string) bool {
	for _, c := range s.state().clients {
		if c.name == name {
			return true
		}
	}
	return false
}

// keysAdmin checks the admin token and that keys can be minted.
func (s *Server) keysAdmin(w http.ResponseWriter, r *http.Request) bool {
	if !s.admin(w, r) {
		return false
	}
	if s.keys == nil {
		writeError(w, http.StatusConflict, "invalid_request_error", "keys_unavailable", "",
			"Minted keys need somewhere to be kept: set keys.file in the configuration (or run a fleet, state: redis://…).")
		return false
	}
	return true
}

// readAdminBody reads a bounded admin body, answering 413 past the bound.
func readAdminBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxKeyBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large", "",
			"The body is larger than "+strconv.Itoa(maxKeyBody)+" bytes.")
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "The body could not be read.")
		return nil, false
	}
	return body, true
}

// badKeyBody answers a body that did not decode, naming its field.
func badKeyBody(w http.ResponseWriter, err error) {
	var fe *keys.FieldError
	if errors.As(err, &fe) {
		msg := fe.Msg
		if fe.Field != "" {
			msg = fe.Field + ": " + msg
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_key_settings", fe.Field, msg)
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_key_settings", "", err.Error())
}

// unknownModel returns the first of models no alias or provider answers
// to, and its index.
func (s *Server) unknownModel(models []string) (int, string) {
	rt := s.Router()
	for i, m := range models {
		if _, ok := rt.Lookup(m); !ok {
			return i, m
		}
	}
	return -1, ""
}

func (s *Server) handleMint(w http.ResponseWriter, r *http.Request) {
	if !s.keysAdmin(w, r) {
		return
	}
	body, ok := readAdminBody(w, r)
	if !ok {
		return
	}
	spec, err := keys.DecodeSpec(body)
	if err != nil {
		badKeyBody(w, err)
		return
	}
	if !s.modelsKnown(w, spec.Models) {
		return
	}
	if s.configured(spec.Name) {
		writeError(w, http.StatusConflict, "invalid_request_error", "name_taken", "name",
			"The configuration has a client named "+quote(spec.Name)+"; it would win over this key. Choose another name.")
		return
	}
	rec, token, err := s.keys.Mint(r.Context(), spec)
	if !s.keyStored(w, err, spec.Name) {
		return
	}
	s.log.Warn("admin key minted", "key", rec.ID, "client", rec.Name, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusCreated, s.viewOf(rec, token))
}

// modelsKnown answers 400 for a model nothing answers to.
func (s *Server) modelsKnown(w http.ResponseWriter, models []string) bool {
	if i, m := s.unknownModel(models); i >= 0 {
		p := "models[" + strconv.Itoa(i) + "]"
		writeError(w, http.StatusBadRequest, "invalid_request_error", "model_not_found", p,
			p+": no model alias or provider is named "+quote(m)+".")
		return false
	}
	return true
}

// keyStored answers the error of a store's change, if any.
func (s *Server) keyStored(w http.ResponseWriter, err error, name string) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, keys.ErrNameTaken):
		writeError(w, http.StatusConflict, "invalid_request_error", "name_taken", "name",
			"A minted key is already named "+quote(name)+".")
	case errors.Is(err, keys.ErrNotFound):
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_key", "id", "No minted key with this id.")
	default:
		s.log.Error("key store", "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, "api_error", "keys_unavailable", "",
			"The key store could not be written; nothing changed. Try again.")
	}
	return false
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request) {
	if !s.keysAdmin(w, r) {
		return
	}
	list := s.keys.Snapshot().List()
	data := make([]keyView, 0, len(list))
	for _, rec := range list {
		data = append(data, s.viewOf(rec, ""))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) handleGetKey(w http.ResponseWriter, r *http.Request) {
	if !s.keysAdmin(w, r) {
		return
	}
	rec := s.keys.Snapshot().Get(r.PathValue("id"))
	if rec == nil {
		s.keyStored(w, keys.ErrNotFound, "")
		return
	}
	writeJSON(w, http.StatusOK, s.viewOf(*rec, ""))
}

func (s *Server) handleChangeKey(w http.ResponseWriter, r *http.Request) {
	if !s.keysAdmin(w, r) {
		return
	}
	body, ok := readAdminBody(w, r)
	if !ok {
		return
	}
	p, err := keys.DecodePatch(body)
	if err != nil {
		badKeyBody(w, err)
		return
	}
	if p.Models != nil && !s.modelsKnown(w, *p.Models) {
		return
	}
	rec, token, err := s.keys.Change(r.Context(), r.PathValue("id"), p)
	if !s.keyStored(w, err, "") {
		return
	}
	s.log.Warn("admin key changed", "key", rec.ID, "client", rec.Name, "rotated", p.Rotate, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, s.viewOf(rec, token))
}

func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request) {
	if !s.keysAdmin(w, r) {
		return
	}
	id := r.PathValue("id")
	if err := s.keys.Revoke(r.Context(), id); !s.keyStored(w, err, "") {
		return
	}
	s.log.Warn("admin key revoked", "key", id, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "fusebox.key", "deleted": true})
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
