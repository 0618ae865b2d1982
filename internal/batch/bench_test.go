package batch

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// genLines is an input of n chat lines made as it is read.
type genLines struct {
	n, i int
	buf  []byte
}

func (g *genLines) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.i++
		g.buf = append(g.buf[:0], `{"custom_id":"q`...)
		g.buf = strconv.AppendInt(g.buf, int64(g.i), 10)
		g.buf = append(g.buf, `","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hello there"}]}}`+"\n"...)
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// BenchmarkEngine is the engine's own cost per line: reading, parsing,
// the in-memory request and answer, the output line, the journal and the
// fsyncs, against a handler that answers at once.
func BenchmarkEngine(b *testing.B) {
	for _, c := range []int{1, 64} {
		b.Run("concurrency="+strconv.Itoa(c), func(b *testing.B) {
			b.ReportAllocs()
			r, err := New(Options{Handler: okHandler("0.0001"), Concurrency: c,
				Prepare: func(r *http.Request) { r.Header.Set("Authorization", "Bearer k") }})
			if err != nil {
				b.Fatal(err)
			}
			p := Paths{Out: b.TempDir() + "/out.jsonl", Dead: b.TempDir() + "/dead.jsonl"}
			b.ResetTimer()
			s, err := r.Run(context.Background(), &genLines{n: b.N}, p)
			if err != nil || s.OK != int64(b.N) {
				b.Fatalf("%+v %v", s, err)
			}
		})
	}
}
