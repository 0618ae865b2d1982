package gateway

import (
	"bufio"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"weak"
)

// A committed stream that will not be continued holds its request no
// longer: after its first content, with the stream still open, the body
// the gateway read is garbage. With continue_on_failure it is kept, for
// the continuation (which is also what shows the test can fail).
func TestCommittedStreamLetsGoOfItsRequest(t *testing.T) {
	for _, continues := range []bool{false, true} {
		name := "plain"
		extra := ""
		if continues {
			name, extra = "continue_on_failure", "    continue_on_failure: true\n"
		}
		t.Run(name, func(t *testing.T) {
			stall := make(chan struct{})
			defer close(stall)
			up := newUpstream(t, streamOf([]string{"Hello", "world"}, stall))
			second := newUpstream(t, streamOf([]string{"again"}, nil))
			s, hs := gateway(t, nil, silentLadder("{ttfb: 10s, idle: 10s}", extra), up, second)
			bodies := make(chan weak.Pointer[byte], 1)
			s.testHookBody = func(b []byte) { bodies <- weak.Make(&b[0]) }
			history := strings.Repeat("earlier turns of a long conversation ", 3000)
			req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(
				`{"model":"smart","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"`+history+`"}]}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("the stream ended before its first word: %v", err)
				}
				if strings.Contains(line, "Hello") {
					break
				}
			}
			body := <-bodies
			held := true
			for range 20 { // a finalizer-free object is freed by the first GC that finds it unreachable
				runtime.GC()
				if held = body.Value() != nil; !held {
					break
				}
			}
			if held != continues {
				t.Fatalf("request body held during the stream: %v, want %v", held, continues)
			}
		})
	}
}
