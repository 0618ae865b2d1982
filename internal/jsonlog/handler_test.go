package jsonlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordTime is the fixed time of test records.
var recordTime = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// renderBoth writes r through NewHandler and through slog.NewJSONHandler,
// each made with opts and wrapped by derive (nil for none), and returns both
// outputs.
func renderBoth(t tester, opts *slog.HandlerOptions, derive func(slog.Handler) slog.Handler, r slog.Record) (got, want string) {
	t.Helper()
	var ours, theirs bytes.Buffer
	h, std := NewHandler(&ours, opts), slog.Handler(slog.NewJSONHandler(&theirs, opts))
	if derive != nil {
		h, std = derive(h), derive(std)
	}
	ctx := context.Background()
	if err := h.Handle(ctx, r.Clone()); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if err := std.Handle(ctx, r.Clone()); err != nil {
		t.Fatalf("stdlib Handle: %v", err)
	}
	return ours.String(), theirs.String()
}

// tester is the part of testing.TB and *rapid.T that renderBoth uses.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
}

func record(level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(recordTime, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

type stringer struct{}

func (stringer) LogValue() slog.Value { return slog.StringValue("resolved") }

func TestHandlerMatchesStdlib(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	odd := time.FixedZone("odd", -(3*3600 + 25*60 + 17)) // an offset with seconds
	tests := []struct {
		name string
		r    slog.Record
		fast bool // whether the fast path renders it
	}{
		{"no attrs", record(slog.LevelInfo, "hello"), true},
		{"zero record time", slog.NewRecord(time.Time{}, slog.LevelInfo, "m", 0), true},
		{"record time with zone", slog.NewRecord(recordTime.In(paris), slog.LevelInfo, "m", 0), true},
		{"record time with seconds in offset", slog.NewRecord(recordTime.In(odd), slog.LevelInfo, "m", 0), true},
		{"record time whole second", slog.NewRecord(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", 0), true},
		{"record time monotonic", slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0), true},
		{"record year 10000", slog.NewRecord(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", 0), false},
		{"record year -1", slog.NewRecord(time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", 0), false},

		{"string", record(slog.LevelInfo, "m", slog.String("k", "v")), true},
		{"empty string and key", record(slog.LevelInfo, "", slog.String("", "")), true},
		{"html chars", record(slog.LevelInfo, "<b>&</b>", slog.String("<k>", "a<b>c&d")), true},
		{"quotes and backslash", record(slog.LevelInfo, `say "hi"\`, slog.String(`k"\`, `\"`)), true},
		{"control chars", record(slog.LevelInfo, "\x00\x01\x1f\t\n\r\b\f\x7f", slog.String("\n", "\x1b[31m")), true},
		{"line separators", record(slog.LevelInfo, "a\u2028b\u2029c", slog.String("\u2028", "\u2029")), true},
		{"unicode", record(slog.LevelInfo, "héllo 世界 🎉", slog.String("ключ", "значение")), true},
		{"invalid utf8", record(slog.LevelInfo, "a\xffb\xc3", slog.String("\xe2\x82", "\xed\xa0\x80 surrogate")), true},
		{"replacement char itself", record(slog.LevelInfo, "\ufffd", slog.String("k", "\uFFFD")), true},

		{"ints", record(slog.LevelInfo, "m", slog.Int("a", 0), slog.Int64("b", math.MinInt64), slog.Int64("c", math.MaxInt64)), true},
		{"uints", record(slog.LevelInfo, "m", slog.Uint64("a", 0), slog.Uint64("b", math.MaxUint64)), true},
		{"bools", record(slog.LevelInfo, "m", slog.Bool("t", true), slog.Bool("f", false)), true},
		{"durations", record(slog.LevelInfo, "m", slog.Duration("d", 1500*time.Millisecond), slog.Duration("n", -1), slog.Duration("max", math.MaxInt64)), true},
		{"floats", record(slog.LevelInfo, "m",
			slog.Float64("zero", 0), slog.Float64("neg zero", math.Copysign(0, -1)),
			slog.Float64("one", 1), slog.Float64("frac", 0.1), slog.Float64("third", 1.0/3),
			slog.Float64("big", 1e20), slog.Float64("bigger", 1e21), slog.Float64("huge", math.MaxFloat64),
			slog.Float64("small", 1e-6), slog.Float64("smaller", 1e-7), slog.Float64("tiny", math.SmallestNonzeroFloat64),
			slog.Float64("neg", -123456.789e-10), slog.Float64("e-10", 1.5e-10), slog.Float64("e+100", 2e100)), true},
		{"NaN", record(slog.LevelInfo, "m", slog.Float64("f", math.NaN())), false},
		{"+Inf", record(slog.LevelInfo, "m", slog.Float64("f", math.Inf(1))), false},
		{"-Inf", record(slog.LevelInfo, "m", slog.Float64("f", math.Inf(-1))), false},
		{"times", record(slog.LevelInfo, "m",
			slog.Time("zero", time.Time{}), slog.Time("utc", recordTime),
			slog.Time("zone", recordTime.In(paris)), slog.Time("odd", recordTime.In(odd)),
			slog.Time("far", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)),
			slog.Time("early", time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC)),
			slog.Time("monotonic", time.Now())), true},
		{"time year 10000", record(slog.LevelInfo, "m", slog.Time("t", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))), false},
		{"duplicate keys", record(slog.LevelInfo, "m", slog.Int("k", 1), slog.Int("k", 2)), true},
		{"many attrs", record(slog.LevelInfo, "m", accessLogAttrs...), true},

		{"levels", record(slog.LevelDebug-3, "m"), true},
		{"level INFO+2", record(slog.LevelInfo+2, "m"), true},
		{"level WARN-1", record(slog.LevelWarn-1, "m"), true},
		{"level ERROR+100", record(slog.LevelError+100, "m"), true},
		{"level min", record(math.MinInt, "m"), true},
		{"level max", record(math.MaxInt, "m"), true},

		{"any", record(slog.LevelInfo, "m", slog.Any("a", []int{1, 2})), false},
		{"any after fast attrs", record(slog.LevelInfo, "m", slog.Int("a", 1), slog.String("b", "x"), slog.Any("c", map[string]int{"z": 1})), false},
		{"error", record(slog.LevelInfo, "m", slog.Any("err", errors.New("boom <x>"))), false},
		{"nil any", record(slog.LevelInfo, "m", slog.Any("nil", nil)), false},
		{"empty attr", record(slog.LevelInfo, "m", slog.Attr{}, slog.Int("a", 1)), false},
		{"group", record(slog.LevelInfo, "m", slog.Group("g", slog.Int("a", 1), slog.String("b", "<"))), false},
		{"empty group", record(slog.LevelInfo, "m", slog.Group("g"), slog.Int("a", 1)), true}, // AddAttrs drops it
		{"inline group", record(slog.LevelInfo, "m", slog.Group("", slog.Int("a", 1))), false},
		{"log valuer", record(slog.LevelInfo, "m", slog.Any("v", stringer{})), false},
		{"unmarshalable any", record(slog.LevelInfo, "m", slog.Any("ch", make(chan int))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := renderBoth(t, nil, nil, tt.r)
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if _, fast := appendRecord(nil, tt.r); fast != tt.fast {
				t.Errorf("fast path = %v; want %v", fast, tt.fast)
			}
		})
	}
}

// TestHandlerGolden pins a few lines, so the format is visible here and a
// change in stdlib shows up as a diff rather than only as agreement.
func TestHandlerGolden(t *testing.T) {
	tests := []struct {
		r    slog.Record
		want string
	}{
		{record(slog.LevelInfo, "hi", slog.String("html", "<a&b>"), slog.String("ls", "\u2028"), slog.String("bad", "\xff")),
			`{"time":"2026-03-14T15:09:26.535897932Z","level":"INFO","msg":"hi","html":"<a&b>","ls":"\u2028","bad":"\ufffd"}`},
		{record(slog.LevelWarn+1, "m", slog.Float64("f", 1e21), slog.Float64("g", 1e-7), slog.Float64("h", 1e20), slog.Duration("d", time.Second)),
			`{"time":"2026-03-14T15:09:26.535897932Z","level":"WARN+1","msg":"m","f":1e+21,"g":1e-7,"h":100000000000000000000,"d":1000000000}`},
		{record(slog.LevelDebug-2, "m", slog.Float64("nan", math.NaN())),
			`{"time":"2026-03-14T15:09:26.535897932Z","level":"DEBUG-2","msg":"m","nan":"!ERROR:json: unsupported value: NaN"}`},
		{record(slog.LevelError, "m", slog.Time("zero", time.Time{}), slog.String("ctl", "\x01\t")),
			`{"time":"2026-03-14T15:09:26.535897932Z","level":"ERROR","msg":"m","zero":"0001-01-01T00:00:00Z","ctl":"\u0001\t"}`},
	}
	for i, tt := range tests {
		var buf bytes.Buffer
		if err := NewHandler(&buf, nil).Handle(context.Background(), tt.r); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tt.want+"\n" {
			t.Errorf("%d: got  %s\nwant %s", i, got, tt.want)
		}
	}
}

func TestAppendLevelMatchesString(t *testing.T) {
	levels := []slog.Level{math.MinInt, math.MinInt + 1, math.MaxInt, math.MaxInt - 8}
	for l := slog.Level(-40); l <= 40; l++ {
		levels = append(levels, l)
	}
	for _, l := range levels {
		if got, want := string(appendLevel(nil, l)), l.String(); got != want {
			t.Errorf("appendLevel(%d) = %q; want %q", int(l), got, want)
		}
	}
}

func TestHandlerEnabled(t *testing.T) {
	var lv slog.LevelVar
	for _, opts := range []*slog.HandlerOptions{nil, {}, {Level: slog.LevelWarn}, {Level: &lv}} {
		h, std := NewHandler(nil, opts), slog.NewJSONHandler(nil, opts)
		for _, set := range []slog.Level{slog.LevelDebug, slog.LevelError} {
			lv.Set(set)
			for l := slog.LevelDebug - 1; l <= slog.LevelError+1; l++ {
				got, want := h.Enabled(context.Background(), l), std.Enabled(context.Background(), l)
				if got != want {
					t.Errorf("opts %+v, LevelVar %v: Enabled(%v) = %v; want %v", opts, set, l, got, want)
				}
			}
		}
	}
}

func TestHandlerDerivedMatchStdlib(t *testing.T) {
	r := record(slog.LevelInfo, "m", slog.Int("a", 1), slog.String("b", "<x>"))
	tests := []struct {
		name   string
		derive func(slog.Handler) slog.Handler
	}{
		{"WithAttrs", func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("svc", "gw")}) }},
		{"WithAttrs empty", func(h slog.Handler) slog.Handler { return h.WithAttrs(nil) }},
		{"WithAttrs empty groups", func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.Group("g")}) }},
		{"WithAttrs empty and full group", func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Group("g"), slog.Group("h", slog.Int("x", 1))})
		}},
		{"WithGroup", func(h slog.Handler) slog.Handler { return h.WithGroup("req") }},
		{"WithGroup empty name", func(h slog.Handler) slog.Handler { return h.WithGroup("") }},
		{"WithGroup WithAttrs WithGroup", func(h slog.Handler) slog.Handler {
			return h.WithGroup("a").WithAttrs([]slog.Attr{slog.Bool("x", true)}).WithGroup("b")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := renderBoth(t, nil, tt.derive, r)
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestHandlerOptionsDelegate(t *testing.T) {
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	r := slog.NewRecord(recordTime, slog.LevelInfo, "m", pcs[0])
	r.AddAttrs(slog.Int("a", 1), slog.String("secret", "x"))
	redact := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == "secret" {
			return slog.String(a.Key, "REDACTED")
		}
		return a
	}
	for _, opts := range []*slog.HandlerOptions{
		{ReplaceAttr: redact},
		{AddSource: true},
		{AddSource: true, ReplaceAttr: redact, Level: slog.LevelDebug},
	} {
		got, want := renderBoth(t, opts, nil, r)
		if got != want {
			t.Errorf("opts %+v:\ngot  %s\nwant %s", opts, got, want)
		}
	}
}

type failWriter struct{ err error }

func (f failWriter) Write(p []byte) (int, error) { return 0, f.err }

func TestHandlerReturnsWriteError(t *testing.T) {
	boom := errors.New("boom")
	h := NewHandler(failWriter{boom}, nil)
	for _, r := range []slog.Record{
		record(slog.LevelInfo, "fast"),
		record(slog.LevelInfo, "slow", slog.Any("a", []int{1})),
	} {
		if err := h.Handle(context.Background(), r); !errors.Is(err, boom) {
			t.Errorf("%s: Handle = %v; want %v", r.Message, err, boom)
		}
	}
}

// chunkWriter records each Write as one chunk. It has no lock of its own:
// the handler's lock must keep Writes apart, and -race checks it does.
type chunkWriter struct{ chunks []string }

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.chunks = append(c.chunks, string(p))
	return len(p), nil
}

// TestHandlerConcurrent logs from many goroutines through the fast path and
// through the stdlib delegate, both directly and via WithAttrs, into one
// writer, and checks every line arrives whole.
func TestHandlerConcurrent(t *testing.T) {
	const goroutines, perG = 16, 200
	var w chunkWriter
	base := NewHandler(&w, nil)
	handlers := []slog.Handler{base, base.WithAttrs([]slog.Attr{slog.String("svc", "gw")}), base.WithGroup("g")}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			logger := slog.New(handlers[g%len(handlers)])
			for i := range perG {
				attrs := []slog.Attr{slog.Int("g", g), slog.Int("i", i), slog.String("pad", strings.Repeat("x", i))}
				if i%3 == 0 {
					attrs = append(attrs, slog.Any("any", []int{g, i})) // the delegate
				}
				logger.LogAttrs(context.Background(), slog.LevelInfo, "m", attrs...)
			}
		})
	}
	wg.Wait()
	if len(w.chunks) != goroutines*perG {
		t.Fatalf("got %d writes; want %d", len(w.chunks), goroutines*perG)
	}
	seen := map[string]bool{}
	for _, c := range w.chunks {
		if strings.Count(c, "\n") != 1 || !strings.HasSuffix(c, "\n") || !json.Valid([]byte(c)) {
			t.Fatalf("write is not one JSON line: %q", c)
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(c), &line); err != nil {
			t.Fatalf("%v: %s", err, c)
		}
		if g, ok := line["g"].(map[string]any); ok { // from WithGroup("g")
			line = g
		}
		seen[fmt.Sprint(line["g"], line["i"])] = true
	}
	if len(seen) != goroutines*perG {
		t.Errorf("got %d distinct lines; want %d", len(seen), goroutines*perG)
	}
}
