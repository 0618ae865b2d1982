package geminiapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHostileBodiesOverHTTP posts bodies no SDK would send: each gets
// Google's error answer, 400 INVALID_ARGUMENT naming the field, and the
// engine is never asked.
func TestHostileBodiesOverHTTP(t *testing.T) {
	e := &engine{}
	srv := server(t, e)
	tests := map[string]string{
		`{"contents":[{"parts":[{"text":"a"}]}],"contents":[{"parts":[{"text":"b"}]}]}`:      `Duplicate name "contents"`,
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"maxOutputTokens":[1]}}`: "'generation_config.max_output_tokens'",
		`{"contents":[{"parts":[{"text":"a","te\u0078t":"b"}]}]}`:                            `Duplicate name "text" at 'contents[0].parts[0]'`,
		`{"contents":[]}`: "contents is not specified",
		`{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":` + strings.Repeat(`{"items":`, 100) + `{}` + strings.Repeat(`}`, 100) + `}]}]}`: "tools[0].function_declarations[0].parameters",
		`{"contents":[{"parts":[{"text":"` + strings.Repeat("é", 1<<18) + `","bogus":1}]}]}`:                                                                                                `Unknown name "bogus" at 'contents[0].parts[0]'`,
	}
	for body, want := range tests {
		for _, method := range []string{"generateContent", "streamGenerateContent?alt=sse", "streamGenerateContent"} {
			resp, err := http.Post(srv.URL+"/v1beta/models/gemini-x:"+method, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Error struct {
					Code            int
					Message, Status string
				}
			}
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 400 || got.Error.Code != 400 || got.Error.Status != "INVALID_ARGUMENT" ||
				!strings.Contains(got.Error.Message, want) {
				t.Errorf("%s %.60s: %d %+v %v, want a message with %q", method, body, resp.StatusCode, got, err, want)
			}
		}
	}
	if e.lastBody() != nil {
		t.Errorf("a refused request reached the engine: %v", e.lastBody())
	}
}

// TestStreamIsIncremental: each response is readable as soon as its
// chunk has arrived, in both forms, before the upstream says more.
func TestStreamIsIncremental(t *testing.T) {
	for _, sse := range []bool{true, false} {
		pr, pw := io.Pipe()
		s := NewStream(pr, "gem", sse)
		go io.WriteString(pw, chunkEvent(`{"content":"first"}`, ""))
		buf := make([]byte, 4096)
		n, err := s.Read(buf)
		if err != nil || !strings.Contains(string(buf[:n]), `"text":"first"`) {
			t.Fatalf("sse %v: first read %q, %v", sse, buf[:n], err)
		}
		go func() {
			io.WriteString(pw, chunkEvent(`{"content":"second"}`, "stop"))
			pw.Close()
		}()
		rest, err := io.ReadAll(s)
		if err != nil || !strings.Contains(string(rest), `"text":"second"`) || !strings.Contains(string(rest), `"finishReason":"STOP"`) {
			t.Errorf("sse %v: rest %q, %v", sse, rest, err)
		}
	}
}
