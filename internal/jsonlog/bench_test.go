package jsonlog

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// accessLogAttrs is the shape of the gateway's access-log line: twelve
// typed attributes.
var accessLogAttrs = []slog.Attr{
	slog.String("method", "POST"),
	slog.String("path", "/v1/chat/completions"),
	slog.Int("status", 200),
	slog.String("model", "gpt-4o-mini"),
	slog.String("provider", "openai"),
	slog.Int("attempts", 1),
	slog.Bool("stream", true),
	slog.Int("prompt_tokens", 1234),
	slog.Int("completion_tokens", 567),
	slog.Float64("cost_usd", 0.000815),
	slog.Float64("latency_ms", 842.137),
	slog.String("request_id", "req_01J9Z3K4W5X6Y7Z8A9B0C1D2E3"),
}

// BenchmarkHandler logs the access-log line through slog.Logger.LogAttrs,
// as the gateway does, with this package's handler and with stdlib's.
func BenchmarkHandler(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"jsonlog", NewHandler(io.Discard, nil)},
		{"stdlib", slog.NewJSONHandler(io.Discard, nil)},
	} {
		logger := slog.New(bc.h)
		ctx := context.Background()
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				logger.LogAttrs(ctx, slog.LevelInfo, "request", accessLogAttrs...)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					logger.LogAttrs(ctx, slog.LevelInfo, "request", accessLogAttrs...)
				}
			})
		})
	}
}

// BenchmarkHandle calls Handle directly on a prepared record, leaving out
// the Logger's own cost (caller PC, building the record).
func BenchmarkHandle(b *testing.B) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(accessLogAttrs...)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"jsonlog", NewHandler(io.Discard, nil)},
		{"stdlib", slog.NewJSONHandler(io.Discard, nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.h.Handle(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuffered writes access-log-sized lines into a Buffered over
// io.Discard with the real clock: the cost a line adds before its batch
// goes out.
func BenchmarkBuffered(b *testing.B) {
	line := []byte(`{"time":"2026-03-14T15:09:26.535897932Z","level":"INFO","msg":"request","method":"POST","path":"/v1/chat/completions","status":200}` + "\n")
	b.Run("serial", func(b *testing.B) {
		w := NewBuffered(io.Discard, BufferedSettings{})
		defer w.Close()
		b.ReportAllocs()
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			w.Write(line)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		w := NewBuffered(io.Discard, BufferedSettings{})
		defer w.Close()
		b.ReportAllocs()
		b.SetBytes(int64(len(line)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				w.Write(line)
			}
		})
	})
}
