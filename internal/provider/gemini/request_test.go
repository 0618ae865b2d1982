package gemini

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTranslateChatGolden(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"text and system",
			`{"model":"gemini-2.5-flash","messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Use metric."}]},{"role":"user","content":"Hi"}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"systemInstruction":{"role":"user","parts":[{"text":"Be brief."},{"text":"Use metric."}]}}`},
		{"generation config",
			`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":50,"max_completion_tokens":70,"temperature":1.5,"top_p":0.9,"stop":["END",""],"n":2,"seed":7,"presence_penalty":0.5,"frequency_penalty":-0.5}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"stopSequences":["END"],"candidateCount":2,"maxOutputTokens":70,"temperature":1.5,"topP":0.9,"seed":7,"presencePenalty":0.5,"frequencyPenalty":-0.5}}`},
		{"stop string and max_tokens",
			`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":"\n\n","max_tokens":9,"n":1,"logprobs":false}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"stopSequences":["\n\n"],"maxOutputTokens":9}}`},
		{"media",
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/PNG;base64,iVBORw0KGgo="}},{"type":"image_url","image_url":{"url":"https://example.com/a/cat.JPG?x=1"}},{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"a.pdf"}},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"What is this?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},{"fileData":{"mimeType":"image/jpeg","fileUri":"https://example.com/a/cat.JPG?x=1"}},{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0="}},{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}]}]}`},
		{"tools round trip",
			`{"model":"m","messages":[{"role":"user","content":"Weather in Paris and Rome?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\": \"Paris\"}"},"extra_content":{"google":{"thought_signature":"c2ln"}}},{"id":"c2","type":"function","function":{"name":"weather","arguments":""}}]},{"role":"tool","tool_call_id":"c1","content":"18C"},{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"21"},{"type":"text","text":"C"}]},{"role":"user","content":"Thanks"}],"tools":[{"type":"function","function":{"name":"weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},{"type":"function","function":{"name":"noargs"}}],"tool_choice":"required"}`,
			`{"contents":[{"role":"user","parts":[{"text":"Weather in Paris and Rome?"}]},{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"},{"functionCall":{"name":"weather","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"weather","response":{"output":"18C"}}},{"functionResponse":{"name":"weather","response":{"output":"21C"}}},{"text":"Thanks"}]}],"tools":[{"functionDeclarations":[{"name":"weather","description":"Weather now","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},{"name":"noargs"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`},
		{"named tool choice",
			`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":true}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object"}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}}`},
		{"allowed tools and none",
			`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"g"}}]}}}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`},
		{"json schema",
			`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":{"type":"object","properties":{"a":{"type":"integer"}}}}}}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"a":{"type":"integer"}}}}}`},
		{"json object",
			`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json"}}`},
		{"thinking budget",
			`{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"x"}],"reasoning_effort":"medium"}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}`},
		{"thinking off",
			`{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`},
		{"thinking level",
			`{"model":"gemini-3-pro-preview","messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"}`,
			`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}}}`},
		{"assistant text merges, refusal kept, ignored fields",
			`{"model":"m","user":"u1","store":true,"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"b"}]},{"role":"assistant","content":"","refusal":"No."},{"role":"assistant","content":[{"type":"text","text":"c"}]}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"a"},{"text":"b"}]},{"role":"model","parts":[{"text":"No."},{"text":"c"}]}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := TranslateChat([]byte(c.in), false)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, tr.Body, c.want)
			var top map[string]json.RawMessage
			if json.Unmarshal(tr.Body, &top) == nil && top["model"] != nil {
				t.Errorf("the body names the model: %s", tr.Body)
			}
		})
	}
}

func TestTranslateChatStreamFlags(t *testing.T) {
	tr, err := TranslateChat([]byte(`{"model":"gemini-2.5-pro","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Stream || !tr.IncludeUsage || tr.Model != "gemini-2.5-pro" {
		t.Errorf("got %+v, want Stream, IncludeUsage and the model", tr)
	}
	tr, err = TranslateChat([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}]}`), true)
	if err != nil || !tr.Stream || tr.IncludeUsage {
		t.Errorf("forced stream: got %+v, %v", tr, err)
	}
}

// Refusals name the field by its JSON path, with a code, and are
// router.Unservable so the walk passes on.
func TestTranslateChatRefusals(t *testing.T) {
	const user = `"messages":[{"role":"user","content":"x"}]`
	cases := []struct{ in, param, code string }{
		{`[1]`, "", CodeInvalidValue},
		{`{"model":"m"}`, "messages", CodeInvalidValue},
		{`{"model":"m","messages":[{"role":"system","content":"only"}]}`, "messages", CodeUnsupportedValue},
		{`{"model":"m",` + user + `,"logprobs":true}`, "logprobs", CodeUnsupportedParameter},
		{`{"model":"m",` + user + `,"top_logprobs":2}`, "top_logprobs", CodeUnsupportedParameter},
		{`{"model":"m",` + user + `,"n":9}`, "n", CodeUnsupportedValue},
		{`{"model":"m",` + user + `,"n":0}`, "n", CodeInvalidValue},
		{`{"model":"m",` + user + `,"temperature":3}`, "temperature", CodeInvalidValue},
		{`{"model":"m",` + user + `,"seed":99999999999}`, "seed", CodeUnsupportedValue},
		{`{"model":"m",` + user + `,"logit_bias":{"1":2}}`, "logit_bias", CodeUnsupportedParameter},
		{`{"model":"m",` + user + `,"audio":{}}`, "audio", CodeUnsupportedParameter},
		{`{"model":"m",` + user + `,"frobnicate":1}`, "frobnicate", CodeUnsupportedParameter},
		{`{"model":"m",` + user + `,"max_tokens":0}`, "max_tokens", CodeInvalidValue},
		{`{"model":"m",` + user + `,"max_tokens":"9"}`, "max_tokens", CodeInvalidValue},
		{`{"model":"m",` + user + `,"reasoning_effort":"ultra"}`, "reasoning_effort", CodeUnsupportedValue},
		{`{"model":"gemini-2.5-pro",` + user + `,"reasoning_effort":"none"}`, "reasoning_effort", CodeUnsupportedValue},
		{`{"model":"gemini-3-pro-preview",` + user + `,"reasoning_effort":"medium"}`, "reasoning_effort", CodeUnsupportedValue},
		{`{"model":"m",` + user + `,"stop":["a","b","c","d","e","f"]}`, "stop", CodeUnsupportedValue},
		{`{"model":"m",` + user + `,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`, "response_format.json_schema.schema", CodeInvalidValue},
		{`{"model":"m",` + user + `,"tool_choice":"required"}`, "tool_choice", CodeInvalidValue},
		{`{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`, "parallel_tool_calls", CodeUnsupportedParameter},
		{`{"model":"m",` + user + `,"tools":[{"type":"custom","custom":{"name":"f"}}]}`, "tools[0].type", CodeUnsupportedValue},
		{`{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}}`, "tool_choice.allowed_tools.mode", CodeUnsupportedValue},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/image"}}]}]}`, "messages[0].content[0].image_url.url", CodeUnsupportedValue},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://example.com/a.png"}}]}]}`, "messages[0].content[0].image_url.url", CodeInvalidValue},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}]}`, "messages[0].content[0].image_url.url", CodeUnsupportedValue},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f1"}}]}]}`, "messages[0].content[0].file.file_id", CodeUnsupportedValue},
		{`{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`, "messages[0].content[0].type", CodeUnsupportedValue},
		{`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"nope","content":"r"}]}`, "messages[1].tool_call_id", CodeInvalidValue},
		{`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls[0].function.arguments", CodeInvalidValue},
		{`{"model":"m","messages":[{"role":"wizard","content":"x"}]}`, "messages[0].role", CodeInvalidValue},
		{`{"model":"m","messages":[{"role":"function","content":"x"}]}`, "messages[0].role", CodeUnsupportedParameter},
	}
	for _, c := range cases {
		_, err := TranslateChat([]byte(c.in), false)
		var u *router.Unservable
		if !errors.As(err, &u) {
			t.Errorf("%s: got %v, want a *router.Unservable", c.in, err)
			continue
		}
		if u.Param != c.param || u.Code != c.code {
			t.Errorf("%s: got param %q code %q (%s), want %q %q", c.in, u.Param, u.Code, u.Message, c.param, c.code)
		}
	}
}

// Keys are read as encoding/json reads them: escapes decoded, the last of
// duplicates counts, so what is translated is what a JSON reader upstream
// would see.
func TestTranslateChatHostileKeys(t *testing.T) {
	tr, err := TranslateChat([]byte(`{"model":"a","\u006dodel":"b","\u006dessages":[{"role":"user","content":"first"}],"messages":[{"role":"user","content":"second"}],"max_tokens":1,"max_tokens":5}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Model != "b" {
		t.Errorf("model: got %q, want the last of the duplicates, b", tr.Model)
	}
	sameJSON(t, tr.Body, `{"contents":[{"role":"user","parts":[{"text":"second"}]}],"generationConfig":{"maxOutputTokens":5}}`)
	// A key that differs in case is another field, and refused.
	if _, err := TranslateChat([]byte(`{"model":"m","Messages":[],"messages":[{"role":"user","content":"x"}]}`), false); err == nil {
		t.Error(`"Messages" beside "messages" was accepted`)
	}
}

// A huge body is translated in one pass, and its content arrives whole.
func TestTranslateChatHugeBody(t *testing.T) {
	big := strings.Repeat("a", 8<<20)
	tr, err := TranslateChat([]byte(`{"model":"m","messages":[{"role":"user","content":"`+big+`"}]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Contents []struct{ Parts []struct{ Text string } }
	}
	if err := json.Unmarshal(tr.Body, &req); err != nil || len(req.Contents[0].Parts[0].Text) != len(big) {
		t.Fatalf("the huge text did not arrive whole (err %v)", err)
	}
}

// A value of the wrong JSON type is named in JSON's words.
func TestTranslateChatTypeErrorsInJSONWords(t *testing.T) {
	_, err := TranslateChat([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":"9"}`), false)
	if err == nil || !strings.Contains(err.Error(), `"max_tokens": want an integer, got a string`) {
		t.Errorf("got %v", err)
	}
	_, err = TranslateChat([]byte(`{"model":"m","messages":{"role":"user"}}`), false)
	if err == nil || !strings.Contains(err.Error(), `"messages": want an array, got an object`) {
		t.Errorf("got %v", err)
	}
}

// Gemini 3 refuses unsigned function calls in the conversation: those that
// came without a signature (from another model, or a client that dropped
// it) get the documented stand-in; signed ones keep theirs; other models
// are sent none.
func TestTranslateChatSignsCallsForGemini3(t *testing.T) {
	const conv = `"messages":[{"role":"user","content":"x"},
		{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"b","content":"2"},
		{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"real"}}}]},
		{"role":"tool","tool_call_id":"c","content":"3"}]`
	signatures := func(model string) []string {
		tr, err := TranslateChat([]byte(`{"model":"`+model+`",`+conv+`}`), false)
		if err != nil {
			t.Fatal(err)
		}
		var req generateRequest
		json.Unmarshal(tr.Body, &req)
		var sigs []string
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionCall != nil {
					sigs = append(sigs, p.ThoughtSignature)
				}
			}
		}
		return sigs
	}
	if got, want := signatures("gemini-3-pro-preview"), []string{SkipSignature, "", "real"}; !reflect.DeepEqual(got, want) {
		t.Errorf("gemini 3: %q, want %q", got, want)
	}
	if got, want := signatures("gemini-2.5-flash"), []string{"", "", "real"}; !reflect.DeepEqual(got, want) {
		t.Errorf("gemini 2.5: %q, want %q", got, want)
	}
}
