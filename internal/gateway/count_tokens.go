package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
)

// handleCountTokens answers POST /v1/messages/count_tokens: the first
// Anthropic target of the model that can take it counts the tokens (it
// costs nothing); with none, the answer is an estimate, marked with
// x-fusebox-token-count: estimate.
func (s *Server) handleCountTokens(rw http.ResponseWriter, r *http.Request) {
	x := s.newExchange(rw, r, true)
	w := x.rec
	w.Header().Set("X-Request-Id", x.id)
	c, ok := s.authenticate(x.st, w, r)
	if !ok {
		return
	}
	body, ok := x.readBody()
	if !ok {
		return
	}
	f := aireq.Scan(body)
	if cf := f.Conflict; cf.Reason != "" {
		x.ambiguous(cf)
		return
	}
	var req countRequest
	if !f.Object || json.Unmarshal(body, &req) != nil {
		x.badRequest("", "The body must be a JSON object with model and messages.")
		return
	}
	model := f.ModelName()
	alias, known := x.st.router.Lookup(model)
	switch {
	case model == "":
		x.badRequest("model", "model: Field required")
		return
	case !c.allows(model):
		x.error(http.StatusForbidden, "permission_error", "model_not_allowed", "model", "Your key is not allowed to use the model `"+model+"`.")
		return
	case !known:
		x.error(http.StatusNotFound, "not_found_error", "model_not_found", "model", "The model `"+model+"` does not exist.")
		return
	}
	header := forwardHeaders(r.Header, x.st.forward) // anthropic-version and -beta, as /v1/messages
	for _, t := range alias.Targets {
		resp, sent, err := x.st.router.SendNative(r.Context(), t, anthropic.CountTokensPath, f.WithModel(body, t.Model), header)
		if !sent || err != nil {
			continue
		}
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Fusebox-Target", t.Name)
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			return
		}
		resp.Body.Close()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Fusebox-Token-Count", "estimate")
	w.Write([]byte(`{"input_tokens":` + strconv.Itoa(req.estimate()) + `}`))
}

// countRequest is what an estimate reads of a count_tokens body.
type countRequest struct {
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools json.RawMessage `json:"tools"`
}

// estimate counts about four bytes of text a token, and a few tokens a
// message for its framing: the usual rough rule for English text, close
// enough to choose a context window or a price, not to bill.
func (c countRequest) estimate() int {
	n := len(c.System) + len(c.Tools)
	for _, m := range c.Messages {
		n += len(m.Content) + 12
	}
	return max(1, (n+3)/4)
}
