package responses

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// fakeMessages is an Anthropic Messages API that records the request and
// answers "Bonjour", whole or streamed.
type fakeMessages struct {
	t    *testing.T
	last []byte
}

func (f *fakeMessages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.last, _ = io.ReadAll(r.Body)
	var req struct{ Stream bool }
	json.Unmarshal(f.last, &req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"Bonjour"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":2,"output_tokens":3}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bon"}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"jour"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}`},
		{"message_stop", `{"type":"message_stop"}`},
	} {
		io.WriteString(w, "event: "+ev[0]+"\ndata: "+ev[1]+"\n\n")
	}
}

// A Responses request reaches an Anthropic target through the chat
// format, and its answer comes back, as docs/RESPONSES.md says.
func TestThroughAnthropicAdapter(t *testing.T) {
	fake := &fakeMessages{t: t}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	up, err := anthropic.New(anthropic.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.CloseIdle)
	body := `{"model":"claude-x","instructions":"Answer in French.","max_output_tokens":77,"parallel_tool_calls":false,
		"tools":[{"type":"function","name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"strict":true}],
		"tool_choice":"required","reasoning":{"effort":"low"},"safety_identifier":"user-7",
		"input":[
		 {"role":"developer","content":"Be formal."},
		 {"role":"user","content":[{"type":"input_text","text":"Hi, see"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]},
		 {"type":"function_call","call_id":"call.1","name":"lookup","arguments":"{\"q\":\"hi\"}"},
		 {"type":"function_call_output","call_id":"call.1","output":"hello"}]}`
	for _, stream := range []bool{false, true} {
		b := body
		if stream {
			b = b[:len(b)-1] + `,"stream":true}`
		}
		chatReq, req := chat(t, b)
		resp, err := up.Send(context.Background(), &router.Call{Path: "/chat/completions", Model: "claude-x", Key: "k", Body: chatReq, Stream: stream})
		if err != nil {
			t.Fatalf("the Anthropic adapter refused ToChat's output: %v\n%s", err, chatReq)
		}
		defer resp.Body.Close()
		want := `{"model":"claude-x","max_tokens":77,"system":"Answer in French.\n\nBe formal.","messages":[
			{"role":"user","content":[{"type":"text","text":"Hi, see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"lookup","input":{"q":"hi"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"hello"}]}]}],
			"tools":[{"name":"lookup","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}],
			"tool_choice":{"type":"any","disable_parallel_tool_use":true},"metadata":{"user_id":"user-7"}}`
		if stream {
			want = want[:len(want)-1] + `,"stream":true}`
		}
		if !sameJSON(t, fake.last, []byte(want)) {
			t.Errorf("stream %v: Messages request\n got %s\nwant %s", stream, fake.last, want)
		}
		var final []byte
		if !stream {
			answer, _ := io.ReadAll(resp.Body)
			if final, err = FromChat(answer, req, testID, created); err != nil {
				t.Fatal(err)
			}
		} else {
			s := NewStream(req, testID, created)
			rd := sse.NewReader(resp.Body, sse.Options{})
			for {
				ev, err := rd.Next()
				if err != nil {
					break
				}
				if sse.IsDone(ev) {
					s.Done()
					break
				}
				if _, err := s.Chunk(ev.Data); err != nil {
					t.Fatal(err)
				}
			}
			final = s.Response()
		}
		v := decode(t, final)
		if str(field(v, "output", 0, "content", 0, "text")) != "Bonjour" || str(field(v, "model")) != "claude-x" {
			t.Errorf("stream %v: response %s", stream, final)
		}
		wantStatus, wantCached := "completed", "2"
		if stream { // the stream stopped at max_tokens, and says no cache
			wantStatus, wantCached = "incomplete", "0"
		}
		if str(field(v, "status")) != wantStatus || mustJSON(field(v, "usage", "input_tokens_details", "cached_tokens")) != wantCached {
			t.Errorf("stream %v: status %v usage %s", stream, field(v, "status"), mustJSON(field(v, "usage")))
		}
	}
}

// Structured output cannot be served by an Anthropic target: the adapter
// refuses it, and the walk passes the target by.
func TestThroughAnthropicAdapterStructuredOutput(t *testing.T) {
	up, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	chatReq, _ := chat(t, `{"model":"claude-x","input":"q","text":{"format":{"type":"json_schema","name":"o","schema":{"type":"object"}}}}`)
	_, err = up.Send(context.Background(), &router.Call{Path: "/chat/completions", Model: "claude-x", Key: "k", Body: chatReq})
	var un *router.Unservable
	if !errors.As(err, &un) || un.Param != "response_format" {
		t.Errorf("Send: %v, want a router.Unservable about response_format", err)
	}
}
