package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs a gateway from yaml with ListenAndServe on a loopback port,
// as fusebox serve does, until the returned cancel; done reports its end.
func serve(t *testing.T, yaml string, drain time.Duration, ups ...*upstream) (base string, cancel func(), done <-chan error) {
	t.Helper()
	cfg, err := parse(withUpstreams(yaml, ups...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe(ctx, ln, drain) }()
	return "http://" + ln.Addr().String(), stop, errc
}

// On shutdown the gateway stops taking connections at once and lets a
// stream in flight finish.
func TestShutdownDrainsStreamsInFlight(t *testing.T) {
	release := make(chan struct{})
	p := newUpstream(t, streamOf([]string{"first ", "second"}, nil))
	p.set(func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"content":"first "}`))
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, chunk(`{"content":"second"}`))
		io.WriteString(w, "data: [DONE]\n\n")
	})
	base, cancel, done := serve(t, twoTargets, 10*time.Second, p, newUpstream(t, chatOK("s")))
	c := newClient(base)
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	got := st.Current().Choices[0].Delta.Content

	cancel() // SIGTERM
	eventually(t, "the listener to close", func() bool {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err == nil {
			conn.Close()
		}
		return err != nil
	})
	close(release)
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 {
			got += ch.Choices[0].Delta.Content
		}
	}
	if st.Err() != nil || got != "first second" {
		t.Fatalf("the stream in flight: %q %v", got, st.Err())
	}
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
}

// A stream that outlasts the drain period is cut when it ends, and
// ListenAndServe says so.
func TestShutdownGivesUpAfterTheDrain(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"content":"first"}`))
		w.(http.Flusher).Flush()
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	base, cancel, done := serve(t, twoTargets, 100*time.Millisecond, p, newUpstream(t, chatOK("s")))
	c := newClient(base)
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ListenAndServe after the drain: %v, want context.DeadlineExceeded", err)
	}
	for st.Next() {
	}
	if st.Err() == nil {
		t.Fatal("the cut stream ended without an error")
	}
}
