package geminiapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// These tests drive the package with Google's own Go client: what the
// client accepts proves the answers are in Gemini's format.

const testModel = "gemini-2.5-flash"

func newClient(t *testing.T, e *engine) *genai.Client {
	t.Helper()
	srv := server(t, e)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGenerateContent(t *testing.T) {
	e := &engine{}
	c := newClient(t, e)
	resp, err := c.Models.GenerateContent(context.Background(), testModel, genai.Text("Hi there"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Text(); got != "Hello from the engine." {
		t.Errorf("text %q", got)
	}
	cand := resp.Candidates[0]
	if cand.FinishReason != genai.FinishReasonStop {
		t.Errorf("finish reason %q", cand.FinishReason)
	}
	if cand.Content.Role != "model" {
		t.Errorf("role %q", cand.Content.Role)
	}
	u := resp.UsageMetadata
	if u == nil || u.PromptTokenCount == 0 || u.CandidatesTokenCount != 7 || u.CachedContentTokenCount != 2 ||
		u.TotalTokenCount != u.PromptTokenCount+7 {
		t.Errorf("usage %+v", u)
	}
	if resp.ModelVersion != testModel || resp.ResponseID != "chatcmpl-1" {
		t.Errorf("model %q, id %q", resp.ModelVersion, resp.ResponseID)
	}
	msgs := e.lastBody()["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "Hi there" {
		t.Errorf("messages %v", msgs)
	}
	if e.lastBody()["model"] != testModel {
		t.Errorf("model %v", e.lastBody()["model"])
	}
}

func TestGenerateContentStream(t *testing.T) {
	for _, sse := range []bool{true} { // the client always asks for alt=sse; the array form is tested on its own
		e := &engine{}
		c := newClient(t, e)
		var text strings.Builder
		var last *genai.GenerateContentResponse
		n := 0
		for resp, err := range c.Models.GenerateContentStream(context.Background(), testModel, genai.Text("Hi"), nil) {
			if err != nil {
				t.Fatalf("sse %v: %v", sse, err)
			}
			text.WriteString(resp.Text())
			last = resp
			n++
		}
		if text.String() != "Hello from the engine." {
			t.Errorf("text %q", text.String())
		}
		if n < 5 {
			t.Errorf("%d chunks: the answer was not streamed", n)
		}
		if last.Candidates[0].FinishReason != genai.FinishReasonStop || last.UsageMetadata == nil ||
			last.UsageMetadata.CandidatesTokenCount != 7 {
			t.Errorf("last chunk %+v", last.Candidates[0])
		}
		if body := e.lastBody(); body["stream"] != true {
			t.Errorf("chat body %v", body)
		}
	}
}

func TestSystemInstruction(t *testing.T) {
	e := &engine{}
	c := newClient(t, e)
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		Temperature: genai.Ptr[float32](0.5), TopK: genai.Ptr[float32](40), MaxOutputTokens: 100,
		StopSequences: []string{"END"}, Seed: genai.Ptr[int32](7)}
	resp, err := c.Models.GenerateContent(context.Background(), testModel, genai.Text("Hi"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "System: Be brief." {
		t.Errorf("text %q", resp.Text())
	}
	body := e.lastBody()
	if body["max_completion_tokens"] != 100.0 || body["temperature"] != 0.5 || body["seed"] != 7.0 ||
		body["top_k"] != nil || len(body["stop"].([]any)) != 1 {
		t.Errorf("chat body %v", body)
	}
}

func TestJSONOutput(t *testing.T) {
	e := &engine{}
	c := newClient(t, e)
	cfg := &genai.GenerateContentConfig{ResponseMIMEType: "application/json", ResponseSchema: &genai.Schema{
		Type:       genai.TypeObject,
		Properties: map[string]*genai.Schema{"answer": {Type: genai.TypeInteger, Nullable: genai.Ptr(true)}},
		Required:   []string{"answer"},
	}}
	resp, err := c.Models.GenerateContent(context.Background(), testModel, genai.Text("The answer?"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != `{"answer":42}` {
		t.Errorf("text %q", resp.Text())
	}
	rf := e.lastBody()["response_format"].(map[string]any)
	schema := rf["json_schema"].(map[string]any)["schema"].(map[string]any)
	answer := schema["properties"].(map[string]any)["answer"].(map[string]any)
	if rf["type"] != "json_schema" || schema["type"] != "object" || answer["type"].([]any)[1] != "null" {
		t.Errorf("response_format %v", rf)
	}
}

func TestThinking(t *testing.T) {
	e := &engine{}
	c := newClient(t, e)
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](3000)}}
	resp, err := c.Models.GenerateContent(context.Background(), testModel, genai.Text("Think"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	parts := resp.Candidates[0].Content.Parts
	if len(parts) != 2 || !parts[0].Thought || parts[0].Text != "Let me think (medium)." || resp.Text() != "Hello from the engine." {
		t.Errorf("parts %+v %+v", parts[0], parts[len(parts)-1])
	}
	if u := resp.UsageMetadata; u.ThoughtsTokenCount != 5 || u.CandidatesTokenCount != 7 {
		t.Errorf("usage %+v", u)
	}
	// Streamed, the thoughts come as thought parts too; without
	// includeThoughts they do not come, but are counted.
	for _, include := range []bool{true, false} {
		thought := false
		var usage *genai.GenerateContentResponseUsageMetadata
		cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelHigh, IncludeThoughts: include}}
		for resp, err := range c.Models.GenerateContentStream(context.Background(), testModel, genai.Text("Think"), cfg) {
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range resp.Candidates[0].Content.Parts {
				thought = thought || p.Thought && p.Text == "Let me think (high)."
			}
			usage = resp.UsageMetadata
		}
		if thought != include || usage.ThoughtsTokenCount != 5 {
			t.Errorf("includeThoughts %v: thought parts %v, thoughts counted %d", include, thought, usage.ThoughtsTokenCount)
		}
	}
	resp, err = c.Models.GenerateContent(context.Background(), testModel, genai.Text("Think"),
		&genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](100)}})
	if err != nil || len(resp.Candidates[0].Content.Parts) != 1 || resp.Candidates[0].Content.Parts[0].Thought {
		t.Errorf("without includeThoughts: %v %+v", err, resp.Candidates[0].Content.Parts)
	}
}

func weatherTool() []*genai.Tool {
	return []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "get_weather", Description: "The weather in a city",
		Parameters: &genai.Schema{Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}, Required: []string{"city"}},
	}}}}
}

func TestToolRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		e := &engine{}
		c := newClient(t, e)
		ctx := context.Background()
		cfg := &genai.GenerateContentConfig{Tools: weatherTool(), ToolConfig: &genai.ToolConfig{
			FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}}
		history := []*genai.Content{genai.NewContentFromText("Weather in Paris?", genai.RoleUser)}
		var call *genai.FunctionCall
		var model *genai.Content
		if stream {
			for resp, err := range c.Models.GenerateContentStream(ctx, testModel, history, cfg) {
				if err != nil {
					t.Fatal(err)
				}
				if fc := resp.FunctionCalls(); len(fc) > 0 {
					call, model = fc[0], resp.Candidates[0].Content
				}
			}
		} else {
			resp, err := c.Models.GenerateContent(ctx, testModel, history, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if fc := resp.FunctionCalls(); len(fc) > 0 {
				call, model = fc[0], resp.Candidates[0].Content
			}
		}
		if call == nil || call.Name != "get_weather" || call.Args["city"] != "Paris" || call.ID != "call_abc" {
			t.Fatalf("stream %v: function call %+v", stream, call)
		}
		if tc := e.lastBody()["tool_choice"]; tc != "required" {
			t.Errorf("tool_choice %v", tc)
		}
		// The client answers without the id: it is matched by name and order.
		history = append(history, model, genai.NewContentFromFunctionResponse("get_weather", map[string]any{"output": "sunny"}, genai.RoleUser))
		resp, err := c.Models.GenerateContent(ctx, testModel, history, &genai.GenerateContentConfig{Tools: weatherTool()})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text() != `The tool said {"output":"sunny"}` {
			t.Errorf("text %q", resp.Text())
		}
		msgs := e.lastBody()["messages"].([]any)
		tool := msgs[2].(map[string]any)
		if tool["role"] != "tool" || tool["tool_call_id"] != "call_abc" {
			t.Errorf("tool message %v", tool)
		}
	}
}

func TestCountTokens(t *testing.T) {
	e := &engine{}
	c := newClient(t, e)
	resp, err := c.Models.CountTokens(context.Background(), testModel, genai.Text("Count these words"), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := e.lastBody()
	if resp.TotalTokens == 0 || body["max_completion_tokens"] != 1.0 {
		t.Errorf("total %d, chat body %v", resp.TotalTokens, body)
	}
	if resp.CachedContentTokenCount != 2 {
		t.Errorf("cached %d", resp.CachedContentTokenCount)
	}
}

func TestErrorMidStream(t *testing.T) {
	c := newClient(t, &engine{})
	var text strings.Builder
	var got error
	for resp, err := range c.Models.GenerateContentStream(context.Background(), testModel, genai.Text("FAIL please"), nil) {
		if err != nil {
			got = err
			break
		}
		text.WriteString(resp.Text())
	}
	var apiErr genai.APIError
	if !errors.As(got, &apiErr) || apiErr.Code != 503 || apiErr.Status != "UNAVAILABLE" || apiErr.Message != "the engine is overloaded" {
		t.Fatalf("error %#v", got)
	}
	if text.String() != "Hello" {
		t.Errorf("text before the error %q", text.String())
	}
}

func TestCutStreamIsAnError(t *testing.T) {
	c := newClient(t, &engine{})
	var got error
	for _, err := range c.Models.GenerateContentStream(context.Background(), testModel, genai.Text("CUT please"), nil) {
		if err != nil {
			got = err
		}
	}
	if got == nil {
		t.Fatal("a stream cut before its finish ended without an error")
	}
}

func TestRefusalReachesClient(t *testing.T) {
	c := newClient(t, &engine{})
	_, err := c.Models.GenerateContent(context.Background(), testModel, genai.Text("hi"),
		&genai.GenerateContentConfig{CachedContent: "cachedContents/abc"})
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Status != "INVALID_ARGUMENT" ||
		!strings.Contains(apiErr.Message, "cached_content") {
		t.Fatalf("error %#v", err)
	}
}
