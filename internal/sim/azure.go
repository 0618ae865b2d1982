package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
)

// azurePaths lists the Azure OpenAI routes: deployment paths take the
// model from the URL and need ?api-version=; v1 paths read it from the
// body.
var azurePaths = [...]struct {
	pattern    string
	api        api
	deployment bool
}{
	{"POST /openai/deployments/{deployment}/chat/completions", apiAzureChat, true},
	{"POST /openai/deployments/{deployment}/embeddings", apiAzureEmbeddings, true},
	{"POST /openai/v1/chat/completions", apiAzureChat, false},
	{"POST /openai/v1/embeddings", apiAzureEmbeddings, false},
	{"POST /openai/v1/responses", apiAzureResponses, false},
}

// azureHandler serves one Azure OpenAI route: the call is answered by the
// OpenAI engine of its API (chat completions, embeddings, responses), its
// refusals rewritten as Azure sends them.
func (s *Server) azureHandler(a api, deployment bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if deployment && r.URL.Query().Get("api-version") == "" {
			writeAzureError(w, http.StatusNotFound, "404", "Resource not found")
			return
		}
		if !s.azureAuthorized(r) {
			s.stats.receive(a)
			s.stats.finish(OutcomeUnauthorized)
			writeAzureError(w, http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. "+
				"Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
			return
		}
		if deployment {
			body, bad := readBody(w, r)
			if bad != 0 {
				s.stats.receive(a)
				s.badRequest(w, bad, "", "", "Could not read the request body.")
				return
			}
			f := aireq.Scan(body)
			if f.Conflict.Reason != "" {
				s.stats.receive(a)
				s.badRequest(w, http.StatusBadRequest, f.Conflict.Field, "", "The request's "+f.Conflict.String()+".")
				return
			}
			body = withModel(f, body, r.PathValue("deployment"))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		aw := &azureWriter{ResponseWriter: w}
		switch a {
		case apiAzureChat:
			s.serveChat(aw, r, a)
		case apiAzureEmbeddings:
			s.serveEmbeddings(aw, r, a)
		default:
			s.serveResponses(aw, r, a)
		}
		aw.finish()
	}
}

// azureAuthorized checks an api-key header against Azure.Keys, or an
// Authorization: Bearer token against the tokens the sim issued.
func (s *Server) azureAuthorized(r *http.Request) bool {
	if k := r.Header.Get("Api-Key"); k != "" {
		return keyAccepted(s.cfg.Azure.Keys, k)
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return s.issued.tokenValid(t, s.clk.Now())
	}
	return false
}

// withModel returns body with its model set to model: replaced, or added
// as the first member when absent. A body that is not an object is left
// for the engine to refuse.
func withModel(f aireq.Fields, body []byte, model string) []byte {
	if f.Model != nil || !f.Object {
		return f.WithModel(body, model)
	}
	i := bytes.IndexByte(body, '{')
	q, _ := json.Marshal(model)
	out := make([]byte, 0, len(body)+len(q)+10)
	out = append(append(append(out, body[:i+1]...), `"model":`...), q...)
	if rest := bytes.TrimLeft(body[i+1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, body[i+1:]...)
}

// azureWriter passes a 200 answer through and holds back an error answer,
// which finish rewrites as Azure sends it. Unwrap lets the engine flush,
// and hijack the connection for a reset.
type azureWriter struct {
	http.ResponseWriter
	status int
	held   bytes.Buffer
}

func (aw *azureWriter) Unwrap() http.ResponseWriter { return aw.ResponseWriter }

func (aw *azureWriter) WriteHeader(status int) {
	if aw.status != 0 {
		return
	}
	aw.status = status
	if status == http.StatusOK {
		aw.ResponseWriter.WriteHeader(status)
	}
}

func (aw *azureWriter) Write(b []byte) (int, error) {
	if aw.status == 0 {
		aw.WriteHeader(http.StatusOK)
	}
	if aw.status != http.StatusOK {
		if aw.held.Len() < 64<<10 {
			aw.held.Write(b)
		}
		return len(b), nil
	}
	return aw.ResponseWriter.Write(b)
}

// finish writes a held-back error: throttles (429, with the engine's
// retry-after and retry-after-ms), server errors (529 as 503) and key
// refusals as {"error":{"code","message"}}; content-filter refusals and
// the engine's 400s are already Azure's shape and pass as they are.
func (aw *azureWriter) finish() {
	if aw.status == 0 || aw.status == http.StatusOK {
		return
	}
	w := aw.ResponseWriter
	var e struct {
		Error struct {
			Message string
			Code    json.RawMessage
		}
	}
	json.Unmarshal(aw.held.Bytes(), &e)
	status := aw.status
	switch {
	case status == http.StatusTooManyRequests:
		after := cmp.Or(w.Header().Get("Retry-After"), "1")
		writeAzureError(w, status, "429", "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version have exceeded "+
			"the rate limit of your current pricing tier. Please retry after "+after+" seconds. ("+e.Error.Message+")")
	case status == http.StatusUnauthorized:
		writeAzureError(w, status, "401", "Access denied due to invalid subscription key or wrong API endpoint. "+
			"Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
	case status >= 500:
		if status == 529 {
			status = http.StatusServiceUnavailable
		}
		code := "InternalServerError"
		if status == http.StatusServiceUnavailable {
			code = "ServiceUnavailable"
		}
		writeAzureError(w, status, code, e.Error.Message)
	default:
		w.Header().Set("Content-Length", strconv.Itoa(aw.held.Len()))
		w.WriteHeader(status)
		w.Write(aw.held.Bytes())
	}
}

// writeAzureError writes Azure's error shape: {"error":{"code","message"}}.
func writeAzureError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
}
