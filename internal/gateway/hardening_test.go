package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A body over server.max_body_bytes gets a 413 in OpenAI's error shape,
// and never reaches an upstream.
func TestOversizedBodyIs413(t *testing.T) {
	p := newUpstream(t, chatOK("primary"))
	_, gw := gateway(t, nil, "server: {max_body_bytes: 1000}\n"+twoTargets, p, newUpstream(t, chatOK("s")))
	body := `{"model":"smart","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Code != "request_too_large" ||
		!strings.Contains(e.Error.Message, "1000 bytes") || p.calls() != 0 {
		t.Fatalf("%d %+v, upstream called %d times", resp.StatusCode, e, p.calls())
	}
}

// A client that sends its headers and then trickles the body is cut off
// after server.body_timeout with a 408; the time limit covers the body
// only, so a slow answer after it is not cut.
func TestSlowBodyIs408ButSlowAnswerIsNot(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		// Longer than body_timeout. The timeout is a socket read deadline,
		// which only real time reaches: no clock can stand in for it.
		time.Sleep(300 * time.Millisecond)
		chatOK("primary")(w, r, n)
	})
	_, gw := gateway(t, nil, "server: {body_timeout: 100ms}\n"+twoTargets, p, newUpstream(t, chatOK("s")))

	conn, err := net.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"code":"request_timeout"`) {
		t.Fatalf("slow body: %d %s", resp.StatusCode, b)
	}

	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from primary" {
		t.Fatalf("a slow answer: %q %v", text(got), err)
	}
}
