package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// recorder is an io.Writer that counts flushes and the writes between them.
type recorder struct {
	bytes.Buffer
	writes, flushes int
}

func (r *recorder) Write(p []byte) (int, error) { r.writes++; return r.Buffer.Write(p) }
func (r *recorder) flush() error                { r.flushes++; return nil }

func TestWriterFraming(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *Writer) error
		want  string
	}{
		{"raw", func(w *Writer) error { return w.WriteRaw([]byte("event: ping\r\ndata: {}\r\n\r\n")) },
			"event: ping\r\ndata: {}\r\n\r\n"},
		{"event", func(w *Writer) error { return w.WriteEvent("message_stop", []byte(`{"type":"message_stop"}`)) },
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"nameless", func(w *Writer) error { return w.WriteEvent("", []byte(`{}`)) }, "data: {}\n\n"},
		{"empty data", func(w *Writer) error { return w.WriteEvent("", nil) }, "data: \n\n"},
		{"multi-line data", func(w *Writer) error { return w.WriteEvent("", []byte("a\nb\r\nc\rd\n")) },
			"data: a\ndata: b\ndata: c\ndata: d\ndata: \n\n"},
		{"done", func(w *Writer) error { return w.WriteDone() }, "data: [DONE]\n\n"},
		{"comment", func(w *Writer) error { return w.WriteComment("keep-alive\nstill here") },
			": keep-alive\n: still here\n\n"},
		{"openai error", func(w *Writer) error {
			return w.WriteError(ErrorEvent{Message: `upstream "a" failed`, Type: "server_error"})
		}, `data: {"error":{"message":"upstream \"a\" failed","type":"server_error","param":null,"code":null}}` + "\n\n"},
		{"openai error code", func(w *Writer) error {
			return w.WriteError(ErrorEvent{Message: "m", Type: "server_error", Code: "stream_stalled"})
		}, `data: {"error":{"message":"m","type":"server_error","param":null,"code":"stream_stalled"}}` + "\n\n"},
		{"anthropic error", func(w *Writer) error {
			return w.WriteAnthropicError(ErrorEvent{Message: "Overloaded", Type: "overloaded_error", Code: "x"})
		}, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"},
	}
	for _, tt := range tests {
		var rec recorder
		w := NewFlushWriter(&rec, rec.flush)
		if err := tt.write(w); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rec.String() != tt.want {
			t.Errorf("%s: wrote %q, want %q", tt.name, rec.String(), tt.want)
		}
		if rec.writes != 1 || rec.flushes != 1 {
			t.Errorf("%s: %d writes, %d flushes; want one of each", tt.name, rec.writes, rec.flushes)
		}
	}
}

// Write leaves events for one Flush; a Flush with nothing written, and a
// flushing write after it, do not flush twice.
func TestWriterBatchesUntilFlush(t *testing.T) {
	var rec recorder
	w := NewFlushWriter(&rec, rec.flush)
	w.Write([]byte("data: 1\n\n"))
	w.Write([]byte("data: 2\n\n"))
	if rec.flushes != 0 {
		t.Fatalf("%d flushes before Flush", rec.flushes)
	}
	w.Flush()
	w.Flush()
	if rec.flushes != 1 || rec.String() != "data: 1\n\ndata: 2\n\n" {
		t.Fatalf("%d flushes, wrote %q", rec.flushes, rec.String())
	}
	w.WriteDone()
	w.Flush()
	if rec.flushes != 2 {
		t.Fatalf("%d flushes after WriteDone and Flush, want 2", rec.flushes)
	}
}

func TestWriterInvalidName(t *testing.T) {
	var rec recorder
	w := NewFlushWriter(&rec, nil)
	if err := w.WriteEvent("a\nb", nil); !errors.Is(err, ErrInvalidName) || rec.Len() != 0 {
		t.Errorf("err = %v, wrote %q", err, rec.String())
	}
}

// TestWriterRoundTrip reads back what the Writer wrote.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewFlushWriter(&buf, nil)
	datas := []string{"", "x", "a\nb", "\n", "{\"k\":\"v\"}"}
	for _, d := range datas {
		if err := w.WriteEvent("n", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteError(ErrorEvent{Message: "m", Type: "t"}); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, &buf, Options{})
	if len(res.events) != len(datas)+1 || res.err.Error() != "EOF" {
		t.Fatalf("read back %q, %v", res.events, res.err)
	}
	for i, d := range datas {
		if res.events[i] != (got{Name: "n", Data: d}) {
			t.Errorf("event %d = %q, want data %q", i, res.events[i], d)
		}
	}
	var e struct {
		Error struct{ Message, Type string }
	}
	last := res.events[len(datas)]
	if err := json.Unmarshal([]byte(last.Data), &e); err != nil || e.Error.Message != "m" || e.Error.Type != "t" {
		t.Errorf("error event %q: %v", last.Data, err)
	}
	if HasContent(Event{Data: []byte(last.Data)}) {
		t.Error("the error event has content")
	}
}

func TestNewWriterFlushes(t *testing.T) {
	rec := httptest.NewRecorder()
	SetHeaders(rec.Header())
	w := NewWriter(rec)
	if err := w.WriteDone(); err != nil {
		t.Fatal(err)
	}
	if !rec.Flushed || rec.Body.String() != "data: [DONE]\n\n" {
		t.Errorf("flushed %v, body %q", rec.Flushed, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
}

// plainResponseWriter cannot flush.
type plainResponseWriter struct {
	h http.Header
	strings.Builder
}

func (p *plainResponseWriter) Header() http.Header { return p.h }
func (p *plainResponseWriter) WriteHeader(int)     {}

func TestNewWriterWithoutFlusher(t *testing.T) {
	p := &plainResponseWriter{h: http.Header{}}
	if err := NewWriter(p).WriteDone(); err != nil || p.String() != "data: [DONE]\n\n" {
		t.Errorf("err %v, wrote %q", err, p.String())
	}
}

// failWriter fails every write.
type failWriter struct{}

var errWrite = errors.New("client gone")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriterWriteError(t *testing.T) {
	flushed := false
	w := NewFlushWriter(failWriter{}, func() error { flushed = true; return nil })
	if err := w.WriteRaw([]byte("data: x\n\n")); !errors.Is(err, errWrite) || flushed {
		t.Errorf("err %v, flushed %v", err, flushed)
	}
}

// A Writer for a response is one allocation: it holds its
// ResponseController instead of a closure over a new one.
func TestNewWriterAllocatesOnce(t *testing.T) {
	rec := httptest.NewRecorder()
	if n := testing.AllocsPerRun(100, func() { sink = NewWriter(rec) }); n != 1 {
		t.Errorf("NewWriter: %v allocations, want 1", n)
	}
	w := NewWriter(rec)
	if err := w.WriteRaw([]byte("data: x\n\n")); err != nil || !rec.Flushed {
		t.Errorf("WriteRaw: %v, flushed %v; want the event flushed", err, rec.Flushed)
	}
}

var sink *Writer
