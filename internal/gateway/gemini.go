package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/geminiapi"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// The gateway also speaks Google's Gemini API (POST
// /v1beta/models/{model}:generateContent, :streamGenerateContent and
// :countTokens), so google-genai SDK users can point their base URL at it.
// As with the Messages API, a request is translated to the OpenAI chat
// format on arrival and walks the same ladder; the answer, its stream and
// its errors are translated back to Gemini's shapes.

// geminiExchange is what a Gemini API request keeps of itself.
type geminiExchange struct {
	body  []byte // the client's own body, for idempotency
	model string // as the client named it, in translated answers
	sse   bool   // streamGenerateContent?alt=sse; without, a JSON array
	opts  geminiapi.Options
}

// The methods the Gemini API serves.
const (
	geminiGenerate = "generateContent"
	geminiStream   = "streamGenerateContent"
	geminiCount    = "countTokens"
)

// handleGemini serves POST /v1beta/models/{model}:{method}.
func (s *Server) handleGemini(rw http.ResponseWriter, r *http.Request) {
	x := s.newExchange(rw, r, false)
	w := x.rec
	defer x.finish(w)
	x.setHeader("X-Request-Id", x.id)
	model, method, _, ok := geminiapi.ParsePath(r.URL.Path)
	if !ok || (method != geminiGenerate && method != geminiStream && method != geminiCount) {
		geminiapi.WriteError(w, http.StatusNotFound, "NOT_FOUND", "Fusebox serves models/{model}:generateContent, :streamGenerateContent and :countTokens; not "+clipPath(r.URL.Path)+".")
		return
	}
	x.gem = &geminiExchange{model: model, sse: r.URL.Query().Get("alt") == "sse"}
	c, ok := s.authenticate(x.st, w, r)
	if !ok {
		return
	}
	body, ok := x.readBody()
	if !ok {
		return
	}
	x.gem.body = body
	if method == geminiCount {
		x.countGeminiTokens(c, model, body)
		return
	}
	chat, err := geminiapi.ToChat(model, body, method == geminiStream)
	if err != nil {
		x.geminiRefusal(err)
		return
	}
	x.gem.opts = geminiapi.OptionsFor(body) // thoughts only when asked for, as Gemini answers
	x.route(c, "/chat/completions", chat, true)
}

// countGeminiTokens answers countTokens with the gateway's estimate of the
// prompt, which is what it counts against limits: no upstream is called.
func (x *exchange) countGeminiTokens(c *client, model string, body []byte) {
	chat, err := geminiapi.CountTokensToChat(model, body)
	if err != nil {
		x.geminiRefusal(err)
		return
	}
	f, ok := x.validate(chat, true)
	if !ok {
		return
	}
	if !c.allows(f.ModelName()) {
		x.error(http.StatusForbidden, "", "", "", "Your key is not allowed to use the model `"+f.ModelName()+"`.")
		return
	}
	if _, ok := x.st.router.Lookup(f.ModelName()); !ok {
		x.error(http.StatusNotFound, "", "", "", "The model `"+f.ModelName()+"` does not exist. Use a configured model alias or provider/model.")
		return
	}
	x.writeJSON(geminiapi.CountTokensResponse(int64(f.Tokens(len(chat)))))
}

// geminiRefusal answers a request the translation refused.
func (x *exchange) geminiRefusal(err error) {
	if e, ok := err.(*geminiapi.Error); ok {
		geminiapi.WriteError(x.w, e.Code, e.Status, e.Message)
		return
	}
	geminiapi.WriteError(x.w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
}

// geminiPath reports a path of the Gemini API, whose errors are in
// Google's shape.
func geminiPath(path string) bool { return strings.HasPrefix(path, "/v1beta/models/") }

// googleStatus is the canonical status name Google gives an HTTP status.
func googleStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// serveGemini answers a non-streamed generateContent: an error answer in
// Google's shape, a success translated back. It reports false, having sent
// nothing, when the walk should go on to the next target.
func (x *exchange) serveGemini(a *router.Attempt) bool {
	x.drain.hold(true)
	body, err := readAnswer(a.Resp.Body, a.Resp.ContentLength, maxBuffered+1)
	x.drain.hold(false)
	a.Resp.Body.Close()
	if a.Final {
		x.passFinalGemini(a.Resp.StatusCode, body)
		return true
	}
	switch {
	case err != nil && (x.r.Context().Err() != nil || x.drain.clientGone()):
		a.Abandon()
		return true
	case err != nil:
		a.Fail(x.s.classifyReadError(err))
		return false
	case !jsonObject(body) || len(body) > maxBuffered:
		a.Fail(invalidAnswer(a))
		return false
	}
	x.account(a, usageInto(&x.answerUsage, body))
	out, err := geminiapi.FromChatWith(body, x.gem.model, x.gem.opts)
	a.Succeed() // the target answered; a failed translation is ours
	if err != nil {
		geminiapi.WriteError(x.w, http.StatusBadGateway, "INTERNAL", "The answer from "+a.Target.Name+" could not be translated to the Gemini API: "+err.Error())
		return true
	}
	x.captureForReplay()
	x.writeJSON(out)
	x.keepSent("application/json", a.Target.Name)
	return true
}

// passFinalGemini returns an upstream's client error in Google's shape.
func (x *exchange) passFinalGemini(status int, body []byte) {
	if googleError(body) {
		x.w.Header().Set("Content-Type", "application/json")
		x.w.WriteHeader(status)
		x.w.Write(body)
		return
	}
	msg, _ := toAnthropicError(body) // the upstream's message, whatever its shape
	if msg == "" {
		msg = "The upstream refused the request (" + strconv.Itoa(status) + ")."
	}
	geminiapi.WriteError(x.w, status, googleStatus(status), msg)
}

// googleError reports whether body is an error in Google's shape already.
func googleError(body []byte) bool {
	var e struct {
		Error struct {
			Code   int    `json:"code"`
			Status string `json:"status"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error.Code != 0 && e.Error.Status != ""
}

// newGeminiSink translates OpenAI events to Gemini's stream: events with
// alt=sse, else a JSON array.
func newGeminiSink(w http.ResponseWriter, g *geminiExchange) *pipeSink {
	return newPipeSink(w, func(r io.Reader) io.Reader { return geminiapi.NewStreamWith(r, g.model, g.sse, g.opts) },
		func(w http.ResponseWriter, e sse.ErrorEvent) { writeGeminiBroken(w, e, g.sse) })
}

// writeGeminiBroken ends a Gemini stream with Google's error object: as
// an event with alt=sse, else as the array's last element (the array is
// left open, so a reader cannot take the answer for a whole one).
func writeGeminiBroken(w http.ResponseWriter, e sse.ErrorEvent, sseMode bool) {
	status := http.StatusInternalServerError
	if e.Type == "timeout" {
		status = http.StatusGatewayTimeout
	}
	obj, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": e.Message, "status": googleStatus(status)}})
	var b bytes.Buffer
	if sseMode {
		b.WriteString("data: ")
		b.Write(obj)
		b.WriteString("\r\n\r\n")
	} else {
		b.WriteString(",\r\n")
		b.Write(obj)
	}
	w.Write(b.Bytes())
	http.NewResponseController(w).Flush()
}

// clipPath is a request path short enough to quote in an error.
func clipPath(p string) string {
	if len(p) > 120 {
		p = p[:120] + "…"
	}
	return strconv.QuoteToASCII(p)
}
