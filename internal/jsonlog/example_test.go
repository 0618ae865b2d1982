package jsonlog_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/jsonlog"
)

func ExampleNewHandler() {
	h := jsonlog.NewHandler(os.Stdout, nil)

	// A Logger stamps records with time.Now; a fixed time keeps the output
	// stable here.
	r := slog.NewRecord(time.Date(2026, 3, 14, 15, 9, 26, 535000000, time.UTC), slog.LevelInfo, "request", 0)
	r.AddAttrs(
		slog.String("path", "/v1/chat/completions"),
		slog.Int("status", 200),
		slog.Bool("stream", true),
		slog.Float64("cost_usd", 0.000815),
		slog.Duration("latency", 842*time.Millisecond),
		slog.String("note", "<ok> & \"done\""),
	)
	h.Handle(context.Background(), r)

	// Other kinds, groups and derived handlers go through slog's own
	// JSONHandler, with the same result.
	r = slog.NewRecord(time.Date(2026, 3, 14, 15, 9, 27, 0, time.UTC), slog.LevelWarn+2, "retry", 0)
	r.AddAttrs(slog.Group("upstream", slog.String("provider", "openai"), slog.Int("attempt", 2)))
	h.WithAttrs([]slog.Attr{slog.String("svc", "gateway")}).Handle(context.Background(), r)
	// Output:
	// {"time":"2026-03-14T15:09:26.535Z","level":"INFO","msg":"request","path":"/v1/chat/completions","status":200,"stream":true,"cost_usd":0.000815,"latency":842000000,"note":"<ok> & \"done\""}
	// {"time":"2026-03-14T15:09:27Z","level":"WARN+2","msg":"retry","svc":"gateway","upstream":{"provider":"openai","attempt":2}}
}

// countingWriter shows each write it receives, as one write(2) would be.
type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n++
	fmt.Printf("write %d, %d bytes:\n%s", c.n, len(p), p)
	return len(p), nil
}

func ExampleBuffered() {
	// A fake clock makes the timing visible; in production leave Clock nil.
	clk := clocktest.New(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
	out := jsonlog.NewBuffered(&countingWriter{}, jsonlog.BufferedSettings{
		FlushEvery: 100 * time.Millisecond,
		Clock:      clk,
	})
	defer out.Close()
	h := jsonlog.NewHandler(out, nil)

	// What a Logger does, with the fake clock's time for a stable output.
	log := func(msg string, attrs ...slog.Attr) {
		r := slog.NewRecord(clk.Now(), slog.LevelInfo, msg, 0)
		r.AddAttrs(attrs...)
		h.Handle(context.Background(), r)
	}

	log("request", slog.Int("status", 200))
	clk.Advance(40 * time.Millisecond)
	log("request", slog.Int("status", 429))
	fmt.Println("two lines logged, nothing written yet")
	clk.Advance(60 * time.Millisecond) // 100 ms after the first line

	log("shutdown")
	out.Flush() // or Close
	// Output:
	// two lines logged, nothing written yet
	// write 1, 155 bytes:
	// {"time":"2026-03-14T15:09:26Z","level":"INFO","msg":"request","status":200}
	// {"time":"2026-03-14T15:09:26.04Z","level":"INFO","msg":"request","status":429}
	// write 2, 66 bytes:
	// {"time":"2026-03-14T15:09:26.1Z","level":"INFO","msg":"shutdown"}
}
