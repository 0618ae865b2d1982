package gateway

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readFull gives what io.ReadAll gives for a body of its Content-Length,
// however the reads are cut, in a buffer exactly as long.
func TestReadFullIsReadAll(t *testing.T) {
	for _, n := range []int{1, 100, firstRead - 1, firstRead, firstRead + 1, 3*firstRead + 7} {
		body := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		for name, r := range map[string]func() io.Reader{
			"whole":     func() io.Reader { return bytes.NewReader(body) },
			"one byte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
			"half":      func() io.Reader { return iotest.HalfReader(bytes.NewReader(body)) },
			"data+EOF":  func() io.Reader { return iotest.DataErrReader(bytes.NewReader(body)) },
			"no errors": func() io.Reader { return io.LimitReader(bytes.NewReader(body), int64(n)) },
		} {
			got, err := readFull(r(), int64(n))
			want, _ := io.ReadAll(r())
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%d bytes, %s: err %v, equal %v", n, name, err, bytes.Equal(got, want))
			}
			if cap(got) != n {
				t.Fatalf("%d bytes, %s: a buffer of %d", n, name, cap(got))
			}
		}
	}
}

// A client that claims a large body and sends a little gets an error, and
// what was allocated follows what it sent, not what it claimed.
func TestReadFullShortBody(t *testing.T) {
	got, err := readFull(bytes.NewReader([]byte("{}")), 1<<30)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if cap(got) > firstRead {
		t.Fatalf("%d bytes held for a 2-byte body claiming 1 GiB", cap(got))
	}
	boom := errors.New("reset")
	if _, err := readFull(iotest.ErrReader(boom), 10); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the reader's", err)
	}
}

// readAnswer gives what io.ReadAll of io.LimitReader gives, whatever the
// answer declares of its length (true, short, long, unknown), however the
// reads are cut and wherever the limit falls; an answer of the length it
// declares is read into one buffer.
func TestReadAnswerIsReadAllOfLimitReader(t *testing.T) {
	for _, n := range []int{0, 1, 300, 511, 512, 513, 5000, firstRead + 3} {
		body := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		for name, r := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return bytes.NewReader(body) },
			"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
			"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(body)) },
			"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(body)) },
		} {
			for _, declared := range []int64{-1, int64(n), int64(n) / 2, int64(n) + 10} {
				for _, limit := range []int64{int64(n) + 1, int64(n), int64(n) / 3, 1 << 30} {
					got, err := readAnswer(r(), declared, limit)
					want, werr := io.ReadAll(io.LimitReader(r(), limit))
					if err != werr || !bytes.Equal(got, want) {
						t.Fatalf("%d bytes, %s, declared %d, limit %d: %d bytes, err %v; io.ReadAll %d, %v",
							n, name, declared, limit, len(got), err, len(want), werr)
					}
				}
			}
		}
	}
	broken := errors.New("connection reset")
	got, err := readAnswer(io.MultiReader(bytes.NewReader([]byte(`{"a":`)), iotest.ErrReader(broken)), 100, 1<<20)
	if !errors.Is(err, broken) || string(got) != `{"a":` {
		t.Fatalf("a reset: %q, %v", got, err)
	}
	answer := bytes.Repeat([]byte("x"), 2000)
	if allocs := testing.AllocsPerRun(50, func() {
		readAnswer(bytes.NewReader(answer), int64(len(answer)), maxBuffered+1)
	}); allocs > 2 { // the buffer, and the bytes.Reader as an io.Reader
		t.Fatalf("an answer of its declared length: %.0f allocations", allocs)
	}
}
