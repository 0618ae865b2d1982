package sim

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

func TestChatWithOpenAIClient(t *testing.T) {
	s, ts := start(t, Config{Seed: 7, Output: Output{Tokens: 12}})
	c := sdk(ts)
	got, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-sim",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("0123456789abcdef")}, // 16 bytes: 4 tokens
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "gpt-sim" || len(got.Choices) != 1 || got.Choices[0].FinishReason != "stop" {
		t.Fatalf("got %+v", got)
	}
	text := got.Choices[0].Message.Content
	if n := len(strings.Fields(text)); n != 12 || !strings.HasSuffix(text, ".") {
		t.Errorf("content %q: %d words, want 12 ending with a full stop", text, n)
	}
	// 3 per call + 3 per message + 16 bytes / 4.
	if u := got.Usage; u.PromptTokens != 10 || u.CompletionTokens != 12 || u.TotalTokens != 22 {
		t.Errorf("usage = %+v, want 10 + 12 = 22", u)
	}
	st := s.Stats()
	if st.Calls != 1 || st.Outcomes[OutcomeOK] != 1 || st.InputTokens != 10 || st.BilledInputTokens != 10 || st.BilledOutputTokens != 12 {
		t.Errorf("stats = %+v", st)
	}
}

func TestChatMaxTokensCutsTheReply(t *testing.T) {
	_, ts := start(t, Config{Output: Output{Tokens: 50}})
	got, err := sdk(ts).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:     "m",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		MaxTokens: openai.Int(5),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].FinishReason != "length" || got.Usage.CompletionTokens != 5 || len(strings.Fields(got.Choices[0].Message.Content)) != 5 {
		t.Errorf("finish %q, usage %+v, content %q; want a 5-token reply cut for length",
			got.Choices[0].FinishReason, got.Usage, got.Choices[0].Message.Content)
	}
}

func TestStreamWithOpenAIClient(t *testing.T) {
	s, ts := start(t, Config{Seed: 3, Output: Output{Tokens: 10, ChunkTokens: 3}})
	stream := sdk(ts).Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "m",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello there")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	var contentChunks int
	var finish string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			contentChunks++
		}
		if len(ch.Choices) > 0 && ch.Choices[0].FinishReason != "" {
			finish = ch.Choices[0].FinishReason
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	if contentChunks != 4 || finish != "stop" {
		t.Errorf("%d content chunks, finish %q; want 4 (3+3+3+1 tokens) and stop", contentChunks, finish)
	}
	if n := len(strings.Fields(acc.Choices[0].Message.Content)); n != 10 {
		t.Errorf("content %q has %d words, want 10", acc.Choices[0].Message.Content, n)
	}
	if u := acc.Usage; u.PromptTokens != 9 || u.CompletionTokens != 10 {
		t.Errorf("usage = %+v, want prompt 9 (3+3+11/4), completion 10", u)
	}
	if st := s.Stats(); st.Outcomes[OutcomeOK] != 1 || st.BilledOutputTokens != 10 {
		t.Errorf("stats = %+v", st)
	}
}

// The same stream seen raw: role chunk first, no usage chunk unless asked,
// [DONE] last, and the same text as a non-streamed call of the same seed.
func TestStreamShape(t *testing.T) {
	s1, _ := New(Config{Seed: 9})
	s2, _ := New(Config{Seed: 9})
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`
	rec := serve(s1, "POST", "/v1/chat/completions", body)
	if ct := rec.Header().Get("Content-Type"); rec.Code != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", rec.Code, ct)
	}
	data, err := events(t, rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(data[0], `"role":"assistant"`) || data[len(data)-1] != "[DONE]" {
		t.Errorf("first %s, last %s; want the role chunk and [DONE]", data[0], data[len(data)-1])
	}
	var text strings.Builder
	for _, d := range data {
		if strings.Contains(d, `"usage"`) {
			t.Errorf("usage chunk without include_usage: %s", d)
		}
		c, _ := contentOf(t, d)
		text.WriteString(c)
	}
	rec = serve(s2, "POST", "/v1/chat/completions", strings.Replace(body, `"stream":true`, `"stream":false`, 1))
	var cc completion
	json.Unmarshal(rec.Body.Bytes(), &cc)
	if got := *cc.Choices[0].Message.Content; got != text.String() {
		t.Errorf("streamed %q, not streamed %q; want the same text from the same seed", text.String(), got)
	}
}

func TestEmbeddingsWithOpenAIClient(t *testing.T) {
	s, ts := start(t, Config{Seed: 1})
	got, err := sdk(ts).Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"alpha beta", "gamma", "alpha beta"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Data) != 3 || len(got.Data[0].Embedding) != 16 {
		t.Fatalf("got %d vectors of %d, want 3 of 16", len(got.Data), len(got.Data[0].Embedding))
	}
	var norm float64
	for _, x := range got.Data[0].Embedding {
		norm += x * x
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² = %v, want 1", norm)
	}
	if !slices.Equal(got.Data[0].Embedding, got.Data[2].Embedding) || slices.Equal(got.Data[0].Embedding, got.Data[1].Embedding) {
		t.Error("want the same vector for the same text and another for another text")
	}
	if got.Usage.PromptTokens != 8 { // ⌈10/4⌉ + ⌈5/4⌉ + ⌈10/4⌉
		t.Errorf("prompt tokens = %d, want 8 (3+2+3)", got.Usage.PromptTokens)
	}
	if st := s.Stats(); st.Outcomes[OutcomeOK] != 1 || st.BilledInputTokens != 8 {
		t.Errorf("stats = %+v", st)
	}
}

func TestEmbeddingsBase64AndDimensions(t *testing.T) {
	s, _ := New(Config{})
	rec := serve(s, "POST", "/v1/embeddings", `{"model":"e","input":"hi","dimensions":4,"encoding_format":"base64"}`)
	var got struct {
		Data []struct{ Embedding string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("status %d, %v: %s", rec.Code, err, rec.Body)
	}
	b, err := base64.StdEncoding.DecodeString(got.Data[0].Embedding)
	if err != nil || len(b) != 16 {
		t.Fatalf("decoded %d bytes (%v), want 4 float32s", len(b), err)
	}
	var norm float64
	for i := 0; i < 16; i += 4 {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
		norm += x * x
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² = %v, want 1", norm)
	}
}

func TestModelsWithOpenAIClient(t *testing.T) {
	_, ts := start(t, Config{Models: []string{"a", "b"}})
	c := sdk(ts)
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("models %v, want [a b]", ids)
	}
	if m, err := c.Models.Get(context.Background(), "b"); err != nil || m.ID != "b" {
		t.Errorf("Get(b) = %v, %v", m, err)
	}
	_, err = c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "c", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("unknown model: %v, want 404 model_not_found", err)
	}
}

func TestBadRequests(t *testing.T) {
	s, _ := New(Config{})
	for _, tc := range []struct {
		method, path, body string
		status             int
		param              string
	}{
		{"POST", "/v1/chat/completions", `{"model":`, 400, ""},
		{"POST", "/v1/chat/completions", `{"model":"m","messages":[]}`, 400, "messages"},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400, "model"},
		{"POST", "/v1/embeddings", `{"model":"m","input":[]}`, 400, "input"},
		{"POST", "/v1/embeddings", `{"model":"m","input":"x","encoding_format":"hex"}`, 400, "encoding_format"},
		{"POST", "/v1/responses", `{"model":"m"}`, 400, "input"},
		{"POST", "/v1/completions", `{}`, 404, ""},
	} {
		rec := serve(s, tc.method, tc.path, tc.body)
		var e struct {
			Error struct {
				Type  string
				Param *string
			}
		}
		json.Unmarshal(rec.Body.Bytes(), &e)
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if rec.Code != tc.status || e.Error.Type != "invalid_request_error" || param != tc.param {
			t.Errorf("%s %s %s: %d %s, want %d with param %q", tc.method, tc.path, tc.body, rec.Code, rec.Body, tc.status, tc.param)
		}
	}
	if st := s.Stats(); st.Outcomes[OutcomeBadRequest] != 6 || st.Calls != 6 || st.APIs["responses"] != 1 {
		t.Errorf("stats = %+v, want 6 bad requests, 1 of them responses (the unknown URL is not an API call)", st)
	}
	if rec := serve(s, "GET", "/v1/chat/completions", ""); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET chat: %d, want 405", rec.Code)
	}
}
