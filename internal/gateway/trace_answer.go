package gateway

import (
	"encoding/json"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// answerFacts are what an attempt's span says of the answer: its id, the
// model that wrote it and why each choice ended. One shape reads an
// OpenAI answer or chunk (id, model, choices[].finish_reason) and an
// Anthropic one (id, model, stop_reason; in a stream, message_start's
// message and message_delta's delta).
type answerFacts struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int     `json:"index"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	StopReason string `json:"stop_reason"`
	Message    *struct {
		ID    string `json:"id"`
		Model string `json:"model"`
	} `json:"message"`
	Delta *struct {
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
}

// maxFinishReasons bounds the reasons kept of an answer: a client's n is
// not bounded by the gateway, and a span attribute should be.
const maxFinishReasons = 16

// answered records on a's span what an answer, or one event of a stream,
// says of itself. It reads the body only when tracing is on; an answer it
// cannot read says nothing.
func (t *trace) answered(a *router.Attempt, body []byte) {
	at, _ := a.Trace.(*attemptTrace)
	if t == nil || at == nil {
		return
	}
	var f answerFacts
	if json.Unmarshal(body, &f) != nil {
		return
	}
	if f.Message != nil {
		f.ID, f.Model = f.Message.ID, f.Message.Model
	}
	if f.Delta != nil {
		f.StopReason = f.Delta.StopReason
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	r := &at.result
	if f.ID != "" && r.ResponseID == "" {
		r.ResponseID = f.ID
	}
	if f.Model != "" && r.ResponseModel == "" {
		r.ResponseModel = f.Model
	}
	if f.StopReason != "" {
		r.FinishReasons = []string{f.StopReason}
	}
	for _, c := range f.Choices {
		if c.FinishReason == nil || *c.FinishReason == "" || c.Index < 0 || c.Index >= maxFinishReasons {
			continue
		}
		for len(r.FinishReasons) <= c.Index {
			r.FinishReasons = append(r.FinishReasons, "")
		}
		r.FinishReasons[c.Index] = *c.FinishReason
	}
}
