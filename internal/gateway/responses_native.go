package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// A target that serves the Responses API itself (OpenAI's) is sent the
// client's request as it is and its answer passed on: a stream's events
// as they come, held like a chat stream until the first content, ending
// at response.completed (or response.incomplete). These read such an
// answer where the chat path reads chunks.

// hasContent reports whether a stream's event is content: a chunk's
// delta, or for a Responses stream a text, refusal or arguments delta.
func hasContent(a *router.Attempt, ev sse.Event) bool {
	if !a.Responses {
		return sse.HasContent(ev)
	}
	return strings.HasSuffix(ev.Name, ".delta") && (strings.HasPrefix(ev.Name, "response.output_text") ||
		strings.HasPrefix(ev.Name, "response.refusal") || strings.HasPrefix(ev.Name, "response.function_call_arguments"))
}

// responsesEnd reports a Responses stream's last event.
func responsesEnd(ev sse.Event) bool {
	return ev.Name == "response.completed" || ev.Name == "response.incomplete"
}

// eventVerdict judges a stream's event before it commits: a Responses
// stream's error or response.failed is its target's failure.
func eventVerdict(a *router.Attempt, ev sse.Event) aierr.Verdict {
	v := aierr.ClassifyEvent(ev.Name, ev.Data)
	if a.Responses && v.Kind == aierr.Success && (ev.Name == "error" || ev.Name == "response.failed") {
		v = aierr.Verdict{Kind: aierr.Outage, Code: "stream_error", Message: "the Responses stream failed: " + ev.Name}
	}
	return v
}

// eventUsage is the usage an event carries: a chunk's, or a Responses
// stream's completion's.
func eventUsage(a *router.Attempt, ev sse.Event) *usage {
	if !a.Responses {
		return streamUsage(ev.Data)
	}
	if !responsesEnd(ev) {
		return nil
	}
	var e struct {
		Response json.RawMessage `json:"response"`
	}
	if json.Unmarshal(ev.Data, &e) != nil {
		return nil
	}
	return responsesUsage(e.Response)
}

// responsesUsage reads a response object's usage in chat's terms.
func responsesUsage(body []byte) *usage {
	var r struct {
		Usage *struct {
			InputTokens        int `json:"input_tokens"`
			OutputTokens       int `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &r) != nil || r.Usage == nil {
		return nil
	}
	u := &usage{PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens}
	u.PromptTokensDetails.CachedTokens = r.Usage.InputTokensDetails.CachedTokens
	return u
}

// responsesNativeSink passes a Responses stream on as it is, keeping its
// final response for the store.
type responsesNativeSink struct {
	x     *exchange
	w     *sse.Writer
	final []byte
}

func (s *responsesNativeSink) Write(raw []byte) error {
	if bytes.HasPrefix(raw, []byte("event: response.completed")) || bytes.HasPrefix(raw, []byte("event: response.incomplete")) {
		var e struct {
			Response json.RawMessage `json:"response"`
		}
		if json.Unmarshal(eventData(raw), &e) == nil {
			s.final = e.Response
		}
	}
	return s.w.Write(raw)
}

func (s *responsesNativeSink) Flush() error { return s.w.Flush() }

func (s *responsesNativeSink) Close() {
	s.w.Flush()
	s.x.keepResponse(s.final)
}

// Broken ends the stream with the Responses API's error event.
func (s *responsesNativeSink) Broken(e sse.ErrorEvent) {
	s.w.WriteEvent("error", []byte(`{"type":"error","code":`+strconv.Quote(e.Code)+`,"message":`+strconv.Quote(e.Message)+`,"param":null}`))
	s.w.Flush()
}
