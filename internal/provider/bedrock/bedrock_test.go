package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/router"
)

const converseOK = `{"output":{"message":{"role":"assistant","content":[{"text":"Hello"},{"text":" there"}]}},
 "stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":3,"totalTokens":18,"cacheReadInputTokens":5},"metrics":{"latencyMs":100}}`

func TestSignedConverseCallIsVerifiedAndTranslated(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	u := newUpstream(t, f)
	resp := send(t, u, chatCall(`{"model":"meta.llama3-70b-instruct-v1:0","messages":[{"role":"user","content":"Hi"}],"max_tokens":50}`, false))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, readBody(t, resp))
	}
	var got chatCompletion
	if err := json.Unmarshal([]byte(readBody(t, resp)), &got); err != nil {
		t.Fatal(err)
	}
	if c := got.Choices[0]; *c.Message.Content != "Hello there" || c.FinishReason != "stop" {
		t.Errorf("choice = %+v; want content %q, finish stop", c, "Hello there")
	}
	if u := got.Usage; u.PromptTokens != 15 || u.CompletionTokens != 3 || u.TotalTokens != 18 || u.PromptTokensDetails.CachedTokens != 5 {
		t.Errorf("usage = %+v; want prompt 15 (10 + 5 cached), completion 3, total 18, cached 5", u)
	}
	if got.ID != "chatcmpl-req-1" || got.Model != "meta.llama3-70b-instruct-v1:0" {
		t.Errorf("id, model = %q, %q", got.ID, got.Model)
	}
	r := f.last(t)
	if r.Path != "/model/meta.llama3-70b-instruct-v1%3A0/converse" {
		t.Errorf("path = %q; want the model id escaped as one segment", r.Path)
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+testKeyID+"/") {
		t.Errorf("Authorization = %q; want SigV4", r.Header.Get("Authorization"))
	}
}

func TestBadSignatureIsRefusedAndPassedThroughUnchanged(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	u := newUpstream(t, f, func(c *Config) { c.SecretAccessKey = "not-the-secret" })
	resp := send(t, u, chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false))
	body := readBody(t, resp)
	if resp.StatusCode != 403 || !strings.HasPrefix(resp.Header.Get("X-Amzn-Errortype"), "InvalidSignatureException") ||
		!strings.Contains(body, "signature we calculated does not match") {
		t.Fatalf("got %d %v %s; want Bedrock's 403 InvalidSignatureException unchanged", resp.StatusCode, resp.Header, body)
	}
	if strings.Contains(body, "not-the-secret") {
		t.Error("the answer carries the secret")
	}
	if v := aierr.Classify(resp.StatusCode, resp.Header, []byte(body)); v.Kind != aierr.Auth {
		t.Errorf("aierr verdict %v; want auth", v)
	}
}

func TestAPIKeyIsSentAsBearerInsteadOfSigV4(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	u := newUpstream(t, f)
	c := chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false)
	c.Key = "bedrock-api-key-1"
	if resp := send(t, u, c); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := f.last(t)
	if r.Header.Get("Authorization") != "Bearer bedrock-api-key-1" || r.Header.Get("X-Amz-Date") != "" {
		t.Errorf("headers %v; want the bearer key and no SigV4", r.Header)
	}
	c.Key = "wrong"
	if resp := send(t, u, c); resp.StatusCode != 403 {
		t.Errorf("a wrong key: status %d; want 403", resp.StatusCode)
	}
}

func TestNewNamesTheBadField(t *testing.T) {
	for _, tc := range []struct {
		c     Config
		field string
	}{
		{Config{}, "Region"},
		{Config{Region: "us-east-1.evil.com/"}, "Region"},
		{Config{Region: "us-east-1", BaseURL: "ftp://x"}, "BaseURL"},
		{Config{Region: "us-east-1", BaseURL: "https://user:s3cr3t-value@host/"}, "BaseURL"},
		{Config{Region: "us-east-1", AccessKeyID: "AKID"}, "SecretAccessKey"},
		{Config{Region: "us-east-1", SecretAccessKey: "s3cr3t-value"}, "AccessKeyID"},
		{Config{Region: "us-east-1", AccessKeyID: "AKID", SecretAccessKey: "s3cr3t-value", Profile: "p"}, "Profile"},
	} {
		_, err := New(context.Background(), tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New(%+v) = %v; want an error naming %s", tc.c, err, tc.field)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t-value") {
			t.Errorf("the error %q carries the secret", err)
		}
	}
}

func TestUnservableSendsNothing(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	u := newUpstream(t, f)
	for _, tc := range []struct {
		call  *router.Call
		param string
	}{
		{&router.Call{Path: "/embeddings", Model: "amazon.titan-embed-text-v2:0", Body: []byte(`{}`)}, "model"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}]}`, false), "messages[0].content[0].image_url.url"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"high"}`, false), "reasoning_effort"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`, false), "response_format"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"user","content":"hi"}],"n":2}`, false), "n"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"user","content":"hi"}],"temperature":1.5}`, false), "temperature"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"user","content":"hi"}],"frobnicate":1}`, false), "frobnicate"},
		{chatCall(`{"model":"meta.llama3","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, false), "messages[0].tool_calls[0].function.arguments"},
		{chatCall(`{"model":"anthropic.claude-3-haiku-20240307-v1:0","messages":[{"role":"user","content":"hi"}],"n":3}`, false), "n"},
		{&router.Call{Path: "/chat/completions", Model: "meta.llama3", Native: []byte(`{"messages":[]}`)}, "model"},
	} {
		resp, err := u.Send(context.Background(), tc.call)
		var un *router.Unservable
		if resp != nil || !errors.As(err, &un) || un.Param != tc.param {
			t.Errorf("%s: Send = %v, %v; want a refusal of %s", tc.call.Body, resp, err, tc.param)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("the fake received %d requests; want none", n)
	}
}

func TestConverseRequestTranslation(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	u := newUpstream(t, f)
	send(t, u, chatCall(`{"model":"openai.gpt-oss-120b-1:0","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
			{"type":"file","file":{"filename":"report.v2.pdf","file_data":"data:application/pdf;base64,JVBERi0="}}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call.1","type":"function","function":{"name":"look","arguments":"{\"q\": 1}"}}]},
		{"role":"tool","tool_call_id":"call.1","content":"a cat"},
		{"role":"user","content":"thanks"}],
		"max_completion_tokens":100,"temperature":0.5,"top_p":0.9,"stop":"END","reasoning_effort":"low",
		"tools":[{"type":"function","function":{"name":"look","description":"Looks","parameters":{"type":"object"}}}],
		"tool_choice":"required","seed":3,"user":"u1"}`, false))
	var got, want any
	json.Unmarshal(f.last(t).Body, &got)
	json.Unmarshal([]byte(`{
		"messages":[
			{"role":"user","content":[{"text":"What is this?"},{"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}},
				{"document":{"format":"pdf","name":"report-v2-pdf","source":{"bytes":"JVBERi0="}}}]},
			{"role":"assistant","content":[{"toolUse":{"toolUseId":"call_1","name":"look","input":{"q":1}}}]},
			{"role":"user","content":[{"toolResult":{"toolUseId":"call_1","content":[{"text":"a cat"}]}},{"text":"thanks"}]}],
		"system":[{"text":"Be brief."}],
		"inferenceConfig":{"maxTokens":100,"temperature":0.5,"topP":0.9,"stopSequences":["END"]},
		"toolConfig":{"tools":[{"toolSpec":{"name":"look","description":"Looks","inputSchema":{"json":{"type":"object"}}}}],"toolChoice":{"any":{}}},
		"additionalModelRequestFields":{"reasoning_effort":"low"}}`), &want)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("Converse body:\n%s", g)
	}
}

func TestConverseAnswerWithToolsAndReasoning(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{"output":{"message":{"role":"assistant","content":[
		{"reasoningContent":{"reasoningText":{"text":"thinking…","signature":"sig"}}},
		{"toolUse":{"toolUseId":"tooluse_1","name":"look","input":{"q": 1}}}]}},
		"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}`))
	u := newUpstream(t, f)
	resp := send(t, u, chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false))
	var got chatCompletion
	json.Unmarshal([]byte(readBody(t, resp)), &got)
	m := got.Choices[0].Message
	if m.Content != nil || m.ReasoningContent != "thinking…" || len(m.ToolCalls) != 1 ||
		m.ToolCalls[0].ID != "tooluse_1" || m.ToolCalls[0].Function.Arguments != `{"q":1}` || got.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("message = %+v, finish %q", m, got.Choices[0].FinishReason)
	}
	for stop, want := range map[string]string{"stop_sequence": "stop", "max_tokens": "length", "guardrail_intervened": "content_filter", "content_filtered": "content_filter"} {
		if got := finishReason(stop); got != want {
			t.Errorf("finishReason(%q) = %q; want %q", stop, got, want)
		}
	}
}

func TestErrorAnswersArePassedThroughUnchanged(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
	})
	u := newUpstream(t, f)
	for _, model := range []string{"amazon.nova-pro-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"} {
		for _, stream := range []bool{false, true} {
			resp := send(t, u, chatCall(`{"model":"`+model+`","messages":[{"role":"user","content":"Hi"}]}`, stream))
			body := readBody(t, resp)
			if resp.StatusCode != 429 || body != `{"message":"Too many requests, please wait before trying again."}` {
				t.Errorf("%s stream=%v: %d %s; want the 429 unchanged", model, stream, resp.StatusCode, body)
			}
			if v := aierr.Classify(resp.StatusCode, resp.Header, []byte(body)); v.Kind != aierr.Throttle {
				t.Errorf("verdict %v; want throttle", v)
			}
		}
	}
}

func TestBadConverseAnswerIs502(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{"output":"nope"`))
	u := newUpstream(t, f)
	resp := send(t, u, chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false))
	body := readBody(t, resp)
	if resp.StatusCode != 502 || !strings.Contains(body, CodeBadUpstreamResponse) {
		t.Errorf("got %d %s; want a 502 bad_upstream_response", resp.StatusCode, body)
	}
}

func TestSigningTimeAndCreatedComeFromTheClock(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	u := newUpstream(t, f, func(c *Config) { c.Clock = clocktest.New(at) })
	resp := send(t, u, chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false))
	var got chatCompletion
	json.Unmarshal([]byte(readBody(t, resp)), &got)
	if d := f.last(t).Header.Get("X-Amz-Date"); d != "20260304T050607Z" || got.Created != at.Unix() {
		t.Errorf("X-Amz-Date %q, created %d; want the clock's time", d, got.Created)
	}
	if !strings.Contains(f.last(t).Header.Get("Authorization"), "/20260304/us-east-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q; want the scope of the clock's day, the region and bedrock", f.last(t).Header.Get("Authorization"))
	}
}
