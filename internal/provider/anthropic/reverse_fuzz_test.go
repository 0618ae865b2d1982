package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
)

// The reverse fuzz targets read what clients and upstreams send: an
// Anthropic Messages request from any client, an OpenAI chat.completion
// from any OpenAI-compatible target. Their seeds are in
// testdata/fuzz/<FuzzName>/ and the forward goldens.

// FuzzFromMessagesRequest: any body is translated or refused with a
// RequestError naming the field in JSON's words; a translation is valid
// UTF-8 JSON of the chat request's shape, and says what the request says
// (model, max_tokens, stream, stop, texts, tool calls and results).
func FuzzFromMessagesRequest(f *testing.F) {
	addSeeds(f, "testdata/request/*.anthropic.json")
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := FromMessagesRequest(in)
		if err != nil {
			checkRequestError(t, err)
			return
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("not valid UTF-8 JSON: %q", out)
		}
		got := decodeChatRequest(t, out)
		want := readMessagesRequest(t, in)
		if got.Model != want.Model || !reflect.DeepEqual(got.MaxTokens, want.MaxTokens) || got.Stream != want.Stream ||
			(got.StreamOptions != nil) != want.Stream || !reflect.DeepEqual(got.Stop, want.Stop) {
			t.Fatalf("model, max_tokens, stream or stop differ:\n%s\n->\n%s", in, out)
		}
		if ts := got.turns(t); !reflect.DeepEqual(ts, want.Turns) {
			t.Fatalf("messages differ:\n got %q\nwant %q\n%s\n->\n%s", ts, want.Turns, in, out)
		}
	})
}

// FuzzToMessagesResponse: any upstream body is translated or refused with
// a plain error; a translation is valid UTF-8 JSON that the Anthropic SDK
// reads as a Message saying what the chat.completion says.
func FuzzToMessagesResponse(f *testing.F) {
	for _, pattern := range []string{"testdata/response/*.openai.json", "testdata/reverse/request_*.openai.json"} {
		addSeeds(f, pattern)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, model := range []string{"", "claude-via-gateway"} {
			out, err := ToMessagesResponse(in, model)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "anthropic: ") || goSyntax.MatchString(err.Error()) || !utf8.ValidString(err.Error()) {
					t.Fatalf("error %q", err)
				}
				continue
			}
			if !json.Valid(out) || !utf8.Valid(out) {
				t.Fatalf("not valid UTF-8 JSON: %q", out)
			}
			checkMessagesAnswer(t, in, model, out)
		}
	})
}

// goSyntax matches Go's names for types, which must not reach a client.
var goSyntax = regexp.MustCompile(`interface \{|map\[|\[\][a-z*]|struct \{|json\.|Go (value|struct)|\*[a-z]+\.`)

// fieldPath is the syntax of RequestError.Field.
var fieldPath = regexp.MustCompile(`^[a-z_]+(\[[0-9]+\])*(\.[a-z_]+(\[[0-9]+\])*)*$`)

func checkRequestError(t *testing.T, err error) {
	t.Helper()
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("error %T %v", err, err)
	}
	msg := re.Error()
	switch {
	case goSyntax.MatchString(msg):
		t.Fatalf("Go syntax in %q", msg)
	case !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r"):
		t.Fatalf("message %q", msg)
	case re.Field != "" && strings.Contains(msg, "not valid JSON"):
		t.Fatalf("%q: the body was valid JSON", msg) // so is every value in it
	case len(msg) > 400:
		t.Fatalf("message of %d bytes: %.100q…", len(msg), msg)
	case re.Field == "" && re.Code != CodeUnsupportedParameter && !strings.HasPrefix(re.Message, "the request body"):
		t.Fatalf("no field in %q", msg)
	case re.Field != "" && !strings.Contains(msg, strconv.Quote(re.Field)):
		t.Fatalf("field %q, message %q", re.Field, msg)
	case re.Code != CodeUnsupportedParameter && re.Field != "" && !fieldPath.MatchString(re.Field):
		t.Fatalf("field %q, message %q", re.Field, msg) // only unknown keys are named as sent
	}
	switch re.Code {
	case CodeInvalidValue, CodeUnsupportedValue, CodeUnsupportedParameter:
	default:
		t.Fatalf("code %q in %q", re.Code, msg)
	}
}

// chatRequest is the OpenAI chat request as FromMessagesRequest may write
// it; decodeChatRequest refuses any other field.
type chatRequest struct {
	Model         string   `json:"model"`
	MaxTokens     *int64   `json:"max_tokens"`
	Temperature   *float64 `json:"temperature"`
	TopP          *float64 `json:"top_p"`
	Stop          []string `json:"stop"`
	Stream        bool     `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User     string `json:"user"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID *string         `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
}

type outPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	File *struct {
		Filename string `json:"filename"`
		FileData string `json:"file_data"`
	} `json:"file"`
}

func decodeChatRequest(t *testing.T, out []byte) chatRequest {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var r chatRequest
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if r.Messages == nil {
		t.Fatalf("no messages in %s", out)
	}
	for i, tl := range r.Tools {
		if tl.Type != "function" {
			t.Fatalf("tools[%d] type %q", i, tl.Type)
		}
	}
	if r.ToolChoice != nil {
		var s string
		var o struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(r.ToolChoice, &s) != nil && (json.Unmarshal(r.ToolChoice, &o) != nil || o.Type != "function") {
			t.Fatalf("tool_choice %s", r.ToolChoice)
		}
	}
	return r
}

// turns lists what each translated message says, in order, as
// "role: text" lines: tool calls as "call id name arguments", tool results
// as "result id", images and files as their URL.
func (r *chatRequest) turns(t *testing.T) []string {
	t.Helper()
	var out []string
	for i, m := range r.Messages {
		switch m.Role {
		case "system":
			var s string
			if i != 0 || json.Unmarshal(m.Content, &s) != nil || s == "" {
				t.Fatalf("system message %d: %s", i, m.Content)
			}
			out = append(out, "system: "+s)
		case "user", "tool":
			if m.Role == "tool" {
				if m.ToolCallID == nil {
					t.Fatalf("tool message %d without tool_call_id", i)
				}
				out = append(out, "result "+*m.ToolCallID)
			}
			var s string
			if m.Role == "tool" && json.Unmarshal(m.Content, &s) == nil {
				out = append(out, "text: "+s)
				continue
			}
			var parts []outPart
			if err := json.Unmarshal(m.Content, &parts); err != nil || len(parts) == 0 {
				t.Fatalf("%s content %s", m.Role, m.Content)
			}
			for _, p := range parts {
				switch {
				case p.Type == "text":
					out = append(out, "text: "+p.Text)
				case p.Type == "image_url" && p.ImageURL != nil && m.Role == "user":
					out = append(out, "image: "+p.ImageURL.URL)
				case p.Type == "file" && p.File != nil && m.Role == "user":
					out = append(out, "file: "+p.File.FileData)
				default:
					t.Fatalf("%s part %+v", m.Role, p)
				}
			}
		case "assistant":
			var s *string
			if err := json.Unmarshal(m.Content, &s); err != nil || (s == nil && len(m.ToolCalls) == 0) {
				t.Fatalf("assistant content %s", m.Content)
			}
			if s != nil {
				out = append(out, "assistant: "+*s)
			}
			for _, c := range m.ToolCalls {
				if c.Type != "function" || !isJSONObject(c.Function.Arguments) {
					t.Fatalf("tool call %+v", c)
				}
				out = append(out, "call "+c.ID+" "+c.Function.Name+" "+canonical(t, c.Function.Arguments))
			}
		default:
			t.Fatalf("role %q", m.Role)
		}
	}
	if len(r.Messages) == 0 || (len(r.Messages) == 1 && r.Messages[0].Role == "system") {
		t.Fatalf("no message but the system prompt")
	}
	return out
}

func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// canonical re-encodes JSON text: keys sorted, numbers as written.
func canonical(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v in %q", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// clientRequest is what a Messages request says, read the way Anthropic
// reads it: exact keys, the last of duplicates.
type clientRequest struct {
	Model     string
	MaxTokens *int64
	Stream    bool
	Stop      []string
	Turns     []string // as chatRequest.turns lists them
}

// readMessagesRequest reads a request that FromMessagesRequest accepted.
func readMessagesRequest(t *testing.T, in []byte) clientRequest {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var req map[string]any
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("accepted %q: %v", in, err)
	}
	var r clientRequest
	r.Model, _ = req["model"].(string)
	if n, ok := req["max_tokens"].(json.Number); ok {
		i, err := n.Int64()
		if v, ferr := n.Float64(); err != nil && (ferr != nil || v != float64(int64(v))) {
			t.Fatalf("accepted max_tokens %v", n)
		} else if err != nil {
			i = int64(v)
		}
		r.MaxTokens = &i
	}
	r.Stream, _ = req["stream"].(bool)
	for _, s := range list(req["stop_sequences"]) {
		r.Stop = append(r.Stop, s.(string))
	}
	if sys := strings.Join(texts(t, req["system"]), "\n\n"); sys != "" {
		r.Turns = append(r.Turns, "system: "+sys)
	}
	for _, m := range list(req["messages"]) {
		m := m.(map[string]any)
		blocks := contentList(m["content"])
		if m["role"] == "assistant" {
			var text []string
			var calls []string
			for _, b := range blocks {
				switch b["type"] {
				case "text":
					text = append(text, str(b["text"]))
				case "tool_use":
					args := "{}"
					if b["input"] != nil {
						a, _ := json.Marshal(b["input"])
						args = string(a)
					}
					calls = append(calls, "call "+str(b["id"])+" "+str(b["name"])+" "+args)
				}
			}
			if len(text) > 0 || len(calls) == 0 {
				r.Turns = append(r.Turns, "assistant: "+strings.Join(text, ""))
			}
			r.Turns = append(r.Turns, calls...)
			continue
		}
		var results, parts []string
		for _, b := range blocks {
			switch b["type"] {
			case "text":
				parts = append(parts, "text: "+str(b["text"]))
			case "image", "document":
				src, _ := b["source"].(map[string]any)
				kind := "image: "
				if b["type"] == "document" {
					kind = "file: "
				}
				if src["type"] == "url" {
					parts = append(parts, kind+str(src["url"]))
				} else {
					parts = append(parts, kind+"data:"+str(src["media_type"])+";base64,"+str(src["data"]))
				}
			case "tool_result":
				results = append(results, "result "+str(b["tool_use_id"]))
				if c, ok := b["content"].(string); ok || len(list(b["content"])) == 0 {
					results = append(results, "text: "+c)
					continue
				}
				for _, s := range texts(t, b["content"]) {
					results = append(results, "text: "+s)
				}
			}
		}
		r.Turns = append(append(r.Turns, results...), parts...)
	}
	return r
}

func str(v any) string { s, _ := v.(string); return s }

func list(v any) []any { l, _ := v.([]any); return l }

// contentList reads content: a string is one text block.
func contentList(v any) []map[string]any {
	if s, ok := v.(string); ok {
		return []map[string]any{{"type": "text", "text": s}}
	}
	var out []map[string]any
	for _, b := range list(v) {
		out = append(out, b.(map[string]any))
	}
	return out
}

// texts reads system or tool_result content as its text blocks.
func texts(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	for _, b := range contentList(v) {
		if b["type"] != "text" {
			t.Fatalf("accepted a %v block in text-only content", b["type"])
		}
		out = append(out, str(b["text"]))
	}
	return out
}

// checkMessagesAnswer checks a translated answer against the
// chat.completion it came from.
func checkMessagesAnswer(t *testing.T, in []byte, model string, out []byte) {
	t.Helper()
	var got anth.Message
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the SDK cannot read %s: %v", out, err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var strict messagesAnswer
	if err := dec.Decode(&strict); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	var a chatAnswer
	if err := json.Unmarshal(in, &a); err != nil || len(a.Choices) == 0 || a.Choices[0] == nil {
		t.Fatalf("translated an unreadable answer %q", in)
	}
	if model == "" {
		model = a.Model
	}
	msg := a.Choices[0].Message
	stop := map[string]string{"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
		"function_call": "tool_use", "content_filter": "refusal"}[a.Choices[0].FinishReason]
	if stop == "" {
		stop = "end_turn"
	}
	if got.Type != "message" || got.Role != "assistant" || got.Model != model || string(got.StopReason) != stop ||
		string(strict.StopSequence) != "null" || (got.ID != "" && !strings.HasPrefix(got.ID, "msg_")) {
		t.Fatalf("envelope of %s", out)
	}
	var want []string
	text := msg.Content
	if text == nil || *text == "" {
		text = msg.Refusal
	}
	if text != nil && *text != "" {
		want = append(want, "text "+*text)
	}
	for _, c := range msg.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			t.Fatalf("translated a %q tool call", c.Type)
		}
		args := c.Function.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		want = append(want, "tool_use "+c.ID+" "+c.Function.Name+" "+canonical(t, args))
	}
	var blocks []string
	for _, b := range got.Content {
		switch b.Type {
		case "text":
			blocks = append(blocks, "text "+b.Text)
		case "tool_use":
			blocks = append(blocks, "tool_use "+b.ID+" "+b.Name+" "+canonical(t, string(b.Input)))
		default:
			t.Fatalf("block type %q", b.Type)
		}
	}
	if !reflect.DeepEqual(blocks, want) {
		t.Fatalf("content differs:\n got %q\nwant %q", blocks, want)
	}
	u := got.Usage
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadInputTokens < 0 || u.CacheCreationInputTokens < 0 {
		t.Fatalf("negative usage in %s", out)
	}
	if a.Usage != nil && a.Usage.PromptTokens >= 0 && a.Usage.CompletionTokens >= 0 &&
		(u.OutputTokens != int64(a.Usage.CompletionTokens) || u.InputTokens+u.CacheReadInputTokens != int64(a.Usage.PromptTokens)) {
		t.Fatalf("usage of %s differs from %+v", out, *a.Usage)
	}
}
