package bedrock

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// Upstreams are unreliable: every way an answer can go wrong ends as an
// error, never as a complete answer.

func nativeStreamCall() *router.Call {
	return &router.Call{Path: "/messages", Model: claudeModel, Stream: true, Native: []byte(`{"max_tokens":5,"messages":[]}`)}
}

func converseStreamCall() *router.Call {
	return chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, true)
}

func TestHangBeforeHeadersEndsWithTheContext(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		close(arrived)
		<-release
	})
	defer close(release)
	u := newUpstream(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		resp, err := u.Send(ctx, converseStreamCall())
		if resp != nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Send = %v; want context.Canceled", err)
	}
}

func TestStallMidStreamEndsWithTheContext(t *testing.T) {
	for name, call := range map[string]func() *router.Call{"converse": converseStreamCall, "claude": nativeStreamCall} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			var first []byte
			if name == "claude" {
				first = encode(t, chunkFrame(`{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}}`))
			} else {
				first = encode(t, eventFrame("messageStart", `{"role":"assistant"}`), eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`))
			}
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
				w.Write(first)
				w.(http.Flusher).Flush()
				<-release
			})
			defer close(release)
			u := newUpstream(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			resp, err := u.Send(ctx, call())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			buf := make([]byte, 64<<10)
			if n, err := resp.Body.Read(buf); n == 0 || err != nil {
				t.Fatalf("first read: %d, %v", n, err)
			}
			cancel()
			_, err = io.ReadAll(resp.Body)
			if err == nil || errors.Is(err, io.EOF) {
				t.Errorf("after the stall: %v; want a read error", err)
			}
		})
	}
}

// brokenStream answers 200 with stream bytes, then closes the connection.
func brokenStream(stream []byte) func(http.ResponseWriter, *http.Request, []byte) {
	return streamAnswer(stream)
}

func TestCorruptStreamsAreUnexpectedEOF(t *testing.T) {
	good := converseStreamFrames(t)
	claude := claudeStream(t)
	badCRC := bytes.Clone(good)
	badCRC[30] ^= 0xff // inside the first frame's headers
	badLen := bytes.Clone(good)
	binary.BigEndian.PutUint32(badLen, 0x7fffffff) // a 2 GiB frame
	shortLen := bytes.Clone(good)
	binary.BigEndian.PutUint32(shortLen, 20) // lengths that disagree
	for name, tc := range map[string]struct {
		body []byte
		call func() *router.Call
	}{
		"converse cut mid-frame":      {good[:len(good)-7], converseStreamCall},
		"converse cut in the prelude": {good[:2], converseStreamCall},
		"converse bad CRC":            {badCRC, converseStreamCall},
		"converse huge frame length":  {badLen, converseStreamCall},
		"converse short frame length": {shortLen, converseStreamCall},
		"converse garbage":            {[]byte("<html>502 Bad Gateway</html>\n"), converseStreamCall},
		"claude cut mid-frame":        {claude[:len(claude)-3], nativeStreamCall},
		"claude bad CRC":              {append(bytes.Clone(claude[:len(claude)-1]), claude[len(claude)-1]^1), nativeStreamCall},
		"claude garbage":              {[]byte("data: {}\n\n"), nativeStreamCall},
		"claude not an event":         {encode(t, chunkFrame(`{"type":"message_start\n"}`)), nativeStreamCall},
		"claude chunk not base64":     {encode(t, eventFrame("chunk", `{"bytes":"!!"}`)), nativeStreamCall},
		"unknown message type":        {encode(t, frame{headers: map[string]string{":message-type": "surprise"}}), nativeStreamCall},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, brokenStream(tc.body))
			u := newUpstream(t, f)
			resp := send(t, u, tc.call())
			got, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error %v; want io.ErrUnexpectedEOF", err)
			}
			if bytes.Contains(got, []byte("[DONE]")) || bytes.Contains(got, []byte("message_stop")) {
				t.Errorf("a broken stream reads as complete: %s", got)
			}
		})
	}
}

func TestConverseStreamEndingBeforeMetadataIsCut(t *testing.T) {
	// It ends cleanly between frames, after messageStop, before metadata.
	f := newFake(t, streamAnswer(encode(t, eventFrame("messageStart", `{"role":"assistant"}`), eventFrame("messageStop", `{"stopReason":"end_turn"}`))))
	u := newUpstream(t, f)
	got, err := io.ReadAll(send(t, u, converseStreamCall()).Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || bytes.Contains(got, []byte("[DONE]")) {
		t.Errorf("got %s, %v; want no [DONE] and io.ErrUnexpectedEOF", got, err)
	}
}

func TestResetMidStreamIsAReadError(t *testing.T) {
	first := encode(t, eventFrame("messageStart", `{"role":"assistant"}`))
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\nTransfer-Encoding: chunked\r\n\r\n")
		buf.Flush()
		io.WriteString(conn, strconv.FormatInt(int64(len(first)), 16)+"\r\n")
		conn.Write(first)
		io.WriteString(conn, "\r\n")
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with a reset
		}
		conn.Close()
	})
	u := newUpstream(t, f)
	_, err := io.ReadAll(send(t, u, converseStreamCall()).Body)
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("read error %v; want an error", err)
	}
}

func TestUnknownStreamEventsAreSkipped(t *testing.T) {
	f := newFake(t, streamAnswer(encode(t,
		eventFrame("messageStart", `{"role":"assistant"}`),
		eventFrame("somethingNew", `{"x":1}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"ok"}}`),
		eventFrame("messageStop", `{"stopReason":"end_turn"}`),
		eventFrame("metadata", `{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`))))
	u := newUpstream(t, f)
	got := readBody(t, send(t, u, converseStreamCall()))
	if !strings.Contains(got, `"content":"ok"`) || !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Errorf("stream = %s", got)
	}
}

func TestConverseStreamExceptionIsAnErrorChunk(t *testing.T) {
	f := newFake(t, streamAnswer(encode(t,
		eventFrame("messageStart", `{"role":"assistant"}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"par"}}`),
		exceptionFrame("throttlingException", "Too many tokens"))))
	u := newUpstream(t, f)
	got := readBody(t, send(t, u, converseStreamCall()))
	if !strings.Contains(got, `data: {"error":{"message":"bedrock: throttlingException: Too many tokens","type":"rate_limit_error"`) ||
		strings.Contains(got, "[DONE]") {
		t.Errorf("stream = %s", got)
	}
}

func TestHugeAnswerIsBounded(t *testing.T) {
	huge := `{"output":{"message":{"role":"assistant","content":[{"text":"` + strings.Repeat("a", MaxResponseSize) + `"}]}},"stopReason":"end_turn"}`
	f := newFake(t, jsonAnswer(200, huge))
	u := newUpstream(t, f)
	resp := send(t, u, chatCall(novaCall(), false))
	body := readBody(t, resp)
	if resp.StatusCode != 502 || !strings.Contains(body, "over") || len(body) > 4096 {
		t.Errorf("status %d, %d bytes; want a short 502", resp.StatusCode, len(body))
	}
}
