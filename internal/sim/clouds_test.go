package sim

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// cloudCalls are a streamed call on each translated path, with the
// headers the open sim (no keys configured) accepts.
func cloudCalls(t *testing.T, ts string) map[string]*http.Request {
	t.Helper()
	mk := func(path, body string, h ...string) *http.Request {
		req, err := http.NewRequest(http.MethodPost, ts+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		return req
	}
	sigv4 := []string{"Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=00",
		"X-Amz-Date", "20260101T000000Z"}
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	return map[string]*http.Request{
		"messages":        mk("/v1/messages", `{"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`),
		"converse-stream": mk("/model/m/converse-stream", `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`, sigv4...),
		"invoke-stream":   mk("/model/"+claudeID+"/invoke-with-response-stream", claudeBody, sigv4...),
		"gemini-stream":   mk("/v1beta/models/g:streamGenerateContent?alt=sse", gemini, "X-Goog-Api-Key", "k"),
		"azure-stream": mk("/openai/deployments/d/chat/completions?api-version=2024-10-21",
			`{"messages":[{"role":"user","content":"hi"}],"stream":true}`, "Api-Key", "k"),
	}
}

// noKeepAlive is a client whose connections serve one request each, so
// that a reset or a cut affects only its own call.
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// A reset before any byte cuts the client's connection on every
// translated path: the client sees a transport error, never an empty 200.
func TestCloudPathsReset(t *testing.T) {
	s, ts := start(t, Config{Faults: []Fault{{Kind: Reset}}})
	for name, req := range cloudCalls(t, ts.URL) {
		resp, err := noKeepAlive.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Errorf("%s: %d %q through a reset, want a transport error", name, resp.StatusCode, b)
		}
	}
	if n := s.Stats().Outcomes[OutcomeReset]; n != 5 {
		t.Errorf("%d resets counted, want 5", n)
	}
}

// Hangs and stalls that Close releases cut the translated answers too,
// and nothing panics outside a handler (the test binary would die).
func TestCloudPathsCloseReleasesHangsAndStalls(t *testing.T) {
	for _, f := range []Fault{{Kind: Hang}, {Kind: Stall, AfterChunks: 1}} {
		s, ts := start(t, Config{Faults: []Fault{f}})
		calls := cloudCalls(t, ts.URL)
		errs := make(chan error, len(calls))
		for _, req := range calls {
			go func() {
				resp, err := noKeepAlive.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errs <- err
			}()
		}
		waitFor(t, "every call", func() bool { return s.Stats().Calls == int64(len(calls)) })
		s.Close()
		for range calls {
			if err := <-errs; err == nil {
				t.Errorf("%s: a call released by Close ended cleanly, want it cut", f.Kind)
			}
		}
	}
}

// A stall mid-stream holds each translated stream open after its first
// content until the client gives up; Stats count the stalls.
func TestCloudPathsStallUntilClientLeaves(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 12, ChunkTokens: 3}, Faults: []Fault{{Kind: Stall, AfterChunks: 1}}})
	for name, req := range cloudCalls(t, ts.URL) {
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := noKeepAlive.Do(req.WithContext(ctx))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v", name, err)
		}
		buf := make([]byte, 1)
		if _, err := resp.Body.Read(buf); err != nil {
			t.Errorf("%s: nothing before the stall: %v", name, err)
		}
		cancel()
		resp.Body.Close()
	}
	waitFor(t, "the stalls counted", func() bool { return s.Stats().Outcomes[OutcomeStall] == 5 })
}

// Hostile bodies on each cloud path: garbage, over 16 MiB, not an
// object. Each is refused in its API's shape with a 4xx, and none reaches
// the engine's answers.
func TestCloudPathsHostileBodies(t *testing.T) {
	s, ts := start(t, Config{})
	huge := bytes.Repeat([]byte("a"), maxBody+1)
	for name, req := range cloudCalls(t, ts.URL) {
		for _, body := range [][]byte{[]byte("{garbage"), []byte(`[1,2]`), []byte(`"x"`), huge} {
			r := req.Clone(context.Background())
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			resp, err := noKeepAlive.Do(r)
			if err != nil {
				t.Errorf("%s %.10q: %v", name, body, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("%s %.10q: %d %s, want a 4xx", name, body, resp.StatusCode, b)
			}
		}
	}
	if n := s.Stats().Outcomes[OutcomeOK]; n != 0 {
		t.Errorf("%d hostile bodies answered", n)
	}
}

// Many calls at once on every translated path, with a flapping storm and
// stream errors: under -race, the relay shares nothing it should not,
// and every call is counted once.
func TestCloudPathsConcurrent(t *testing.T) {
	s, ts := start(t, Config{Seed: 7, Faults: []Fault{
		{Kind: ErrorStorm, Fraction: 0.3},
		{Kind: StreamError, AfterChunks: 1, Fraction: 0.3},
	}})
	const rounds = 8
	done := make(chan struct{})
	n := 0
	for range rounds {
		for _, req := range cloudCalls(t, ts.URL) {
			n++
			go func() {
				defer func() { done <- struct{}{} }()
				resp, err := noKeepAlive.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.ReadAll(resp.Body)
				resp.Body.Close()
			}()
		}
	}
	for range n {
		<-done
	}
	waitFor(t, "every call finished", func() bool { return s.Stats().Finished() == int64(n) })
	st := s.Stats()
	if st.Calls != int64(n) || st.Outcomes[OutcomeError] == 0 || st.Outcomes[OutcomeStreamError] == 0 || st.Outcomes[OutcomeOK] == 0 {
		t.Errorf("calls %d outcomes %v; want %d calls with errors, stream errors and answers", st.Calls, st.Outcomes, n)
	}
}

// A garbage fault leaves half an event in each path's own format, then
// cuts the connection: the bytes before it are whole events, the last
// ones are not, and the client never sees a clean end.
func TestCloudPathsGarbage(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 12, ChunkTokens: 3}, Faults: []Fault{{Kind: Garbage, AfterChunks: 2}}})
	tails := map[string]string{
		"messages":        `"text":"tru`,
		"gemini-stream":   `"text":"tru`,
		"azure-stream":    `"content":"tru`,
		"converse-stream": string(garbageFrame),
		"invoke-stream":   string(garbageFrame),
	}
	for name, req := range cloudCalls(t, ts.URL) {
		resp, err := noKeepAlive.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("%s: the body ended cleanly after garbage", name)
		}
		if tail := tails[name]; tail != "" && !strings.HasSuffix(string(b), tail) {
			t.Errorf("%s: body ends %q, want the garbage %q", name, b[max(0, len(b)-40):], tail)
		}
	}
	if n := s.Stats().Outcomes[OutcomeGarbage]; n != 5 {
		t.Errorf("%d garbage outcomes, want 5", n)
	}
}
