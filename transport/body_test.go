package transport

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestScanRequest(t *testing.T) {
	for _, tc := range []struct {
		body      string
		model     string
		stream    bool
		maxTokens int
	}{
		{`{"model":"gpt-4.1","messages":[]}`, "gpt-4.1", false, 0},
		{` { "messages" : [{"role":"user","content":"say \"model\": {x}"}], "model" : "m\"q", "stream":true, "max_tokens": 64 }`, `m\"q`, true, 64},
		{`{"metadata":{"model":"inner"},"model":"outer","max_completion_tokens":9}`, "outer", false, 9},
		{`{"stream":false,"model":null}`, "", false, 0},
		{`[{"model":"x"}]`, "", false, 0},
		{`{"model":"trunc`, "", false, 0},
		{``, "", false, 0},
	} {
		r := request{body: []byte(tc.body)}
		r.scan()
		if string(r.model) != tc.model || r.stream != tc.stream || r.maxTokens != tc.maxTokens {
			t.Errorf("scan(%s) = model %q stream %v max %d; want %q %v %d", tc.body, r.model, r.stream, r.maxTokens, tc.model, tc.stream, tc.maxTokens)
		}
	}
}

func TestWithModelKeepsTheRest(t *testing.T) {
	r := request{body: []byte(`{"messages":[{"role":"user","content":"hi"}], "model": "gpt-4.1" ,"stream":true}`)}
	r.scan()
	out := r.withModel(`dep"loy`)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("rewritten body is not JSON: %s", out)
	}
	if m["model"] != `dep"loy` || m["stream"] != true || len(m["messages"].([]any)) != 1 {
		t.Fatalf("rewritten body %s", out)
	}
	if got := r.withModel("gpt-4.1"); &got[0] != &r.body[0] {
		t.Fatal("same model should reuse the body")
	}
}

func FuzzScanRequest(f *testing.F) {
	f.Add(`{"model":"gpt-4.1","stream":true,"max_tokens":5}`)
	f.Add(`{"a":[{"b":"}"}],"model":"\\"x"}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := request{body: []byte(body)}
		r.scan()
		if r.model != nil {
			out := r.withModel("m")
			if len(out) > len(body)+16 {
				t.Fatalf("rewrite grew the body from %d to %d", len(body), len(out))
			}
		}
	})
}

// The terminal event is found even when a read splits it.
func TestStreamEndMarkAcrossReads(t *testing.T) {
	stream := "data: {\"x\":1}\n\ndata: [DONE]\n\n"
	{
		for _, chunk := range []int{1, 2, 3, 5, 7, 11, 64} {
			b := &body{rc: io.NopCloser(strings.NewReader(stream)), sse: true}
			buf := make([]byte, chunk)
			for i := 0; i < len(stream); {
				n, _ := b.Read(buf[:min(chunk, len(stream)-i)])
				if n == 0 {
					break
				}
				i += n
				if i < len(stream)-len("[DONE]\n\n")+1 && b.sawEnd {
					t.Fatalf("chunk %d: end seen at byte %d, before the mark", chunk, i)
				}
			}
			if !b.sawEnd {
				t.Fatalf("chunk %d: [DONE] not seen", chunk)
			}
		}
	}
}
