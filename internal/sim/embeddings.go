package sim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
)

// embeddingRequest is the part of an embeddings request the sim reads.
type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     int             `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// inputs returns the texts to embed (token arrays as their JSON) and their
// token count: a token per 4 bytes of text, or the length of a token array.
func (r *embeddingRequest) inputs() ([]string, int, bool) {
	var one string
	if json.Unmarshal(r.Input, &one) == nil {
		return []string{one}, max(1, (len(one)+3)/4), true
	}
	var many []string
	if json.Unmarshal(r.Input, &many) == nil && len(many) > 0 {
		n := 0
		for _, s := range many {
			n += max(1, (len(s)+3)/4)
		}
		return many, n, true
	}
	var ids []int
	if json.Unmarshal(r.Input, &ids) == nil && len(ids) > 0 {
		return []string{string(r.Input)}, len(ids), true
	}
	var idss [][]int
	if json.Unmarshal(r.Input, &idss) == nil && len(idss) > 0 {
		texts, n := make([]string, len(idss)), 0
		for i, v := range idss {
			b, _ := json.Marshal(v)
			texts[i], n = string(b), n+len(v)
		}
		return texts, n, true
	}
	return nil, 0, false
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	s.serveEmbeddings(w, r, apiEmbeddings)
}

// serveEmbeddings answers an embeddings call that came by API a.
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request, a api) {
	s.stats.receive(a)
	var req embeddingRequest
	if !s.readRequest(w, r, &req) {
		return
	}
	texts, tokens, ok := req.inputs()
	switch {
	case !ok:
		s.badRequest(w, http.StatusBadRequest, "input", "", "'input' must be a non-empty string, array of strings, or array of token arrays.")
		return
	case req.Dimensions < 0 || req.Dimensions > 4096:
		s.badRequest(w, http.StatusBadRequest, "dimensions", "", "'dimensions' must be between 1 and 4096.")
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		s.badRequest(w, http.StatusBadRequest, "encoding_format", "", "'encoding_format' must be 'float' or 'base64'.")
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	s.stats.input.Add(int64(tokens))
	p := s.decide(false, tokens)
	if s.refuse(w, r, &p, false) {
		return
	}
	if err := s.sleep(r.Context(), p.wait+p.extra); err != nil {
		s.stats.finish(OutcomeCanceled)
		return
	}
	dims := req.Dimensions
	if dims == 0 {
		dims = s.cfg.Output.dimensions()
	}
	data := make([]embedding, len(texts))
	for i, t := range texts {
		v := s.vector(t, dims)
		data[i] = embedding{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			data[i].Embedding = encodeBase64(v)
		}
	}
	s.stats.bill(tokens, 0)
	s.stats.finish(OutcomeOK)
	p.limit.headers.set(w.Header())
	writeJSON(w, http.StatusOK, embeddingList{Object: "list", Data: data, Model: req.Model,
		Usage: embeddingUsage{PromptTokens: tokens, TotalTokens: tokens}})
}

type embeddingList struct {
	Object string         `json:"object"`
	Data   []embedding    `json:"data"`
	Model  string         `json:"model"`
	Usage  embeddingUsage `json:"usage"`
}

type embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or a base64 string
}

type embeddingUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// vector returns a unit vector of dims drawn from the seed and text, so
// that the same text always embeds the same way.
func (s *Server) vector(text string, dims int) []float32 {
	h := fnv.New64a()
	io.WriteString(h, text)
	rng := rand.New(rand.NewPCG(s.cfg.Seed, h.Sum64()))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i], norm = float32(x), norm+x*x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// encodeBase64 encodes v as OpenAI's base64 format does: little-endian
// float32s.
func encodeBase64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
