package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// got is an event as a test compares it.
type got struct {
	Name, Data, ID string
}

// readResult is everything a Reader gave for one stream.
type readResult struct {
	events []got
	raws   []string // Raw of each event, the incomplete one included
	err    error    // io.EOF, ErrIncomplete, or the error that ended the stream
	tail   got      // the event returned with ErrIncomplete
}

func (r readResult) joined() string { return strings.Join(r.raws, "") }

func readAll(t testing.TB, rd io.Reader, opts Options) readResult {
	t.Helper()
	var res readResult
	r := NewReader(rd, opts)
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("Next never ended the stream")
		}
		ev, err := r.Next()
		switch {
		case err == nil:
			res.events = append(res.events, toGot(ev))
			res.raws = append(res.raws, string(ev.Raw))
			continue
		case errors.Is(err, ErrIncomplete):
			res.tail = toGot(ev)
			res.raws = append(res.raws, string(ev.Raw))
			if _, err2 := r.Next(); err2 != io.EOF {
				t.Fatalf("Next after ErrIncomplete = %v, want io.EOF", err2)
			}
		}
		res.err = err
		if _, err2 := r.Next(); err2 == nil {
			t.Fatalf("Next after %v gave an event", err)
		}
		return res
	}
}

func toGot(ev Event) got {
	return got{Name: ev.Name, Data: string(ev.Data), ID: string(ev.ID)}
}

// splitReaders returns readers of s that deliver it in different pieces:
// whole, one byte at a time, halves, the EOF with the last data, and split
// in two at every index.
func splitReaders(s string) map[string]func() io.Reader {
	m := map[string]func() io.Reader{
		"whole":   func() io.Reader { return strings.NewReader(s) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":    func() io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"dataerr": func() io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
	for i := 0; i <= len(s); i++ {
		m[fmt.Sprintf("split%d", i)] = func() io.Reader {
			return io.MultiReader(strings.NewReader(s[:i]), strings.NewReader(s[i:]))
		}
	}
	return m
}

func TestReaderParsing(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   []got
		raws   []string // when reading the stream whole; nil: not checked
		err    error
		tail   got
		retry  time.Duration
		noRaws bool
	}{
		{name: "lf", in: "data: a\n\n", want: []got{{Data: "a"}}, raws: []string{"data: a\n\n"}},
		{name: "crlf", in: "data: a\r\n\r\ndata: b\r\n\r\n", want: []got{{Data: "a"}, {Data: "b"}},
			raws: []string{"data: a\r\n\r\n", "data: b\r\n\r\n"}},
		{name: "cr", in: "data: a\r\rdata: b\r\r", want: []got{{Data: "a"}, {Data: "b"}},
			raws: []string{"data: a\r\r", "data: b\r\r"}},
		{name: "mixed line ends", in: "data: a\r\ndata: b\rdata: c\n\r\n", want: []got{{Data: "a\nb\nc"}}},
		{name: "cr then crlf blank", in: "data: a\r\r\ndata: b\r\r", want: []got{{Data: "a"}, {Data: "b"}},
			raws: []string{"data: a\r\r\n", "data: b\r\r"}},
		{name: "lf lf is not crlf", in: "data: a\n\rdata: b\n\n", want: []got{{Data: "a"}, {Data: "b"}}},
		{name: "multi-line data", in: "data: a\ndata: b\ndata: c\n\n", want: []got{{Data: "a\nb\nc"}}},
		{name: "no space", in: "data:a\n\n", want: []got{{Data: "a"}}},
		{name: "only one space dropped", in: "data:  a \n\n", want: []got{{Data: " a "}}},
		{name: "tab kept", in: "data:\ta\n\n", want: []got{{Data: "\ta"}}},
		{name: "empty data value", in: "data:\n\n", want: []got{{Data: ""}}},
		{name: "field without colon", in: "data\n\n", want: []got{{Data: ""}}},
		{name: "empty lines in data", in: "data\ndata\n\n", want: []got{{Data: "\n"}}},
		{name: "colon in value", in: "data: {\"a\":1}\n\n", want: []got{{Data: `{"a":1}`}}},
		{name: "comments", in: ": hi\ndata: x\n: mid\n\n", want: []got{{Data: "x"}},
			raws: []string{": hi\ndata: x\n: mid\n\n"}},
		{name: "comment block folded into next event", in: ": OPENROUTER PROCESSING\n\ndata: x\n\n",
			want: []got{{Data: "x"}}, raws: []string{": OPENROUTER PROCESSING\n\ndata: x\n\n"}},
		{name: "event without data not dispatched", in: "event: foo\n\ndata: x\n\n", want: []got{{Data: "x"}}},
		{name: "event name", in: "event: ping\ndata: {}\n\n", want: []got{{Name: "ping", Data: "{}"}}},
		{name: "last event name wins", in: "event: a\nevent: b\ndata: x\n\n", want: []got{{Name: "b", Data: "x"}}},
		{name: "unknown event name", in: "event: custom.thing\ndata: x\n\nevent: custom.thing\ndata: y\n\n",
			want: []got{{Name: "custom.thing", Data: "x"}, {Name: "custom.thing", Data: "y"}}},
		{name: "event field without colon", in: "event\ndata: x\n\n", want: []got{{Data: "x"}}},
		{name: "unknown fields ignored", in: "foo: bar\ndata : x\nDATA: y\ndata: z\n\n", want: []got{{Data: "z"}}},
		{name: "id persists", in: "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			want: []got{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}, {Data: "c"}}},
		{name: "id with NUL ignored", in: "id: 7\ndata: a\n\nid: 8\x00\ndata: b\n\n",
			want: []got{{Data: "a", ID: "7"}, {Data: "b", ID: "7"}}},
		{name: "retry", in: "retry: 1500\ndata: x\n\nretry: 1.5\n\n", want: []got{{Data: "x"}}, retry: 1500 * time.Millisecond},
		{name: "bom", in: "\xEF\xBB\xBFdata: x\n\n", want: []got{{Data: "x"}}, raws: []string{"\xEF\xBB\xBFdata: x\n\n"}},
		{name: "second bom is data", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", err: io.EOF},
		{name: "bom not at start", in: "data: a\n\n\xEF\xBB\xBFdata: b\n\n", want: []got{{Data: "a"}}},
		{name: "partial bom", in: "\xEF\xBBdata: x\n\n", err: io.EOF},
		{name: "anthropic", in: "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			want: []got{{Name: "message_start", Data: `{"type":"message_start"}`}, {Name: "ping", Data: `{"type": "ping"}`}}},
		{name: "empty stream", in: "", err: io.EOF},
		{name: "blank lines only", in: "\n\n\r\n", err: io.EOF},
		{name: "trailing comment", in: "data: a\n\n: bye", want: []got{{Data: "a"}}, err: io.EOF},
		{name: "trailing block without data", in: "data: a\n\nevent: x\n\n", want: []got{{Data: "a"}}, err: io.EOF},
		{name: "cut after field line", in: "data: a\n\ndata: b\n", want: []got{{Data: "a"}}, err: ErrIncomplete,
			tail: got{Data: "b"}, raws: []string{"data: a\n\n", "data: b\n"}},
		{name: "cut mid line", in: "data: a\n\nevent: e\ndata: b", want: []got{{Data: "a"}}, err: ErrIncomplete,
			tail: got{Name: "e", Data: "b"}},
		{name: "cut before blank line", in: "data: a\ndata: b\n", err: ErrIncomplete, tail: got{Data: "a\nb"}},
		{name: "cut mid field name", in: "data: a\n\nda", want: []got{{Data: "a"}}, err: ErrIncomplete},
		{name: "cut after event field", in: "event: x\n", err: ErrIncomplete, tail: got{Name: "x"}},
		{name: "cut after crlf line", in: "data: a\r\n", err: ErrIncomplete, tail: got{Data: "a"}},
		{name: "done", in: "data: {}\n\ndata: [DONE]\n\n", want: []got{{Data: "{}"}, {Data: "[DONE]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr := tt.err
			if wantErr == nil {
				wantErr = io.EOF
			}
			for how, rd := range splitReaders(tt.in) {
				res := readAll(t, rd(), Options{})
				if !equalEvents(res.events, tt.want) {
					t.Errorf("%s: events = %q, want %q", how, res.events, tt.want)
				}
				if res.err != wantErr {
					t.Errorf("%s: err = %v, want %v", how, res.err, wantErr)
				}
				if res.tail != tt.tail {
					t.Errorf("%s: incomplete event = %q, want %q", how, res.tail, tt.tail)
				}
				if !strings.HasPrefix(tt.in, res.joined()) {
					t.Errorf("%s: joined Raw %q is not a prefix of the input", how, res.joined())
				}
				if how == "whole" && tt.raws != nil && !equalStrings(res.raws, tt.raws) {
					t.Errorf("Raw = %q, want %q", res.raws, tt.raws)
				}
			}
			if tt.retry != 0 {
				r := NewReader(strings.NewReader(tt.in), Options{})
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
				if r.Retry() != tt.retry {
					t.Errorf("Retry = %v, want %v", r.Retry(), tt.retry)
				}
			}
		})
	}
}

func equalEvents(a, b []got) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

func TestReaderSlicesValidUntilNext(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\ndata: a\ndata: b\n\nid: 2\ndata: c\ndata: d\n\n"), Options{})
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	kept := ev.Clone()
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if string(kept.Data) != "a\nb" || string(kept.ID) != "1" || string(kept.Raw) != "id: 1\ndata: a\ndata: b\n\n" {
		t.Errorf("clone changed: %q %q %q", kept.Data, kept.ID, kept.Raw)
	}
}

func TestReaderMaxEventSize(t *testing.T) {
	const max = 64
	event := func(n int) string { // an event of exactly n bytes
		return "data: " + strings.Repeat("x", n-len("data: \n\n")) + "\n\n"
	}
	for how, rd := range splitReaders(event(max) + event(max)) {
		res := readAll(t, rd(), Options{MaxEventSize: max})
		if len(res.events) != 2 || res.err != io.EOF {
			t.Errorf("%s: events of exactly the limit: %d events, %v", how, len(res.events), res.err)
		}
	}
	for how, rd := range splitReaders(event(max) + event(max+1)) {
		res := readAll(t, rd(), Options{MaxEventSize: max})
		if len(res.events) != 1 || !errors.Is(res.err, ErrEventTooLarge) {
			t.Errorf("%s: one byte over: %d events, %v", how, len(res.events), res.err)
		}
	}
	// Comment keep-alives count towards the event that follows them.
	flood := strings.Repeat(": keep-alive\n\n", 10) + "data: x\n\n"
	if res := readAll(t, strings.NewReader(flood), Options{MaxEventSize: max}); !errors.Is(res.err, ErrEventTooLarge) {
		t.Errorf("comment flood: %v, want ErrEventTooLarge", res.err)
	}
	if DefaultMaxEventSize != 1<<20 {
		t.Errorf("DefaultMaxEventSize = %d", DefaultMaxEventSize)
	}
}

// endless is a stream that never ends a line.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

func TestReaderBoundedMemory(t *testing.T) {
	for _, max := range []int{0, 1000, 100_000} {
		src := &endless{}
		r := NewReader(io.MultiReader(strings.NewReader("data: "), src), Options{MaxEventSize: max})
		_, err := r.Next()
		if !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("max %d: err = %v, want ErrEventTooLarge", max, err)
		}
		limit := r.max + readSize
		if cap(r.buf) > limit || src.n > limit {
			t.Errorf("max %d: buffer %d bytes after reading %d, want at most %d", r.max, cap(r.buf), src.n, limit)
		}
		if _, err2 := r.Next(); err2 != err {
			t.Errorf("error not sticky: %v then %v", err, err2)
		}
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	rd := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	res := readAll(t, rd, Options{})
	if len(res.events) != 1 || !errors.Is(res.err, boom) {
		t.Errorf("events %q, err %v; want one event and boom", res.events, res.err)
	}
}

// emptyReads returns (0, nil) forever.
type emptyReads struct{}

func (emptyReads) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	_, err := NewReader(emptyReads{}, Options{}).Next()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("err = %v, want io.ErrNoProgress", err)
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\ndata: a\n\n"), Options{MaxEventSize: 100})
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Reset(strings.NewReader("\xEF\xBB\xBFdata: b\n\n"))
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "b" || ev.ID != nil || r.max != 100 {
		t.Errorf("after Reset: %q %q %v max %d", ev.Data, ev.ID, err, r.max)
	}
}

func TestFixturesPassThrough(t *testing.T) {
	for _, name := range fixtureNames(t) {
		in := readFixture(t, name)
		for how, rd := range map[string]io.Reader{
			"whole":   bytes.NewReader(in),
			"onebyte": iotest.OneByteReader(bytes.NewReader(in)),
		} {
			res := readAll(t, rd, Options{})
			if res.err != io.EOF {
				t.Errorf("%s %s: %v", name, how, res.err)
			}
			// A "\n" after the "\r" of the last blank line comes after the
			// last event when the read ends between them.
			if j := res.joined(); j != string(in) && !(j+"\n" == string(in) && strings.HasSuffix(j, "\r")) {
				t.Errorf("%s %s: joined Raw differs from the stream", name, how)
			}
		}
	}
}
