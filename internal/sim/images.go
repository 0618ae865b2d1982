package sim

import (
	"encoding/base64"
	"net/http"
)

// imageRequest is the part of POST /v1/images/generations the sim reads.
type imageRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	N      *int   `json:"n"`
}

// image is one generated image.
type image struct {
	B64JSON string `json:"b64_json"`
}

// handleImages serves POST /v1/images/generations synchronously, as a
// non-streamed chat completion is served: faults, rate limits and latency
// apply alike. Each image is a few bytes drawn from the seed, base64'd.
func (s *Server) handleImages(w http.ResponseWriter, r *http.Request) {
	s.stats.receive(apiImages)
	var req imageRequest
	if !s.readRequest(w, r, &req) {
		return
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	switch {
	case req.Prompt == "":
		s.badRequest(w, http.StatusBadRequest, "prompt", "", "'prompt' is required.")
		return
	case n < 1 || n > 10:
		s.badRequest(w, http.StatusBadRequest, "n", "integer_above_max_value", "'n' must be from 1 to 10.")
		return
	case !s.checkModel(w, req.Model):
		return
	}
	p := s.decide(false, 0)
	if s.refuse(w, r, &p, false) {
		return
	}
	if err := s.sleep(r.Context(), p.wait+p.extra); err != nil {
		s.stats.finish(OutcomeCanceled)
		return
	}
	data := make([]image, n)
	for i := range data {
		data[i].B64JSON = base64.StdEncoding.EncodeToString(contentBlock(req.Prompt)[:48+i])
	}
	s.stats.images.Add(int64(n))
	s.stats.finish(OutcomeOK)
	p.limit.headers.set(w.Header())
	writeJSON(w, http.StatusOK, struct {
		Created int64   `json:"created"`
		Data    []image `json:"data"`
	}{p.now.Unix(), data})
}
