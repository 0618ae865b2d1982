package sim

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds the request bodies the API reads.
const maxBody = 16 << 20

// plan is everything drawn for one call, under Server.mu and in request
// order: which fault hits it, its latency, the seed of its reply and what
// the rate limits say.
type plan struct {
	id      uint64    // the call's number, from 1
	now     time.Time // when it was decided
	fault   Fault     // valid when faulted
	faulted bool
	extra   time.Duration // from latency spikes
	wait    time.Duration // before the answer (non-stream) or first chunk (stream)
	seed    uint64        // of the reply text
	limit   admission
}

// decide draws a call's plan. tokens is what the call takes from the TPM
// limit: its prompt and reply.
func (s *Server) decide(stream bool, tokens int) plan {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	p := plan{id: s.seq, now: now}
	sort := plainCall
	if stream {
		sort = streamCall
	}
	p.fault, p.faulted, p.extra = s.pickLocked(now.Sub(s.start), sort)
	p.wait = s.cfg.Latency.firstByte(stream, s.spreadLocked())
	p.seed = s.rng.Uint64()
	if p.faulted && upfront(p.fault, stream) {
		p.limit.headers = s.limits.peekLocked(now) // refused calls take nothing
	} else {
		p.limit = s.limits.admitLocked(now, tokens)
	}
	return p
}

// upfront reports whether f decides a call's answer before any byte of a
// normal answer is sent; the others act inside a stream.
func upfront(f Fault, stream bool) bool {
	switch f.Kind {
	case LatencySpike, Stall, StreamError, NoDone, Garbage, Drip, JobFailed, AcceptReset, AcceptHang:
		return false
	case Reset:
		return !stream || f.AfterChunks == 0
	}
	return true
}

// refuse answers a call that a fault or a rate limit refuses before any
// normal answer, after the extra latency of spikes. It reports whether it
// answered.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, p *plan, stream bool) bool {
	faulted := p.faulted && upfront(p.fault, stream)
	if !faulted && !p.limit.refused {
		return false
	}
	// Without a spike's extra latency the refusal is at once: a client
	// that already left still met the fault, and is counted under it.
	if p.extra > 0 {
		if err := s.sleep(r.Context(), p.extra); err != nil {
			s.stats.finish(OutcomeCanceled)
			return true
		}
	}
	if faulted {
		s.writeFault(w, r, p.fault, p.limit.headers)
		return true
	}
	s.stats.finish(OutcomeRateLimited)
	a := p.limit
	h := w.Header()
	a.headers.set(h)
	setRetryAfter(h, a.wait)
	h.Set("Retry-After-Ms", strconv.FormatInt(a.wait.Milliseconds(), 10))
	writeError(w, http.StatusTooManyRequests, a.which, "rate_limit_exceeded",
		"Rate limit reached on "+a.which+" per min. Please try again in "+formatReset(a.wait)+".")
	return true
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) { s.serveChat(w, r, apiChat) }

// serveChat answers a chat completion that came by API a: chat
// completions, or messages through the translation.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, a api) {
	s.stats.receive(a)
	var req chatRequest
	if !s.readRequest(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		s.badRequest(w, http.StatusBadRequest, "messages", "", "'messages' must be a non-empty array.")
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	k, bad := req.ask()
	if bad != nil {
		s.badRequest(w, http.StatusBadRequest, bad.param, bad.code, bad.msg)
		return
	}
	k.anthropicIDs = a.anthropicIDs()
	prompt := req.promptTokens()
	s.stats.input.Add(int64(prompt))
	p := s.decide(req.Stream, prompt+s.budget(&k))
	if s.refuse(w, r, &p, req.Stream) {
		return
	}
	c := call{id: "chatcmpl-sim-" + strconv.FormatUint(p.id, 10), created: p.now.Unix(), model: req.Model,
		answers: s.answers(&k, p.seed), prompt: prompt}
	if req.Stream {
		f := &chatStream{c: &c, includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
		s.stream(w, r, &p, &streamer{s: s, prompt: prompt, answers: c.answers}, f)
		return
	}
	if err := s.sleep(r.Context(), p.wait+p.extra); err != nil {
		s.stats.finish(OutcomeCanceled)
		return
	}
	s.stats.bill(prompt, c.completionTokens())
	s.stats.finish(OutcomeOK)
	p.limit.headers.set(w.Header())
	writeJSON(w, http.StatusOK, c.completion())
}

// fingerprint is the system_fingerprint of every answer.
const fingerprint = "fp_fusebox_sim"

// call is a chat completion being answered.
type call struct {
	id      string
	created int64
	model   string
	answers []answer // a choice each
	prompt  int      // prompt tokens
}

// completionTokens counts the tokens of every choice.
func (c *call) completionTokens() int { return completionTokens(c.answers) }

func completionTokens(answers []answer) int {
	n := 0
	for i := range answers {
		n += answers[i].completionTokens()
	}
	return n
}

func (c *call) usage() usage {
	n := c.completionTokens()
	return usage{PromptTokens: c.prompt, CompletionTokens: n, TotalTokens: c.prompt + n}
}

// completion returns the call's non-streamed answer.
func (c *call) completion() completion {
	choices := make([]choice, len(c.answers))
	for i := range c.answers {
		a := &c.answers[i]
		m := message{Role: "assistant"}
		if a.calls != nil {
			m.ToolCalls = make([]toolCallJSON, len(a.calls))
			for j, tc := range a.calls {
				m.ToolCalls[j] = toolCallJSON{ID: tc.id, Type: "function", Function: functionJSON{Name: tc.name, Arguments: tc.args}}
			}
		} else {
			text := a.content()
			m.Content = &text
		}
		choices[i] = choice{Index: i, Message: m, FinishReason: a.finish}
	}
	return completion{ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		Choices: choices, Usage: c.usage(), SystemFingerprint: fingerprint}
}

type completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []choice `json:"choices"`
	Usage             usage    `json:"usage"`
	SystemFingerprint string   `json:"system_fingerprint"`
}

type choice struct {
	Index        int       `json:"index"`
	Message      message   `json:"message"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

// message is an answer's message; its content is null when it holds tool
// calls.
type message struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

type toolCallJSON struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionJSON `json:"function"`
}

type functionJSON struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// lorem is the reply vocabulary; spaced and capital hold its words with a
// leading space and capitalised, so that replies allocate no words.
var lorem, spaced, capital = vocabulary(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do
	eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud
	exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in
	reprehenderit voluptate velit esse cillum eu fugiat nulla pariatur excepteur sint occaecat
	cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum`)

func vocabulary(text string) (words, spaced, capital []string) {
	words = strings.Fields(text)
	for _, w := range words {
		spaced = append(spaced, " "+w)
		capital = append(capital, strings.ToUpper(w[:1])+w[1:])
	}
	return words, spaced, capital
}

// replyTokens returns n tokens of lorem ipsum drawn from seed: a
// capitalised first word, then words with a leading space, the last one
// ending with a full stop.
func replyTokens(seed uint64, n int) []string {
	if n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x10e3))
	out := make([]string, n)
	out[0] = capital[rng.IntN(len(lorem))]
	for i := 1; i < n; i++ {
		out[i] = spaced[rng.IntN(len(lorem))]
	}
	out[n-1] += "."
	return out
}

type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelCreated is the created time of every model: 2025-01-01.
const modelCreated = 1735689600

func (s *Server) modelIDs() []string {
	if s.cfg.Models != nil {
		return s.cfg.Models
	}
	return DefaultModels
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	ids := s.modelIDs()
	list := modelList{Object: "list", Data: make([]model, len(ids))}
	for i, id := range ids {
		list.Data[i] = model{ID: id, Object: "model", Created: modelCreated, OwnedBy: s.name}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("model")
	for _, m := range s.modelIDs() {
		if m == id {
			writeJSON(w, http.StatusOK, model{ID: id, Object: "model", Created: modelCreated, OwnedBy: s.name})
			return
		}
	}
	writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
		"The model `"+id+"` does not exist or you do not have access to it.")
}

// allowed lists the methods of each fixed path, for 405 answers.
var allowed = map[string]string{
	"/v1/chat/completions":      "POST",
	"/v1/messages":              "POST",
	"/v1/messages/count_tokens": "POST",
	"/v1/responses":             "POST",
	"/v1/embeddings":            "POST",
	"/v1/videos":                "GET, POST",
	"/v1/images/generations":    "POST",
	"/sim/jobs":                 "GET",
	"/v1/models":                "GET",
	"/sim/faults":               "GET, POST, DELETE",
	"/sim/stats":                "GET",
	"/token":                    "POST",
	"/v2/credentials":           "GET",
}

// handleNotFound answers what no route takes: 405 on a known path, 404
// otherwise, both OpenAI-shaped.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	if methods, ok := allowed[r.URL.Path]; ok {
		w.Header().Set("Allow", methods)
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
			"Method "+r.Method+" is not allowed on "+r.URL.Path+" (allowed: "+methods+")")
		return
	}
	writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url",
		"Invalid URL ("+r.Method+" "+r.URL.Path+")")
}

// readRequest decodes a JSON request body into v, or answers 400 (413 when
// too large) and reports false.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			s.badRequest(w, http.StatusRequestEntityTooLarge, "", "", "The request body is too large.")
		} else {
			s.badRequest(w, http.StatusBadRequest, "", "", "Could not read the request body.")
		}
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		s.badRequest(w, http.StatusBadRequest, "", "",
			"We could not parse the JSON body of your request. ("+err.Error()+")")
		return false
	}
	return true
}

// checkModel answers 400 for a missing model and 404 for one the Server
// does not serve, and reports whether the model is fine.
func (s *Server) checkModel(w http.ResponseWriter, m string) bool {
	switch {
	case m == "":
		s.badRequest(w, http.StatusBadRequest, "model", "", "You must provide a model parameter.")
		return false
	case s.models != nil && !s.models[m]:
		s.badRequest(w, http.StatusNotFound, "model", "model_not_found",
			"The model `"+m+"` does not exist or you do not have access to it.")
		return false
	}
	return true
}

// badRequest answers a call the sim cannot take and counts it.
func (s *Server) badRequest(w http.ResponseWriter, status int, param, code, msg string) {
	s.stats.finish(OutcomeBadRequest)
	writeErrorParam(w, status, "invalid_request_error", code, param, msg)
}

// writeError writes OpenAI's error shape:
// {"error":{"message":…,"type":…,"param":null,"code":…}}.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeErrorParam(w, status, typ, code, "", msg)
}

func writeErrorParam(w http.ResponseWriter, status int, typ, code, param, msg string) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	b := body{Message: msg, Type: typ}
	if param != "" {
		b.Param = &param
	}
	if code != "" {
		b.Code = &code
	}
	writeJSON(w, status, struct {
		Error body `json:"error"`
	}{b})
}

// writeAnthropicError writes Anthropic's error shape:
// {"type":"error","error":{"type":…,"message":…}}.
func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	type body struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	writeJSON(w, status, struct {
		Type  string `json:"type"`
		Error body   `json:"error"`
	}{"error", body{typ, msg}})
}

// writeJSON writes v as a JSON answer with its length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		panic("sim: " + err.Error()) // the package's own types always marshal
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
