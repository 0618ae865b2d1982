package gemini

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// genaiClient is Google's official client pointed at srv.
func genaiClient(t *testing.T, srv *httptest.Server) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "test-key", Backend: genai.BackendGeminiAPI, HTTPClient: srv.Client(),
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL + "/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The request TranslateChat writes for an OpenAI chat body is the request
// Google's client writes for the same conversation and settings.
func TestGenaiWritesTheSameRequest(t *testing.T) {
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		if r.URL.Path != "/v1beta/models/gemini-2.5-flash:generateContent" || r.Header.Get("X-Goog-Api-Key") != "test-key" {
			t.Errorf("genai sent %s with key %q", r.URL, r.Header.Get("X-Goog-Api-Key"))
		}
		io.WriteString(w, answerBody)
	}))
	defer srv.Close()
	temp, topP, pres, freq := float32(0.5), float32(0.75), float32(0.25), float32(-0.5)
	seed, budget := int32(7), int32(8192)
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	contents := []*genai.Content{
		{Role: "user", Parts: []*genai.Part{{Text: "Weather in Paris?"}}},
		{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "weather", Args: map[string]any{"city": "Paris"}}, ThoughtSignature: []byte("sig")}}},
		{Role: "user", Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{Name: "weather", Response: map[string]any{"output": "18C"}}},
			{Text: "And this?"},
			{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG")}},
			{FileData: &genai.FileData{MIMEType: "image/jpeg", FileURI: "https://example.com/cat.jpg"}},
		}},
	}
	config := &genai.GenerateContentConfig{
		SystemInstruction: &genai.Content{Parts: []*genai.Part{{Text: "Be brief."}}},
		Temperature:       &temp, TopP: &topP, PresencePenalty: &pres, FrequencyPenalty: &freq, Seed: &seed,
		MaxOutputTokens: 100, StopSequences: []string{"END"}, CandidateCount: 2,
		ResponseMIMEType: "application/json", ResponseJsonSchema: map[string]any{"type": "object"},
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
			{Name: "weather", Description: "Weather now", ParametersJsonSchema: schema}}}},
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
			Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"weather"}}},
		ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget},
	}
	if _, err := genaiClient(t, srv).Models.GenerateContent(context.Background(), "gemini-2.5-flash", contents, config); err != nil {
		t.Fatal(err)
	}
	chat := `{"model":"gemini-2.5-flash","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]},
		{"role":"tool","tool_call_id":"c1","content":"18C"},
		{"role":"user","content":[{"type":"text","text":"And this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}},{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}]}],
		"temperature":0.5,"top_p":0.75,"presence_penalty":0.25,"frequency_penalty":-0.5,"seed":7,"max_tokens":100,"stop":"END","n":2,
		"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}},
		"tools":[{"type":"function","function":{"name":"weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],
		"tool_choice":{"type":"function","function":{"name":"weather"}},
		"reasoning_effort":"medium"}`
	tr, err := TranslateChat([]byte(chat), false)
	if err != nil {
		t.Fatal(err)
	}
	var ours, theirs any
	json.Unmarshal(tr.Body, &ours)
	json.Unmarshal(sent, &theirs)
	if !reflect.DeepEqual(ours, theirs) {
		t.Errorf("ours   %s\ngenai's %s", tr.Body, sent)
	}
}

// Google's client reads a Gemini answer as this package does: the same
// text, function calls, finish and usage.
func TestGenaiReadsAnswersAlike(t *testing.T) {
	fixtures := []string{
		answerBody,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"hm","thought":true},{"functionCall":{"name":"weather","args":{"city":"Paris","days":[1,2]}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7,"thoughtsTokenCount":2,"cachedContentTokenCount":1},"responseId":"r3"}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"cut"}]},"finishReason":"MAX_TOKENS"}]}`,
	}
	for _, fx := range fixtures {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, fx) }))
		theirs, err := genaiClient(t, srv).Models.GenerateContent(context.Background(), "m", genai.Text("x"), nil)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ChatAnswer(answer(200, fx), "m", 1)
		if err != nil {
			t.Fatal(err)
		}
		var ours chatCompletion
		if err := json.Unmarshal([]byte(readAll(t, resp)), &ours); err != nil {
			t.Fatal(err)
		}
		msg := ours.Choices[0].Message
		if got := deref(msg.Content); got != theirs.Text() {
			t.Errorf("%s: content %q, genai's text %q", fx, got, theirs.Text())
		}
		calls := theirs.FunctionCalls()
		if len(calls) != len(msg.ToolCalls) {
			t.Fatalf("%s: %d tool calls, genai %d", fx, len(msg.ToolCalls), len(calls))
		}
		for i, c := range calls {
			var args map[string]any
			json.Unmarshal([]byte(msg.ToolCalls[i].Function.Arguments), &args)
			if msg.ToolCalls[i].Function.Name != c.Name || !reflect.DeepEqual(args, c.Args) {
				t.Errorf("call %d: %s %v, genai %s %v", i, msg.ToolCalls[i].Function.Name, args, c.Name, c.Args)
			}
		}
		if want := finishReason(string(theirs.Candidates[0].FinishReason), len(calls) > 0); ours.Choices[0].FinishReason != want {
			t.Errorf("finish %s, genai's reason maps to %s", ours.Choices[0].FinishReason, want)
		}
		if u := theirs.UsageMetadata; u != nil {
			if ours.Usage.PromptTokens != int(u.PromptTokenCount) || ours.Usage.CompletionTokens != int(u.CandidatesTokenCount+u.ThoughtsTokenCount) ||
				ours.Usage.PromptTokensDetails.CachedTokens != int(u.CachedContentTokenCount) {
				t.Errorf("usage %+v, genai %+v", ours.Usage, u)
			}
		}
	}
}

// Google's client reads a Gemini stream as this package does: the same
// text, in the same pieces, and an error object in it is an error.
func TestGenaiReadsStreamsAlike(t *testing.T) {
	up := sseOf(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"r1"}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]}}],"responseId":"r1"}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],"responseId":"r1","usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":3}}`)
	var theirs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("alt") != "sse" || !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			t.Errorf("genai streams from %s", r.URL)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, up)
	}))
	defer srv.Close()
	for resp, err := range genaiClient(t, srv).Models.GenerateContentStream(context.Background(), "m", genai.Text("x"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		theirs = append(theirs, resp.Text())
	}
	out, err := translateStream(t, up, false)
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, ev := range strings.Split(strings.TrimSpace(out), "\n\n") {
		var c struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
					Role    string  `json:"role"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &c) == nil && len(c.Choices) == 1 &&
			c.Choices[0].Delta.Content != nil && c.Choices[0].Delta.Role == "" {
			ours = append(ours, *c.Choices[0].Delta.Content)
		}
	}
	if !reflect.DeepEqual(ours, theirs) {
		t.Errorf("our pieces %q, genai's %q", ours, theirs)
	}

	// An error object mid-stream: genai fails, and our stream says error.
	bad := sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`)
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, bad) }))
	defer srv2.Close()
	var genaiErr error
	for _, err := range genaiClient(t, srv2).Models.GenerateContentStream(context.Background(), "m", genai.Text("x"), nil) {
		if err != nil {
			genaiErr = err
			break
		}
	}
	out, _ = translateStream(t, bad, false)
	if genaiErr == nil || !strings.Contains(out, `"error":{"message":"overloaded","type":"UNAVAILABLE"`) {
		t.Errorf("genai error %v; ours %s", genaiErr, out)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
