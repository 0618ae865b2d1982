package responses

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// gateway is a minimal Responses endpoint over a fake chat target, wired
// as the package documentation says: the official SDK talks to it.
type gateway struct {
	t     *testing.T
	store Store
	chats [][]byte // the chat requests the target was sent
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const owner = "client-a"
	id, sub, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/responses/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		g.create(w, r, owner)
	case r.Method == http.MethodGet && sub == "input_items":
		st, ok := g.store.Get(owner, id)
		if !ok {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		out, err := st.ListInput(r.URL.Query().Get("after"), limit, r.URL.Query().Get("order"))
		if err != nil {
			writeAPIError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	case r.Method == http.MethodGet:
		st, ok := g.store.Get(owner, id)
		if !ok {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(st.Response)
	case r.Method == http.MethodDelete:
		if !g.store.Delete(owner, id) {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(Deleted(id))
	default:
		http.NotFound(w, r)
	}
}

func (g *gateway) create(w http.ResponseWriter, r *http.Request, owner string) {
	body, _ := io.ReadAll(r.Body)
	var history []Item
	if prev := PreviousResponseID(body); prev != "" {
		if st, ok := g.store.Get(owner, prev); ok {
			history = st.History()
		}
	}
	chatReq, req, err := ToChat(body, history)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	g.chats = append(g.chats, chatReq)
	id := NewID()
	var resp []byte
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		s := NewStream(req, id, created)
		for _, c := range targetChunks(g.t, chatReq) {
			evs, err := s.Chunk([]byte(c))
			if err != nil {
				g.t.Error(err)
			}
			writeEvents(w, evs)
		}
		writeEvents(w, s.Done())
		resp = s.Response()
	} else {
		if resp, err = FromChat(targetAnswer(g.t, chatReq), req, id, created); err != nil {
			g.t.Fatal(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(resp)
	}
	if req.Store {
		st, err := NewStored(req, resp, owner, created)
		if err == nil {
			err = g.store.Put(st)
		}
		if err != nil {
			g.t.Error(err)
		}
	}
}

func writeEvents(w http.ResponseWriter, evs []Event) {
	for _, e := range evs {
		io.WriteString(w, "event: "+e.Name+"\ndata: ")
		w.Write(e.Data)
		io.WriteString(w, "\n\n")
	}
}

func writeAPIError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": "invalid_request_error", "param": e.Param, "code": e.Code}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(body)
}

// targetTurn is what the fake chat target answers: text, or a tool call
// when it is given tools and no tool result yet.
func targetTurn(t *testing.T, chatReq []byte) (text string, call bool) {
	var c struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
		Tools []struct{ Function struct{ Name string } }
	}
	if err := json.Unmarshal(chatReq, &c); err != nil {
		t.Fatal(err)
	}
	last := c.Messages[len(c.Messages)-1]
	var content string
	json.Unmarshal(last.Content, &content)
	switch {
	case last.Role == "tool":
		return "the tool said " + content, false
	case len(c.Tools) > 0:
		return c.Tools[0].Function.Name, true
	}
	return "echo: " + content, false
}

func targetAnswer(t *testing.T, chatReq []byte) []byte {
	text, call := targetTurn(t, chatReq)
	if call {
		return chatBody(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_e2e","type":"function","function":{"name":`+quoteJSON(text)+`,"arguments":"{\"q\":1}"}}]}`, "tool_calls")
	}
	return chatBody(`{"role":"assistant","content":`+quoteJSON(text)+`}`, "stop")
}

func targetChunks(t *testing.T, chatReq []byte) []string {
	text, call := targetTurn(t, chatReq)
	chunks := []string{delta(`{"role":"assistant","content":""}`)}
	if call {
		chunks = append(chunks,
			delta(`{"tool_calls":[{"index":0,"id":"call_e2e","type":"function","function":{"name":`+quoteJSON(text)+`,"arguments":""}}]}`),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`),
			finish("tool_calls"))
	} else {
		for _, w := range strings.SplitAfter(text, " ") {
			chunks = append(chunks, delta(`{"content":`+quoteJSON(w)+`}`))
		}
		chunks = append(chunks, finish("stop"))
	}
	return append(chunks, usageChunk, "[DONE]")
}

func newClient(t *testing.T) (openai.Client, *gateway) {
	g := &gateway{t: t, store: NewMemoryStore(0, 0)}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0)), g
}

func weatherTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:       "weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "integer"}}},
		Strict:     openai.Bool(false),
	}}
}

func TestE2EOpenAIClient(t *testing.T) {
	client, g := newClient(t)
	ctx := context.Background()

	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model:        "gpt-test",
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("hello world")},
		Metadata:     map[string]string{"k": "v"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "echo: hello world" || resp.Status != "completed" || resp.Usage.InputTokens != 11 ||
		resp.Usage.InputTokensDetails.CachedTokens != 4 || resp.Usage.OutputTokensDetails.ReasoningTokens != 2 ||
		resp.Model != "up-model" || resp.Metadata["k"] != "v" || resp.Instructions.OfString != "Be brief." {
		t.Errorf("Responses.New = %s", resp.RawJSON())
	}

	got, err := client.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != "echo: hello world" {
		t.Errorf("Responses.Get = %v, %v", got, err)
	}
	page, err := client.Responses.InputItems.List(ctx, resp.ID, responses.InputItemListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].Type != "message" || page.Data[0].Role != "user" || page.Data[0].ID == "" {
		t.Fatalf("InputItems.List = %+v, %v", page, err)
	}
	if err := client.Responses.Delete(ctx, resp.ID); err != nil {
		t.Errorf("Responses.Delete: %v", err)
	}
	if _, err := client.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{}); err == nil {
		t.Error("Get after Delete found it")
	}

	// A refused request reaches the SDK as an API error naming the field.
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("q")},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "tools[0].type" || apiErr.Code != "unsupported_value" {
		t.Errorf("a built-in tool: %v", err)
	}
	_ = g
}

func TestE2EOpenAIClientToolsAcrossTurns(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			client, g := newClient(t)
			first := responses.ResponseNewParams{
				Model: "gpt-test",
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Oslo?")},
				Tools: []responses.ToolUnionParam{weatherTool()},
			}
			resp := run(t, client, first, stream)
			if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" {
				t.Fatalf("first turn output %s", resp.RawJSON())
			}
			call := resp.Output[0].AsFunctionCall()
			if call.CallID != "call_e2e" || call.Name != "weather" || call.Arguments != `{"q":1}` {
				t.Fatalf("function call %+v", call)
			}
			second := responses.ResponseNewParams{
				Model:              "gpt-test",
				PreviousResponseID: openai.String(resp.ID),
				Tools:              []responses.ToolUnionParam{weatherTool()},
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{
					OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
						CallID: openai.String(call.CallID),
						Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("-3C")},
					},
				}}},
			}
			resp2 := run(t, client, second, stream)
			if resp2.OutputText() != "the tool said -3C" || resp2.PreviousResponseID != resp.ID {
				t.Errorf("second turn %s", resp2.RawJSON())
			}
			// The target saw the whole conversation.
			var c struct {
				Messages []struct {
					Role      string
					ToolCalls []struct{ ID string } `json:"tool_calls"`
				}
			}
			json.Unmarshal(g.chats[1], &c)
			if len(c.Messages) != 3 || c.Messages[0].Role != "user" || c.Messages[1].ToolCalls[0].ID != "call_e2e" || c.Messages[2].Role != "tool" {
				t.Errorf("second chat request %s", g.chats[1])
			}
		})
	}
}

// run sends params, streamed or not, and returns the response.
func run(t *testing.T, client openai.Client, params responses.ResponseNewParams, stream bool) *responses.Response {
	t.Helper()
	ctx := context.Background()
	if !stream {
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	s := client.Responses.NewStreaming(ctx, params)
	var final *responses.Response
	var text strings.Builder
	seq := int64(0)
	for s.Next() {
		ev := s.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.AsResponseOutputTextDelta().Delta)
		case "response.completed":
			r := ev.AsResponseCompleted().Response
			final = &r
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if final == nil {
		t.Fatal("no response.completed")
	}
	if text.String() != final.OutputText() {
		t.Errorf("the deltas say %q, the response %q", text.String(), final.OutputText())
	}
	return final
}

// The SDK's own accumulator takes the events, in order, and puts the
// answer back together.
func TestE2EAccumulator(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	evs := feed(t, s,
		delta(`{"role":"assistant","content":""}`),
		delta(`{"content":"Hi "}`), delta(`{"refusal":"no"}`), delta(`{"content":"there"}`),
		delta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}`),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`),
		finish("tool_calls"), usageChunk)
	var acc responses.ResponseAccumulator
	for _, e := range evs {
		var u responses.ResponsesServerEventUnion
		if err := json.Unmarshal(e.Data, &u); err != nil {
			t.Fatal(err)
		}
		if err := acc.AddEvent(u); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
	}
	snap := acc.Snapshot()
	if snap.TerminalEvent != "response.completed" || len(snap.Output) != 2 || snap.Output[0].Text[0] != "Hi " ||
		snap.Output[0].Text[2] != "there" || snap.Output[1].CallID != "call_1" || snap.Output[1].Arguments != `{"a":1}` {
		t.Errorf("snapshot %+v", snap)
	}
	r, err := acc.ReconstructedResponse()
	if err != nil || r.OutputText() != "Hi there" {
		t.Errorf("reconstructed %v, %v", r, err)
	}
}
