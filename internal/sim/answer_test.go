package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// n choices through the official client: each its own text, the first the
// text n = 1 gets, usage counting them all.
func TestChoicesWithOpenAIClient(t *testing.T) {
	s, ts := start(t, Config{Seed: 6, Output: Output{Tokens: 7}})
	req := openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, N: openai.Int(3),
	}
	got, err := sdk(ts).Chat.Completions.New(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, ch := range got.Choices {
		if ch.Index != int64(i) || ch.FinishReason != "stop" || len(strings.Fields(ch.Message.Content)) != 7 {
			t.Errorf("choice %d: %+v", i, ch)
		}
		seen[ch.Message.Content] = true
	}
	if len(got.Choices) != 3 || len(seen) != 3 {
		t.Errorf("%d choices, %d texts; want 3 different", len(got.Choices), len(seen))
	}
	if got.Usage.CompletionTokens != 21 {
		t.Errorf("completion tokens %d, want 3×7", got.Usage.CompletionTokens)
	}
	if st := s.Stats(); st.BilledOutputTokens != 21 {
		t.Errorf("billed %d, want 21", st.BilledOutputTokens)
	}
	_, ts1 := start(t, Config{Seed: 6, Output: Output{Tokens: 7}})
	req.N = openai.Int(1)
	one, err := sdk(ts1).Chat.Completions.New(context.Background(), req)
	if err != nil || one.Choices[0].Message.Content != got.Choices[0].Message.Content {
		t.Errorf("n=1 gave %q (%v); want the first of n=3, %q", one.Choices[0].Message.Content, err, got.Choices[0].Message.Content)
	}
}

// Streamed, every choice has its role chunk, content chunks and finish
// chunk by index; accumulated, they are the non-streamed choices.
func TestChoicesStream(t *testing.T) {
	req := openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, N: openai.Int(4),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	_, ts := start(t, Config{Seed: 9, Output: Output{Tokens: 8}})
	stream := sdk(ts).Chat.Completions.NewStreaming(context.Background(), req)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	_, ts2 := start(t, Config{Seed: 9, Output: Output{Tokens: 8}})
	want, err := sdk(ts2).Chat.Completions.New(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 4 || acc.Usage.CompletionTokens != 32 {
		t.Fatalf("%d choices, usage %+v; want 4 and 32 completion tokens", len(acc.Choices), acc.Usage)
	}
	for i := range acc.Choices {
		if g, w := acc.Choices[i].Message.Content, want.Choices[i].Message.Content; g != w || acc.Choices[i].FinishReason != "stop" {
			t.Errorf("choice %d: streamed %q, not streamed %q", i, g, w)
		}
	}

	s, _ := New(Config{Seed: 9, Output: Output{Tokens: 8}})
	rec := serve(s, "POST", "/v1/chat/completions", chatWith(`"n":2,"stream":true`))
	data, _ := events(t, rec.Body)
	roles, finishes := map[int]int{}, map[int]int{}
	for _, d := range data[:len(data)-1] {
		var c chunk
		json.Unmarshal([]byte(d), &c)
		for _, ch := range c.Choices {
			if ch.Delta.Role != "" {
				roles[ch.Index]++
			}
			if ch.FinishReason != nil {
				finishes[ch.Index]++
			}
		}
	}
	if roles[0] != 1 || roles[1] != 1 || finishes[0] != 1 || finishes[1] != 1 || data[len(data)-1] != "[DONE]" {
		t.Errorf("roles %v, finishes %v; want one of each per index, then [DONE]", roles, finishes)
	}
}

func TestResponseFormatJSONObject(t *testing.T) {
	_, ts := start(t, Config{Seed: 2})
	got, err := sdk(ts).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("answer in json")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(got.Choices[0].Message.Content), &obj); err != nil || obj == nil {
		t.Errorf("content %q: %v; want a JSON object", got.Choices[0].Message.Content, err)
	}
}

const recipeSchema = `{"type":"object","properties":{
	"title":{"type":"string"},
	"servings":{"type":"integer","minimum":1,"maximum":12},
	"ingredients":{"type":"array","minItems":2,"items":{"type":"object","properties":{"name":{"type":"string"},"grams":{"type":"number","minimum":0}},"required":["name","grams"],"additionalProperties":false}},
	"vegan":{"type":"boolean"},
	"course":{"type":"string","enum":["starter","main","dessert"]}},
	"required":["title","servings","ingredients","vegan","course"],"additionalProperties":false}`

// json_schema answers are valid against the schema, streamed or not.
func TestResponseFormatJSONSchema(t *testing.T) {
	schema := params(t, recipeSchema)
	format := openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "recipe", Schema: schema, Strict: openai.Bool(true)}}}
	req := openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a recipe")}, ResponseFormat: format, N: openai.Int(2),
	}
	_, ts := start(t, Config{Seed: 4})
	got, err := sdk(ts).Chat.Completions.New(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range got.Choices {
		checkArgs(t, ch.Message.Content, recipeSchema)
	}
	if got.Choices[0].Message.Content == got.Choices[1].Message.Content {
		t.Error("two choices, one document")
	}

	_, ts2 := start(t, Config{Seed: 4, Output: Output{ChunkTokens: 2}})
	stream := sdk(ts2).Chat.Completions.NewStreaming(context.Background(), req)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	for i := range acc.Choices {
		if acc.Choices[i].Message.Content != got.Choices[i].Message.Content {
			t.Errorf("choice %d streamed %s, not streamed %s", i, acc.Choices[i].Message.Content, got.Choices[i].Message.Content)
		}
	}
	if chunks < 10 {
		t.Errorf("%d chunks; want the document in many", chunks)
	}

	// Cut at max_tokens, the JSON is left broken, as a provider leaves it.
	s, _ := New(Config{Seed: 4})
	body := chatWith(`"max_tokens":3,"response_format":{"type":"json_schema","json_schema":{"name":"recipe","schema":` + recipeSchema + `}}`)
	c := completionOf(t, serve(s, "POST", "/v1/chat/completions", body).Body.Bytes())
	if c.Choices[0].FinishReason != "length" || c.Usage.CompletionTokens != 3 || json.Valid([]byte(*c.Choices[0].Message.Content)) {
		t.Errorf("cut: %+v; want 3 tokens of broken JSON, finish length", c)
	}
}
