package sse

import (
	"bytes"
	"fmt"
	"io"
	"time"
)

// DefaultMaxEventSize is the largest event a Reader accepts when
// Options.MaxEventSize is zero: 1 MiB.
const DefaultMaxEventSize = 1 << 20

const (
	// readSize is the least free space a read is given, and the first size
	// of the buffer.
	readSize = 4096
	// maxEmptyReads is how many (0, nil) reads in a row end the stream with
	// io.ErrNoProgress, as bufio does.
	maxEmptyReads = 100
)

// bom is the UTF-8 byte order mark, skipped at the start of a stream.
var bom = []byte("\xEF\xBB\xBF")

// Options configures a Reader. The zero value means the documented defaults.
type Options struct {
	// MaxEventSize bounds one event in bytes as received: from its first
	// byte through the blank line that ends it, including comment lines and
	// blocks without data that came before it. An event over the limit
	// makes Next return ErrEventTooLarge. 0 or less: DefaultMaxEventSize.
	MaxEventSize int
}

// Event is one dispatched server-sent event.
//
// Its slices point into the Reader's buffers and are valid only until the
// next call to Next or Reset; use Clone to keep an event longer.
type Event struct {
	// Name is the value of the event's last "event" field, or "" when it
	// had none (the WHATWG type "message"). OpenAI streams have no names;
	// Anthropic streams name every event (message_start, ping, error, …).
	Name string
	// Data is the values of the event's "data" fields joined with "\n".
	Data []byte
	// ID is the last event ID: the value of the most recent "id" field in
	// the stream so far, this event or an earlier one (as WHATWG says); nil
	// when there has been none.
	ID []byte
	// Raw is every byte of the stream that belongs to this event, as
	// received: its field lines, comment lines, the blank line that ends it,
	// any blocks before it that dispatched nothing (comment keep-alives
	// such as ": OPENROUTER PROCESSING"), and the BOM for the first event.
	// The Raw of successive events joined give back the stream byte for
	// byte, so the gateway passes events through without re-encoding them.
	//
	// When the stream ends its lines with "\r" alone and a read ended right
	// after the "\r" of a blank line, a following "\n" is counted in the
	// next event's Raw (the Reader does not wait for it); a client parses
	// the joined bytes the same either way.
	Raw []byte
}

// Clone returns a copy of e whose slices do not share the Reader's buffers.
func (e Event) Clone() Event {
	c := Event{Name: e.Name, Raw: bytes.Clone(e.Raw)}
	if e.Data != nil {
		c.Data = bytes.Clone(e.Data)
	}
	if e.ID != nil {
		c.ID = bytes.Clone(e.ID)
	}
	return c
}

// Reader reads server-sent events from an io.Reader following the WHATWG
// parsing rules: lines end in "\n", "\r\n" or "\r"; a line is "field: value"
// (one space after the colon is dropped), a field name alone, or a comment
// starting with ":"; the fields event, data, id and retry are used and
// others ignored; a blank line dispatches the event if it has data. One
// UTF-8 byte order mark at the start of the stream is skipped.
//
// Memory is bounded by Options.MaxEventSize plus a few KiB, and buffers are
// reused from event to event: reading allocates nothing per event once the
// buffers have grown to the stream's event size.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	rd  io.Reader
	max int

	// buf holds the event being read from start; parsing has reached pos;
	// bytes up to end have been read.
	buf             []byte
	start, pos, end int
	readErr         error // from rd, acted on once buf is used up
	done            error // returned by every later Next
	bomChecked      bool
	skipLF          bool // the last line ended in "\r": a "\n" next is part of it

	// The event being parsed. Offsets are relative to start, so they
	// survive the buffer moving.
	nameOff, nameLen int
	dataOff, dataLen int
	dataLines        int
	data             []byte // the joined values once there are two data lines
	significant      bool   // a field line since the last blank line

	lastID    []byte
	retry     time.Duration
	nameCache string // the last event name outside the known set
}

// NewReader returns a Reader of the events in rd.
func NewReader(rd io.Reader, opts Options) *Reader {
	r := &Reader{max: opts.MaxEventSize}
	if r.max <= 0 {
		r.max = DefaultMaxEventSize
	}
	r.Reset(rd)
	return r
}

// Reset makes r read a new stream from rd, keeping its buffers and its
// MaxEventSize. Events returned before are no longer valid.
func (r *Reader) Reset(rd io.Reader) {
	*r = Reader{
		rd: rd, max: r.max, buf: r.buf, data: r.data[:0],
		lastID: r.lastID[:0], nameCache: r.nameCache,
	}
}

// Retry returns the reconnection time set by the stream's last valid
// "retry" field, or 0 if it had none.
func (r *Reader) Retry() time.Duration { return r.retry }

// Next returns the next event of the stream.
//
// At the end of the stream it returns io.EOF. If the stream ended inside an
// event, Next returns that event as far as it arrived (its Raw holds the
// bytes, its Name and Data the fields received, counting a final line with
// no line break) with ErrIncomplete, then io.EOF. An event over the size
// limit gives an error matching ErrEventTooLarge; a read error is returned
// wrapped. After any error Next keeps returning an error.
func (r *Reader) Next() (Event, error) {
	if r.done != nil {
		return Event{}, r.done
	}
	r.start = r.pos
	r.resetFields()
	r.significant = false
	for {
		if r.parse() {
			if r.pos-r.start > r.max {
				return Event{}, r.tooLarge()
			}
			return r.event(r.pos), nil
		}
		// No complete line is left: what is buffered belongs to this event.
		if r.end-r.start > r.max {
			return Event{}, r.tooLarge()
		}
		if r.readErr != nil {
			return r.finish()
		}
		if err := r.fill(); err != nil {
			r.done = err
			return Event{}, err
		}
	}
}

func (r *Reader) tooLarge() error {
	r.done = fmt.Errorf("%w: over %d bytes", ErrEventTooLarge, r.max)
	return r.done
}

// resetFields forgets the event's fields, as a blank line does.
func (r *Reader) resetFields() {
	r.nameOff, r.nameLen = 0, 0
	r.dataOff, r.dataLen = 0, 0
	r.dataLines = 0
	r.data = r.data[:0]
}

// parse handles the complete lines buffered after pos and reports whether
// a blank line dispatched an event.
func (r *Reader) parse() bool {
	if !r.bomChecked {
		have := r.buf[r.pos:r.end]
		if len(have) < len(bom) && r.readErr == nil && bytes.HasPrefix(bom, have) {
			return false
		}
		r.bomChecked = true
		if bytes.HasPrefix(have, bom) {
			r.pos += len(bom)
		}
	}
	for {
		if r.skipLF {
			if r.pos == r.end {
				return false
			}
			if r.buf[r.pos] == '\n' {
				r.pos++
			}
			r.skipLF = false
		}
		rest := r.buf[r.pos:r.end]
		n, next := lineEnd(rest)
		if next < 0 {
			return false
		}
		if next == n+1 && next == len(rest) && rest[n] == '\r' {
			r.skipLF = true // a "\n" may follow in the next read
		}
		lineStart := r.pos
		r.pos += next
		if n == 0 {
			if r.dataLines > 0 {
				return true
			}
			r.resetFields()
			r.significant = false
			continue
		}
		r.field(rest[:n], lineStart)
	}
}

// lineEnd finds the first line break in b: n is the line's length and next
// the offset after the break, or -1 if b holds no complete line.
func lineEnd(b []byte) (n, next int) {
	lf := bytes.IndexByte(b, '\n')
	seg := b
	if lf >= 0 {
		seg = b[:lf]
	}
	if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
		if cr+1 < len(b) && b[cr+1] == '\n' {
			return cr, cr + 2
		}
		return cr, cr + 1
	}
	if lf < 0 {
		return 0, -1
	}
	return lf, lf + 1
}

// field handles one non-blank line that starts at offset at in buf.
func (r *Reader) field(line []byte, at int) {
	colon := bytes.IndexByte(line, ':')
	if colon == 0 {
		return // a comment
	}
	r.significant = true
	name, value, valueAt := line, line[len(line):], at+len(line)
	if colon > 0 {
		v := colon + 1
		if v < len(line) && line[v] == ' ' {
			v++
		}
		name, value, valueAt = line[:colon], line[v:], at+v
	}
	switch string(name) {
	case "event":
		r.nameOff, r.nameLen = valueAt-r.start, len(value)
	case "data":
		r.dataLines++
		switch r.dataLines {
		case 1:
			r.dataOff, r.dataLen = valueAt-r.start, len(value)
			return
		case 2:
			first := r.buf[r.start+r.dataOff:][:r.dataLen]
			r.data = append(r.data[:0], first...)
		}
		r.data = append(r.data, '\n')
		r.data = append(r.data, value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = append(r.lastID[:0], value...)
		}
	case "retry":
		r.setRetry(value)
	}
}

// setRetry applies a retry field: ASCII digits, in milliseconds.
func (r *Reader) setRetry(value []byte) {
	if len(value) == 0 {
		return
	}
	const limit = int64(1<<63-1) / int64(time.Millisecond)
	var ms int64
	for _, c := range value {
		if c < '0' || c > '9' {
			return
		}
		if ms = ms*10 + int64(c-'0'); ms > limit {
			ms = limit
		}
	}
	r.retry = time.Duration(ms) * time.Millisecond
}

// event builds the event that ends at offset to in buf.
func (r *Reader) event(to int) Event {
	ev := Event{
		Name: r.internName(r.buf[r.start+r.nameOff:][:r.nameLen]),
		Raw:  r.buf[r.start:to:to],
	}
	if n := len(r.lastID); n > 0 {
		ev.ID = r.lastID[:n:n]
	}
	switch {
	case r.dataLines == 1:
		ev.Data = r.buf[r.start+r.dataOff:][:r.dataLen:r.dataLen]
	case r.dataLines > 1:
		ev.Data = r.data[:len(r.data):len(r.data)]
	}
	return ev
}

// internName returns name as a string without allocating for the event
// names of the streams the gateway sees.
func (r *Reader) internName(name []byte) string {
	switch string(name) {
	case "":
		return ""
	case "message_start":
		return "message_start"
	case "content_block_start":
		return "content_block_start"
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_stop":
		return "content_block_stop"
	case "message_delta":
		return "message_delta"
	case "message_stop":
		return "message_stop"
	case "ping":
		return "ping"
	case "error":
		return "error"
	case "message":
		return "message"
	}
	if string(name) != r.nameCache {
		r.nameCache = string(name)
	}
	return r.nameCache
}

// finish ends the stream once every buffered byte has been parsed.
func (r *Reader) finish() (Event, error) {
	if r.readErr != io.EOF {
		r.done = fmt.Errorf("sse: read: %w", r.readErr)
		return Event{}, r.done
	}
	r.done = io.EOF
	if partial := r.buf[r.pos:r.end]; len(partial) > 0 && partial[0] != ':' {
		r.field(partial, r.pos)
	}
	if !r.significant {
		return Event{}, io.EOF
	}
	return r.event(r.end), ErrIncomplete
}

// fill reads more of the stream into buf, moving the event being read to
// the front and growing buf when there is little room.
func (r *Reader) fill() error {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.pos -= r.start
		r.end = n
		r.start = 0
	}
	if limit := r.max + readSize; len(r.buf)-r.end < readSize/2 && len(r.buf) < limit {
		size := min(max(2*len(r.buf), readSize), limit)
		buf := make([]byte, size)
		copy(buf, r.buf[:r.end])
		r.buf = buf
	}
	for range maxEmptyReads {
		n, err := r.rd.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			return fmt.Errorf("sse: read: invalid count %d", n)
		}
		r.end += n
		if err != nil {
			r.readErr = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	return fmt.Errorf("sse: read: %w", io.ErrNoProgress)
}
