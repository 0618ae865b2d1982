package sim

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultKind names a fault. Its values are the kind names of the scenario
// format and of the control endpoint.
type FaultKind string

// The kinds of fault. Unless noted, a fault applies to chat completions,
// messages, responses and embeddings, streamed or not; GET /v1/models,
// count_tokens and /sim/ never fail. "Content chunks" of a Responses
// stream are its delta events.
const (
	// ErrorStorm answers with Status (400, 403, 408, 500, 502, 503, 504 or
	// 529; 0: 503) at once; 4xx bodies have type invalid_request_error. 5xx bodies are OpenAI-shaped ({"error":{"type":"server_error"}});
	// 529 is Anthropic's {"type":"error","error":{"type":"overloaded_error"}}.
	// RetryAfter, if set, is sent as Retry-After.
	ErrorStorm FaultKind = "error_storm"
	// Throttle answers 429 rate_limit_exceeded with Retry-After (whole
	// seconds, rounded up) and retry-after-ms from RetryAfter (0: 1s), and
	// x-ratelimit-remaining-requests: 0.
	Throttle FaultKind = "throttle"
	// LatencySpike adds Extra to the call's latency. Unlike the others it
	// does not decide the answer: it adds to whatever else happens, and
	// several spikes add up.
	LatencySpike FaultKind = "latency_spike"
	// Hang sends nothing, not even headers, until the client gives up (or
	// Server.Close).
	Hang FaultKind = "hang"
	// Stall applies to streams only: after the role chunk and AfterChunks
	// content chunks the stream sends nothing more until the client gives up.
	Stall FaultKind = "stall"
	// Reset closes the connection abruptly (a TCP reset where the
	// connection can be hijacked). Before any byte is sent, or, for a
	// stream with AfterChunks > 0, after that many content chunks.
	Reset FaultKind = "reset"
	// Auth answers 401 invalid_api_key.
	Auth FaultKind = "auth"
	// QueueFull answers Status (429 or 503; 0: 429) with code queue_full,
	// as job APIs report a full queue; RetryAfter, if set, is sent as
	// Retry-After.
	QueueFull FaultKind = "queue_full"
	// StreamError applies to streams only: after the role chunk and
	// AfterChunks content chunks, an error event
	// (data: {"error":{"type":"server_error",…}}) inside the 200 stream,
	// which then ends without data: [DONE]. A Responses stream gets a
	// response.failed event whose response.error has code server_error.
	StreamError FaultKind = "stream_error"
	// Capacity answers Status (429 or 503; 0: 503) with code
	// provider_capacity_exceeded, as job APIs report that the provider has
	// no capacity for the account; RetryAfter, if set, is sent as
	// Retry-After. A job submit refused with queue_full or capacity under
	// an Idempotency-Key is refused again, the same way, for every later
	// submit with that key, as providers replay a refusal.
	Capacity FaultKind = "capacity"
	// JobFailed applies to job submits only: the job is accepted, then
	// fails when it has run, with the error category Code (default
	// runtime_unavailable) and Message.
	JobFailed FaultKind = "job_failed"
	// AcceptReset applies to job submits only: the job is created, then
	// the connection is reset before the answer is sent, so the client
	// cannot know whether its job exists.
	AcceptReset FaultKind = "accept_reset"
	// AcceptHang applies to job submits only: the job is created, then
	// nothing is sent until the client gives up (a timeout after the
	// request was sent).
	AcceptHang FaultKind = "accept_hang"
	// NoDone applies to streams only: the stream carries the whole answer
	// (every content chunk, the chunk with the finish_reason, the usage
	// chunk when asked for), then ends cleanly without data: [DONE], as
	// some proxies and self-hosted servers do. OpenAI's SDKs stop at the
	// end of the body and see a complete answer; a client that waits for
	// [DONE] sees a stream cut short. The call is billed in full. Through
	// /v1/messages, whose streams have no [DONE], it changes nothing; a
	// Responses stream ends after its last response.output_item.done,
	// without response.completed.
	NoDone FaultKind = "no_done"
	// ContentFilter answers 400 with code content_filter, as Azure OpenAI
	// refuses a prompt its content filters flag: param "prompt", and an
	// innererror with code ResponsibleAIPolicyViolation and the
	// content_filter_result of each category (violence filtered). Code
	// says what was flagged: "prompt" (the default) or "response". The
	// Gemini and Vertex paths answer it as Google does instead: a 200
	// whose promptFeedback.blockReason is SAFETY (prompt), or whose
	// candidate has finishReason SAFETY (response).
	ContentFilter FaultKind = "content_filter"
	// Garbage applies to streams only: after the role chunk and
	// AfterChunks content chunks, the stream sends the first bytes of an
	// event cut in the middle of its JSON (on the Bedrock paths, the first
	// half of an event-stream frame), then the connection is cut: a
	// provider or proxy that dies mid-write. Nothing after it is billed.
	Garbage FaultKind = "garbage"
	// ModelNotReady answers 503 with code model_not_ready; the Bedrock
	// paths answer it as Bedrock does, 429 ModelNotReadyException.
	ModelNotReady FaultKind = "model_not_ready"
	// Drip applies to streams only: the headers, the role chunk and the
	// first content chunk come as usual, then each next content chunk
	// Extra after the one before it, whatever the token rate; once the
	// content is sent the stream sends nothing more (no finish_reason,
	// no usage, no data: [DONE]) until the client gives up. A provider
	// that is alive and generating, too slowly to be of use: every chunk
	// proves it alive, none brings the end nearer in time.
	Drip FaultKind = "drip"
)

// FaultKinds lists every kind, in documentation order.
var FaultKinds = []FaultKind{ErrorStorm, Throttle, LatencySpike, Hang, Stall, Reset, Auth, QueueFull, StreamError, NoDone,
	Capacity, JobFailed, AcceptReset, AcceptHang, ContentFilter, ModelNotReady, Garbage, Drip}

// Fault is one misbehaviour on a schedule. A Fault is active from From to
// To (with Every set, only in the first For of every Every from From);
// each call that arrives while it is active is hit with probability
// Fraction. The first fault in the list that hits a call decides its answer
// (latency spikes add to it instead).
//
// In JSON (the control endpoint) and YAML (scenarios) the fields are named
// kind, from, to, every, for, fraction, status, retry_after, extra,
// after_chunks, message and code, and durations are strings such as "1.5s".
type Fault struct {
	// Kind is what goes wrong.
	Kind FaultKind
	// From is when the fault starts: for scheduled faults, since the
	// Server's Start; for faults set live, since they were set.
	From time.Duration
	// To is when it ends, counted like From, exclusive. 0: never.
	To time.Duration
	// Every, when set, makes the fault flap: from From it is active for
	// For, then inactive for Every − For, and so on until To. With
	// From 60s, To 80s, Every 2s and For 1s it is active in [60s, 61s),
	// [62s, 63s) … [78s, 79s). 0: active throughout.
	Every time.Duration
	// For is how long the fault is active in each Every: more than 0 and
	// less than Every. It must be 0 when Every is.
	For time.Duration
	// Fraction is the share of calls hit, in (0, 1]. 0: every call.
	Fraction float64
	// Status is the HTTP status of ErrorStorm and QueueFull; 0 for their
	// defaults. Other kinds take no Status.
	Status int
	// RetryAfter is the wait a Throttle asks for (0: 1s); for ErrorStorm
	// and QueueFull, a Retry-After to send (0: none).
	RetryAfter time.Duration
	// Extra is the latency a LatencySpike adds, or the time between two
	// content chunks of a Drip; for both it must be more than 0.
	Extra time.Duration
	// AfterChunks is how many content chunks a stream sends before a
	// Stall, a StreamError or a Reset.
	AfterChunks int
	// Message replaces the default error message of ErrorStorm,
	// Throttle, Auth, QueueFull, Capacity, StreamError and JobFailed.
	Message string
	// Code is the error category a JobFailed job fails with ("":
	// runtime_unavailable), or what a ContentFilter flagged ("prompt" or
	// "response"; "": prompt). Other kinds take no Code.
	Code string
}

// FaultStatus is a Fault as the Server holds it: whether it was set live,
// whether it is active now, and how many calls it has hit.
type FaultStatus struct {
	Fault
	// Live is true for faults set with SetFaults or POST /sim/faults.
	Live bool
	// Active reports whether the fault's window includes the present.
	Active bool
	// Hits counts the calls the fault hit.
	Hits int64
}

// entry is a Fault held by the Server. Its Fault does not change; hits is
// guarded by Server.mu.
type entry struct {
	Fault
	origin time.Duration // the elapsed time its window counts from
	live   bool
	hits   int64
}

// activeAt reports whether e's window includes elapsed (time since Start).
func (e *entry) activeAt(elapsed time.Duration) bool { return e.activeIn(elapsed - e.origin) }

// activeIn reports whether f is active at t, counted from its origin.
func (f *Fault) activeIn(t time.Duration) bool {
	if t < f.From || (f.To != 0 && t >= f.To) {
		return false
	}
	return f.Every == 0 || (t-f.From)%f.Every < f.For
}

// callSort is what a call is, for the faults that may hit it.
type callSort uint8

const (
	plainCall  callSort = iota // a non-streamed answer: chat, embeddings, images
	streamCall                 // a streamed answer
	jobSubmit                  // a job submitted to the job API
)

// appliesTo reports whether e can hit a call of this sort.
func (e *entry) appliesTo(sort callSort) bool {
	switch {
	case streamOnly(e.Kind):
		return sort == streamCall
	case jobOnly(e.Kind):
		return sort == jobSubmit
	}
	return true
}

// streamOnly reports whether faults of kind k act inside streams only.
func streamOnly(k FaultKind) bool {
	return k == Stall || k == StreamError || k == NoDone || k == Garbage || k == Drip
}

// jobOnly reports whether faults of kind k act on job submits only.
func jobOnly(k FaultKind) bool { return k == JobFailed || k == AcceptReset || k == AcceptHang }

// SetFaults replaces the live faults with fs (nil removes them); scheduled
// faults stay. The From and To of each count from now. It returns an error,
// and changes nothing, if a fault is invalid.
func (s *Server) SetFaults(fs []Fault) error {
	for i, f := range fs {
		if ps := f.problems(); len(ps) > 0 {
			return fmt.Errorf("sim: %s: %s", join("faults["+strconv.Itoa(i)+"]", ps[0].field), ps[0].msg)
		}
	}
	origin := s.Elapsed()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = slices.DeleteFunc(s.faults, func(e *entry) bool { return e.live })
	for _, f := range fs {
		s.faults = append(s.faults, &entry{Fault: f, origin: origin, live: true})
	}
	return nil
}

// ClearFaults removes every fault, scheduled and live.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// Faults returns the faults the Server holds, scheduled first, then live.
func (s *Server) Faults() []FaultStatus {
	elapsed := s.Elapsed()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]FaultStatus, len(s.faults))
	for i, e := range s.faults {
		out[i] = FaultStatus{Fault: e.Fault, Live: e.live, Active: e.activeAt(elapsed), Hits: e.hits}
	}
	return out
}

// pickLocked draws the faults active at elapsed for a call: the one that
// decides its answer, if any, and the latency spikes' extra latency.
func (s *Server) pickLocked(elapsed time.Duration, sort callSort) (hit Fault, ok bool, extra time.Duration) {
	for _, e := range s.faults {
		if !e.activeAt(elapsed) || !e.appliesTo(sort) || (ok && e.Kind != LatencySpike) {
			continue
		}
		if e.Fraction > 0 && e.Fraction < 1 && s.rng.Float64() >= e.Fraction {
			continue
		}
		e.hits++
		if e.Kind == LatencySpike {
			extra += e.Extra
			continue
		}
		hit, ok = e.Fault, true
	}
	return hit, ok, extra
}

// problems lists what is wrong with f; fields are named as in the scenario
// format, "" for the fault as a whole.
func (f *Fault) problems() []problem {
	var ps []problem
	add := func(field, msg string) { ps = append(ps, problem{field, msg}) }
	if !slices.Contains(FaultKinds, f.Kind) {
		if f.Kind == "" {
			add("kind", "must be set (one of "+kindList()+")")
		} else {
			add("kind", "unknown kind "+strconv.Quote(string(f.Kind))+" (known: "+kindList()+")")
		}
		return ps
	}
	if f.From < 0 {
		add("from", "is "+f.From.String()+", want 0 or more")
	}
	if f.To < 0 || (f.To > 0 && f.To <= f.From) {
		add("to", "is "+f.To.String()+", want after from ("+f.From.String()+"), or 0 for no end")
	}
	switch {
	case f.Every < 0:
		add("every", "is "+f.Every.String()+", want 0 or more")
	case f.Every == 0 && f.For != 0:
		add("for", "is "+f.For.String()+" without every, want every set too (or no for)")
	case f.Every > 0 && !(f.For > 0 && f.For < f.Every):
		add("for", "is "+f.For.String()+", want more than 0 and less than every ("+f.Every.String()+")")
	}
	if !(f.Fraction >= 0 && f.Fraction <= 1) {
		add("fraction", "is "+strconv.FormatFloat(f.Fraction, 'g', -1, 64)+", want a share of calls, more than 0 and at most 1")
	}
	if f.Status != 0 {
		if want := statusesOf(f.Kind); want == nil {
			add("status", doesNotApply(f.Kind))
		} else if !slices.Contains(want, f.Status) {
			add("status", "is "+strconv.Itoa(f.Status)+", want one of "+joinInts(want))
		}
	}
	switch {
	case f.RetryAfter < 0:
		add("retry_after", "is "+f.RetryAfter.String()+", want 0 or more")
	case f.RetryAfter > 0 && f.Kind != Throttle && f.Kind != ErrorStorm && f.Kind != QueueFull && f.Kind != Capacity:
		add("retry_after", doesNotApply(f.Kind))
	}
	switch {
	case (f.Kind == LatencySpike || f.Kind == Drip) && f.Extra <= 0:
		add("extra", "must be more than 0 for a "+string(f.Kind))
	case f.Kind != LatencySpike && f.Kind != Drip && f.Extra != 0:
		add("extra", doesNotApply(f.Kind))
	}
	switch {
	case f.AfterChunks < 0:
		add("after_chunks", "is "+strconv.Itoa(f.AfterChunks)+", want 0 or more")
	case f.AfterChunks > 0 && f.Kind != Stall && f.Kind != StreamError && f.Kind != Reset && f.Kind != Garbage:
		add("after_chunks", doesNotApply(f.Kind))
	}
	if f.Message != "" && (f.Kind == LatencySpike || f.Kind == Hang || f.Kind == Stall || f.Kind == Reset || f.Kind == NoDone || f.Kind == Garbage ||
		f.Kind == Drip || f.Kind == AcceptReset || f.Kind == AcceptHang) {
		add("message", doesNotApply(f.Kind))
	}
	switch {
	case f.Kind == ContentFilter && f.Code != "" && f.Code != "prompt" && f.Code != "response":
		add("code", "is "+strconv.Quote(f.Code)+", want prompt or response")
	case f.Code != "" && f.Kind != JobFailed && f.Kind != ContentFilter:
		add("code", doesNotApply(f.Kind))
	}
	return ps
}

func statusesOf(k FaultKind) []int {
	switch k {
	case ErrorStorm:
		return []int{400, 403, 408, 500, 502, 503, 504, 529}
	case QueueFull, Capacity:
		return []int{429, 503}
	}
	return nil
}

func doesNotApply(k FaultKind) string { return "does not apply to a " + string(k) + " fault" }

func kindList() string {
	s := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// writeFault answers a call with fault f, which decides the answer before
// any byte of a normal one (see upfront), and counts the outcome, before
// the client can see the answer. rl are the rate-limit headers of the
// moment.
func (s *Server) writeFault(w http.ResponseWriter, r *http.Request, f Fault, rl rateHeaders) {
	switch f.Kind {
	case ErrorStorm:
		s.stats.finish(OutcomeError)
		status := cmp.Or(f.Status, http.StatusServiceUnavailable)
		setRetryAfter(w.Header(), f.RetryAfter)
		switch {
		case status == 529:
			writeAnthropicError(w, status, "overloaded_error", cmp.Or(f.Message, "Overloaded"))
		case status < 500:
			writeError(w, status, "invalid_request_error", "", cmp.Or(f.Message, stormMessage(status)))
		default:
			writeError(w, status, "server_error", "", cmp.Or(f.Message, stormMessage(status)))
		}
	case Throttle:
		s.stats.finish(OutcomeThrottled)
		wait := cmp.Or(f.RetryAfter, time.Second)
		h := w.Header()
		rl.exhaust(wait)
		rl.set(h)
		setRetryAfter(h, wait)
		h.Set("Retry-After-Ms", strconv.FormatInt(wait.Milliseconds(), 10))
		msg := cmp.Or(f.Message, "Rate limit reached for requests. Please try again in "+wait.String()+".")
		writeError(w, http.StatusTooManyRequests, "requests", "rate_limit_exceeded", msg)
	case Auth:
		s.stats.finish(OutcomeAuth)
		msg := cmp.Or(f.Message, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.")
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", msg)
	case QueueFull:
		s.stats.finish(OutcomeQueueFull)
		setRetryAfter(w.Header(), f.RetryAfter)
		msg := cmp.Or(f.Message, "The request queue is full; try again later.")
		writeError(w, cmp.Or(f.Status, http.StatusTooManyRequests), "server_error", "queue_full", msg)
	case Capacity:
		s.stats.finish(OutcomeCapacity)
		setRetryAfter(w.Header(), f.RetryAfter)
		msg := cmp.Or(f.Message, "The provider has no capacity for this request right now; try again later.")
		writeError(w, cmp.Or(f.Status, http.StatusServiceUnavailable), "server_error", "provider_capacity_exceeded", msg)
	case ContentFilter:
		s.stats.finish(OutcomeContentFilter)
		writeContentFilter(w, cmp.Or(f.Code, "prompt"), f.Message)
	case ModelNotReady:
		s.stats.finish(OutcomeError)
		msg := cmp.Or(f.Message, "The model is not ready to serve requests yet; try again later.")
		writeError(w, http.StatusServiceUnavailable, "server_error", "model_not_ready", msg)
	case Hang:
		released := !s.hold(r)
		s.stats.finish(OutcomeHang)
		if released {
			panic(http.ErrAbortHandler)
		}
	case Reset:
		s.stats.finish(OutcomeReset)
		if !reset(w) {
			panic(http.ErrAbortHandler)
		}
	default:
		panic("sim: fault " + string(f.Kind) + " does not decide an answer upfront") // a bug in this package
	}
}

// hold sends nothing until the client gives up, and reports true then;
// false when the Server is closed first.
func (s *Server) hold(r *http.Request) bool {
	select {
	case <-r.Context().Done():
		return true
	case <-s.done:
		return false
	}
}

// reset closes the client's connection at once, with a TCP RST where it
// can, and reports true; false when the connection cannot be hijacked
// (HTTP/2, a recorder), for the caller to abort instead.
func reset(w http.ResponseWriter) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // close with RST, not FIN
	}
	conn.Close()
	return true
}

// writeContentFilter writes Azure OpenAI's content-filter refusal of
// what (prompt or response).
func writeContentFilter(w http.ResponseWriter, what, msg string) {
	type severity struct {
		Filtered bool   `json:"filtered"`
		Severity string `json:"severity"`
	}
	type detected struct {
		Filtered bool `json:"filtered"`
		Detected bool `json:"detected"`
	}
	type result struct {
		Hate      severity `json:"hate"`
		Jailbreak detected `json:"jailbreak"`
		SelfHarm  severity `json:"self_harm"`
		Sexual    severity `json:"sexual"`
		Violence  severity `json:"violence"`
	}
	type inner struct {
		Code   string `json:"code"`
		Result result `json:"content_filter_result"`
	}
	type body struct {
		Message    string  `json:"message"`
		Type       *string `json:"type"`
		Param      string  `json:"param"`
		Code       string  `json:"code"`
		Status     int     `json:"status"`
		InnerError inner   `json:"innererror"`
	}
	safe := severity{Severity: "safe"}
	msg = cmp.Or(msg, "The response was filtered due to the "+what+" triggering Azure OpenAI's content management policy. "+
		"Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766")
	writeJSON(w, http.StatusBadRequest, struct {
		Error body `json:"error"`
	}{body{Message: msg, Param: what, Code: "content_filter", Status: http.StatusBadRequest,
		InnerError: inner{Code: "ResponsibleAIPolicyViolation", Result: result{Hate: safe, SelfHarm: safe, Sexual: safe,
			Violence: severity{Filtered: true, Severity: "medium"}}}}})
}

func stormMessage(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "Invalid request."
	case http.StatusForbidden:
		return "Permission denied."
	case http.StatusRequestTimeout:
		return "The model timed out while processing your request."
	case http.StatusInternalServerError:
		return "The server had an error while processing your request. Sorry about that!"
	case http.StatusBadGateway:
		return "Bad gateway."
	case http.StatusGatewayTimeout:
		return "Gateway timeout."
	}
	return "The server is overloaded or not ready yet."
}

// setRetryAfter sets Retry-After to d in whole seconds, rounded up; d ≤ 0
// sets nothing.
func setRetryAfter(h http.Header, d time.Duration) {
	if d > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
	}
}
