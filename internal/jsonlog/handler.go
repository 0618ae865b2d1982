package jsonlog

import (
	"context"
	"io"
	"log/slog"
	"sync"
)

// NewHandler returns a slog.Handler that writes exactly what
// slog.NewJSONHandler(w, opts) would write, byte for byte, one w.Write per
// record. A nil opts means the default options, as for slog.NewJSONHandler.
//
// Records whose attributes are all of kind String, Int64, Uint64, Float64,
// Bool, Duration or Time are rendered by this package into a pooled buffer.
// Everything else is handed to a slog.JSONHandler over the same writer:
// records with attributes of kind Any, Group or LogValuer, NaN or infinite
// floats, times with years outside [0, 9999], and every record of the
// handlers returned by WithAttrs and WithGroup. When opts sets ReplaceAttr
// or AddSource, NewHandler returns a plain slog.JSONHandler, since no record
// could take the fast path.
//
// Lines written by the handler and by every handler derived from it never
// interleave, even if they come through different paths. The handler is
// safe for concurrent use.
func NewHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	if opts.ReplaceAttr != nil || opts.AddSource {
		return slog.NewJSONHandler(w, opts)
	}
	h := &handler{w: w, level: opts.Level, mu: new(sync.Mutex)}
	h.delegate = slog.NewJSONHandler(lockedWriter{mu: h.mu, w: w}, opts)
	return h
}

// handler is the fast slog.Handler. Its fields are set once by NewHandler.
type handler struct {
	w     io.Writer
	level slog.Leveler // nil means slog.LevelInfo
	// mu serialises writes to w by this handler and, through lockedWriter,
	// by delegate and every handler derived from it.
	mu       *sync.Mutex
	delegate *slog.JSONHandler
}

// Enabled reports whether level is at least the handler's minimum level.
func (h *handler) Enabled(_ context.Context, level slog.Level) bool {
	minLevel := slog.LevelInfo
	if h.level != nil {
		minLevel = h.level.Level()
	}
	return level >= minLevel
}

// Handle writes r as one JSON line.
func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	bp := getBuffer()
	defer putBuffer(bp)
	b, ok := appendRecord((*bp)[:0], r)
	*bp = b
	if !ok {
		return h.delegate.Handle(ctx, r)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

// WithAttrs returns a stdlib JSON handler with attrs preformatted, sharing
// this handler's writer lock. A list of only empty groups adds nothing, so
// for it (as stdlib does) the receiver itself is returned.
func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	for _, a := range attrs {
		if a.Value.Kind() != slog.KindGroup || len(a.Value.Group()) > 0 {
			return h.delegate.WithAttrs(attrs)
		}
	}
	return h
}

// WithGroup returns a stdlib JSON handler that qualifies later attributes
// by name, sharing this handler's writer lock.
func (h *handler) WithGroup(name string) slog.Handler {
	return h.delegate.WithGroup(name)
}

// lockedWriter is the delegate's writer: it takes the fast path's lock, so
// a line from either path is written whole.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// maxPooled is the largest buffer returned to the pool, so one huge record
// does not pin its buffer for good (stdlib uses the same bound).
const maxPooled = 16 << 10

var bufferPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

func getBuffer() *[]byte { return bufferPool.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	bufferPool.Put(b)
}
