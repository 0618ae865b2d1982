package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/geminiapi"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// vertexAnthropicVersion is the anthropic_version Vertex AI requires of a
// Claude body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// handleGemini serves the Gemini API (AI Studio):
// POST /v1beta/models/{model}:generateContent, :streamGenerateContent and
// :countTokens, with the key in x-goog-api-key or ?key=.
func (s *Server) handleGemini(w http.ResponseWriter, r *http.Request) {
	model, method, _, ok := geminiapi.ParsePath(r.URL.Path)
	if !ok {
		geminiapi.WriteError(w, http.StatusNotFound, "", "Method not found.")
		return
	}
	if s.googleKeyOK(w, r, apiGemini, method) {
		s.serveGoogle(w, r, model, method, apiGemini)
	}
}

// googleKeyOK checks a call's API key (x-goog-api-key, or ?key=) against
// Google.APIKeys; when it is refused, it answers and counts the call
// (countTokens aside) and reports false.
func (s *Server) googleKeyOK(w http.ResponseWriter, r *http.Request, a api, method string) bool {
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if keyAccepted(s.cfg.Google.APIKeys, key) {
		return true
	}
	if method != "countTokens" {
		s.refuseBefore(a, OutcomeUnauthorized)
	}
	writeBadKey(w, key == "")
	return false
}

// writeBadKey answers a Gemini API call without a key (403) or with a
// key the sim does not accept (400 API_KEY_INVALID), as Google does.
func writeBadKey(w http.ResponseWriter, missing bool) {
	if missing {
		geminiapi.WriteError(w, http.StatusForbidden, "", "Method doesn't allow unregistered callers (callers without established identity). "+
			"Please use API Key or other form of API consumer identity to call this API.")
		return
	}
	geminiapi.WriteError(w, http.StatusBadRequest, "", "API key not valid. Please pass a valid API key.",
		json.RawMessage(`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}`))
}

// handleVertex serves Vertex AI's
// POST /v1/projects/{p}/locations/{l}/publishers/{pub}/models/{model}:{method}:
// publisher google's generateContent, streamGenerateContent and
// countTokens, and publisher anthropic's rawPredict and
// streamRawPredict, with an Authorization: Bearer token the sim's token
// endpoint or metadata server issued.
func (s *Server) handleVertex(w http.ResponseWriter, r *http.Request) {
	model, method, pub, ok := geminiapi.ParsePath(r.URL.Path)
	if !ok || (pub != "google" && pub != "anthropic") {
		geminiapi.WriteError(w, http.StatusNotFound, "", "Publisher model "+strconv.Quote(truncate(r.URL.Path, 200))+" not found.")
		return
	}
	a := apiVertexGemini
	if pub == "anthropic" {
		a = apiVertexClaude
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !s.issued.tokenValid(tok, s.clk.Now()) {
		if method != "countTokens" {
			s.refuseBefore(a, OutcomeUnauthorized)
		}
		geminiapi.WriteError(w, http.StatusUnauthorized, "", "Request had invalid authentication credentials. "+
			"Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	if pub == "anthropic" {
		s.serveVertexClaude(w, r, model, method)
		return
	}
	s.serveGoogle(w, r, model, method, a)
}

// handleVertexExpress serves Vertex AI's express mode,
// POST /v1/publishers/google/models/{model}:{method} with an API key
// (x-goog-api-key or ?key=, checked against Google.APIKeys) instead of a
// token.
func (s *Server) handleVertexExpress(w http.ResponseWriter, r *http.Request) {
	model, method, pub, ok := geminiapi.ParsePath(r.URL.Path)
	if !ok || pub != "google" {
		geminiapi.WriteError(w, http.StatusNotFound, "", "Publisher model "+strconv.Quote(truncate(r.URL.Path, 200))+" not found.")
		return
	}
	if s.googleKeyOK(w, r, apiVertexGemini, method) {
		s.serveGoogle(w, r, model, method, apiVertexGemini)
	}
}

// serveGoogle answers a Gemini call (generateContent,
// streamGenerateContent, countTokens) through the engine.
func (s *Server) serveGoogle(w http.ResponseWriter, r *http.Request, model, method string, a api) {
	stream := method == "streamGenerateContent"
	if !stream && method != "generateContent" && method != "countTokens" {
		geminiapi.WriteError(w, http.StatusNotFound, "", "Method "+strconv.Quote(truncate(method, 64))+" not found.")
		return
	}
	body, bad := readBody(w, r)
	if bad != 0 {
		if method != "countTokens" {
			s.refuseBefore(a, OutcomeBadRequest)
		}
		geminiapi.WriteError(w, http.StatusBadRequest, "", "The request body could not be read, or is over 16 MiB.")
		return
	}
	if method == "countTokens" {
		s.countGoogleTokens(w, model, body)
		return
	}
	chat, err := geminiapi.ToChat(model, body, stream)
	if err != nil {
		s.refuseBefore(a, OutcomeBadRequest)
		writeGoogleRefusal(w, err)
		return
	}
	rl := s.relay(r, chat, a)
	defer rl.body.Close()
	answerGoogle(w, rl, model, chat, stream, r.URL.Query().Get("alt") == "sse")
}

// answerGoogle writes the engine's answer as Gemini's: JSON, a stream
// (events with sse, a JSON array without), a safety block for a
// content_filter fault, or an error; a cut answer cuts the client's
// connection.
func answerGoogle(w http.ResponseWriter, rl *relayed, model string, chat []byte, stream, sse bool) {
	switch {
	case rl.status == 0:
		cutConnection(w)
	case rl.status != http.StatusOK:
		e := rl.readError()
		if e.code == "content_filter" {
			writeSafetyBlock(w, model, e.param, promptOf(chat), stream, sse)
			return
		}
		writeGoogleError(w, e)
	case stream:
		h := w.Header()
		if sse {
			h.Set("Content-Type", "text/event-stream")
		} else {
			h.Set("Content-Type", "application/json; charset=UTF-8")
		}
		w.WriteHeader(http.StatusOK)
		rl.pump(w, geminiapi.NewStream(rl.in, model, sse))
		if rl.cut() {
			garbage := garbageGemini
			if sse {
				garbage = garbageGeminiSSE
			}
			rl.endCut(w, garbage)
		}
	default:
		b, err := io.ReadAll(rl.body)
		var out []byte
		if err == nil {
			out, err = geminiapi.FromChat(b, model)
		}
		if err != nil {
			geminiapi.WriteError(w, http.StatusInternalServerError, "", "simulator: "+err.Error())
			return
		}
		writeRaw(w, http.StatusOK, out)
	}
}

// What a Garbage fault leaves of a Gemini stream's next response: in
// the JSON array, and as an event.
var (
	garbageGemini    = []byte(`,{"candidates":[{"content":{"role":"model","parts":[{"text":"tru`)
	garbageGeminiSSE = []byte(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"tru`)
)

// countGoogleTokens answers countTokens at once, free of faults and
// limits and not counted in Stats, as /v1/messages/count_tokens.
func (s *Server) countGoogleTokens(w http.ResponseWriter, model string, body []byte) {
	chat, err := geminiapi.CountTokensToChat(model, body)
	if err != nil {
		writeGoogleRefusal(w, err)
		return
	}
	if s.models != nil && !s.models[model] {
		geminiapi.WriteError(w, http.StatusNotFound, "", "models/"+strconv.Quote(truncate(model, 64))+" is not found.")
		return
	}
	writeRaw(w, http.StatusOK, geminiapi.CountTokensResponse(int64(promptOf(chat))))
}

// promptOf counts the prompt tokens of a chat body as the engine does.
func promptOf(chat []byte) int {
	var req chatRequest
	json.Unmarshal(chat, &req)
	return req.promptTokens()
}

// writeGoogleRefusal writes a translation's refusal.
func writeGoogleRefusal(w http.ResponseWriter, err error) {
	var ge *geminiapi.Error
	if errors.As(err, &ge) {
		geminiapi.WriteError(w, ge.Code, ge.Status, ge.Message)
		return
	}
	geminiapi.WriteError(w, http.StatusBadRequest, "", err.Error())
}

// writeGoogleError writes an engine error as Google sends it: 429
// RESOURCE_EXHAUSTED with a RetryInfo of the wait asked for, 503 (and
// 529, and a model_not_ready fault) UNAVAILABLE, 500 and 502 INTERNAL, 504
// and 408 DEADLINE_EXCEEDED, 401 UNAUTHENTICATED, 403
// PERMISSION_DENIED, 404 NOT_FOUND, other 4xx INVALID_ARGUMENT.
func writeGoogleError(w http.ResponseWriter, e engineError) {
	code, status := e.status, ""
	switch {
	case e.code == "model_not_ready" || code == 529:
		code = http.StatusServiceUnavailable
	case code == http.StatusTooManyRequests:
		msg := "Resource has been exhausted (e.g. check quota)."
		if e.retryAfter > 0 {
			geminiapi.WriteError(w, code, "", msg, geminiapi.RetryInfo(e.retryAfter))
		} else {
			geminiapi.WriteError(w, code, "", msg)
		}
		return
	case code == http.StatusRequestTimeout || code == http.StatusGatewayTimeout:
		code, status = http.StatusGatewayTimeout, "DEADLINE_EXCEEDED"
	case code == http.StatusBadGateway:
		code = http.StatusInternalServerError
	case code >= 400 && code < 500 && code != 401 && code != 403 && code != 404:
		code = http.StatusBadRequest
	}
	geminiapi.WriteError(w, code, status, e.msg)
}

// writeSafetyBlock answers a content_filter fault as Gemini blocks: a 200
// whose promptFeedback.blockReason is SAFETY (what "prompt") or whose one
// candidate has finishReason SAFETY (what "response"); streamed, as the
// only element of the stream.
func writeSafetyBlock(w http.ResponseWriter, model, what string, prompt int, stream, sse bool) {
	b := make([]byte, 0, 512)
	if what == "response" {
		b = append(b, `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"SAFETY","index":0,`+
			`"safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]}],`...)
	} else {
		b = append(b, `{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]},`...)
	}
	b = append(b, `"usageMetadata":{"promptTokenCount":`...)
	b = appendInt(b, prompt)
	b = append(b, `,"totalTokenCount":`...)
	b = appendInt(b, prompt)
	b = append(b, `},"modelVersion":`...)
	b = jsontext.AppendString(b, model)
	b = append(b, '}')
	switch {
	case !stream:
		writeRaw(w, http.StatusOK, b)
	case sse:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(append(append([]byte("data: "), b...), "\r\n\r\n"...))
	default:
		writeRaw(w, http.StatusOK, append(append([]byte{'['}, b...), ']'))
	}
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// serveVertexClaude answers rawPredict and streamRawPredict: the body is
// a Messages body without model (the URL's) and with anthropic_version
// vertex-2023-10-16, answered as /v1/messages answers, errors included.
func (s *Server) serveVertexClaude(w http.ResponseWriter, r *http.Request, model, method string) {
	if method != "rawPredict" && method != "streamRawPredict" {
		geminiapi.WriteError(w, http.StatusNotFound, "", "Method "+strconv.Quote(truncate(method, 64))+" not found.")
		return
	}
	body, bad := readBody(w, r)
	if bad != 0 {
		s.refuseBefore(apiVertexClaude, OutcomeBadRequest)
		writeAnthropicError(w, bad, "invalid_request_error", "The request body could not be read, or is over 16 MiB.")
		return
	}
	mbody, msg := vertexToMessages(body, model, method == "streamRawPredict")
	if msg != "" {
		s.refuseBefore(apiVertexClaude, OutcomeBadRequest)
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	rl, model, err := s.relayMessages(r, mbody, apiVertexClaude)
	if err != nil {
		s.refuseBefore(apiVertexClaude, OutcomeBadRequest)
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	answerMessages(w, rl, model)
}

// vertexToMessages turns a Vertex Claude body into a Messages body for
// model: anthropic_version (required, vertex-2023-10-16) is taken out,
// "model" put in first (a body with its own is refused, as Vertex
// refuses it) and, for streamRawPredict, "stream": true added when the
// body has no stream. It returns what is wrong otherwise.
func vertexToMessages(body []byte, model string, stream bool) ([]byte, string) {
	out := make([]byte, 0, len(body)+len(model)+32)
	out = append(out, `{"model":`...)
	out = jsontext.AppendString(out, model)
	var version, problem string
	hasStream := false
	ok := aireq.Members(body, func(key, value []byte) bool {
		name := string(key)
		if bytes.IndexByte(key, '\\') >= 0 {
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &name) != nil {
				problem = "the body has a key that is not a valid JSON string"
				return false
			}
		}
		switch strings.ToLower(name) {
		case "anthropic_version":
			if version != "" || name != "anthropic_version" || json.Unmarshal(value, &version) != nil || version == "" {
				problem = "anthropic_version: set twice, misspelt or not a string"
				return false
			}
			return true
		case "model":
			problem = "model: Extra inputs are not permitted (the model is the URL's)"
			return false
		case "stream":
			hasStream = true
		}
		out = append(append(append(append(out, ','), '"'), key...), '"')
		out = append(append(out, ':'), value...)
		return true
	})
	switch {
	case problem != "":
		return nil, problem
	case !ok:
		return nil, "the body is not a JSON object"
	case version == "":
		return nil, "anthropic_version: Field required (want " + vertexAnthropicVersion + ")"
	case version != vertexAnthropicVersion:
		return nil, "anthropic_version: is " + strconv.Quote(truncate(version, 32)) + ", want " + vertexAnthropicVersion
	}
	if stream && !hasStream {
		out = append(out, `,"stream":true`...)
	}
	return append(out, '}'), ""
}
