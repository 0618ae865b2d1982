package bedrockapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
)

const (
	testRegion = "us-east-1"
	testKeyID  = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testToken  = "ABSKbedrock-api-key"
	testModel  = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	fakeText   = "Hello from the simulated model, in several chunks."
)

// fakeEngine is a tiny OpenAI chat engine: it answers fakeText (streamed
// a word at a time), or, when the request has tools and its last message
// is the user's, a call of the first tool. A model whose id contains
// "think" reasons first. fault, when set, is written into a stream after
// its first content chunk, and the stream ends there.
type fakeEngine struct {
	mu    sync.Mutex
	chats [][]byte // the chat bodies received
	fault string   // raw SSE bytes
}

func (e *fakeEngine) last() map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var m map[string]any
	if len(e.chats) > 0 {
		json.Unmarshal(e.chats[len(e.chats)-1], &m)
	}
	return m
}

type fakeRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// answer returns what the engine says to a chat body: a chat.completion,
// or an SSE stream.
func (e *fakeEngine) answer(chat []byte) []byte {
	e.mu.Lock()
	e.chats = append(e.chats, chat)
	fault := e.fault
	e.mu.Unlock()
	var req fakeRequest
	if err := json.Unmarshal(chat, &req); err != nil {
		panic(err)
	}
	tool := ""
	answered := false
	for _, m := range req.Messages {
		answered = answered || m.Role == "tool"
	}
	if len(req.Tools) > 0 && !answered {
		tool = req.Tools[0].Function.Name
	}
	think := strings.Contains(req.Model, "think")
	usage := `{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19,"prompt_tokens_details":{"cached_tokens":4}}`
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": fakeText}
		finish := "stop"
		if tool != "" {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": tool, "arguments": `{"city":"Paris"}`}}}
			finish = "tool_calls"
		}
		if think {
			msg["reasoning_content"] = "Thinking it over."
		}
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": json.RawMessage(usage)})
		return b
	}
	var b bytes.Buffer
	chunk := func(delta, finish string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", req.Model, delta, finish)
	}
	chunk(`{"role":"assistant","content":""}`, "null")
	if think {
		chunk(`{"reasoning_content":"Thinking "}`, "null")
		chunk(`{"reasoning_content":"it over."}`, "null")
	}
	finish := `"stop"`
	if tool != "" {
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+tool+`","arguments":""}}]}`, "null")
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`, "null")
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`, "null")
		finish = `"tool_calls"`
	} else {
		for i, w := range strings.SplitAfter(fakeText, " ") {
			d, _ := json.Marshal(map[string]string{"content": w})
			chunk(string(d), "null")
			if i == 0 && fault != "" {
				b.WriteString(fault)
				return b.Bytes()
			}
		}
	}
	chunk(`{}`, finish)
	fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[],"usage":%s}`+"\n\n", req.Model, usage)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// bedrock is a Bedrock runtime over the fake engine, as the simulator
// builds one with this package: requests are authenticated with
// VerifySigV4, translated to chat, answered, and translated back.
type bedrock struct {
	engine fakeEngine
	now    func() time.Time
	mu     sync.Mutex
	denied []*Error // the refusals VerifySigV4 gave
}

func (s *bedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	lookup := func(id string) (string, bool) { return testSecret, id == testKeyID }
	bearer := func(tok string) bool { return tok == testToken }
	if err := VerifySigV4(r, body, testRegion, now, lookup, bearer); err != nil {
		e := err.(*Error)
		s.mu.Lock()
		s.denied = append(s.denied, e)
		s.mu.Unlock()
		e.Write(w)
		return
	}
	model := r.PathValue("model")
	var err error
	switch r.PathValue("op") {
	case "converse":
		err = s.converse(w, model, body)
	case "converse-stream":
		err = s.converseStream(w, model, body)
	case "invoke":
		err = s.invoke(w, model, body, false)
	case "invoke-with-response-stream":
		err = s.invoke(w, model, body, true)
	default:
		err = &Error{Status: 404, Type: "UnknownOperationException", Message: "unknown operation"}
	}
	if err != nil {
		err.(*Error).Write(w)
	}
}

func (s *bedrock) converse(w http.ResponseWriter, model string, body []byte) error {
	chat, err := ConverseToChat(model, body, false)
	if err != nil {
		return err
	}
	out, err := ChatToConverseLatency(s.engine.answer(chat), 42*time.Millisecond)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	return nil
}

func (s *bedrock) converseStream(w http.ResponseWriter, model string, body []byte) error {
	chat, err := ConverseToChat(model, body, true)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ContentTypeEventStream)
	io.Copy(w, NewConverseStream(bytes.NewReader(s.engine.answer(chat))))
	return nil
}

func (s *bedrock) invoke(w http.ResponseWriter, model string, body []byte, stream bool) error {
	msgs, err := InvokeToMessages(model, body, stream)
	if err != nil {
		return err
	}
	chat, err := anthropic.FromMessagesRequest(msgs)
	if err != nil {
		return invalid("", err.Error())
	}
	answer := s.engine.answer(chat)
	if !stream {
		out, err := anthropic.ToMessagesResponse(answer, model)
		if err != nil {
			return internal(err.Error())
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
		return nil
	}
	w.Header().Set("Content-Type", ContentTypeEventStream)
	io.Copy(w, NewInvokeStream(anthropic.NewMessagesStream(bytes.NewReader(answer), model)))
	return nil
}

// newBedrock starts the Bedrock runtime on 127.0.0.1.
func newBedrock(t *testing.T) (*bedrock, *httptest.Server) {
	return startBedrock(t, httptest.NewServer)
}

// newBedrockTLS starts it with TLS, which bearer tokens need.
func newBedrockTLS(t *testing.T) (*bedrock, *httptest.Server) {
	return startBedrock(t, httptest.NewTLSServer)
}

func startBedrock(t *testing.T, start func(http.Handler) *httptest.Server) (*bedrock, *httptest.Server) {
	t.Helper()
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	b := &bedrock{}
	mux := http.NewServeMux()
	mux.Handle("POST /model/{model}/{op}", b)
	srv := start(mux)
	t.Cleanup(srv.Close)
	return b, srv
}

// client returns the official client for srv, signing with the key id
// and secret given, and retrying nothing.
func client(srv *httptest.Server, keyID, secret string, opts ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       testRegion,
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(keyID, secret, ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   srv.Client(),
	}, opts...)
}
