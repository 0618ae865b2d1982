package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// outputBound is the most output the stream translator may produce for n
// bytes of input: each upstream event yields at most one chunk prefix
// (clipped ID and model, escaped) and its escaped payload.
func outputBound(n int) int { return 64*n + 16<<10 }

// FuzzStream feeds arbitrary bytes to the stream translator as an
// Anthropic event stream: it must not panic, must end, must yield output
// bounded by the input, and must end with [DONE] only after message_stop.
func FuzzStream(f *testing.F) {
	addSeeds(f, "testdata/stream/*.anthropic.sse")
	f.Add([]byte("event: content_block_delta\ndata: {\"delta\":{\"type\":\"text_delta\",\"text\":\"\\u0001\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\"}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, usage := range []bool{false, true} {
			s := newChatStream(io.NopCloser(bytes.NewReader(in)), usage, testCreated)
			var out bytes.Buffer
			buf := make([]byte, 97)
			var err error
			for reads := 0; ; reads++ {
				var n int
				n, err = s.Read(buf)
				out.Write(buf[:n])
				if err != nil {
					break
				}
				if reads > 10*len(in)+1000 || out.Len() > outputBound(len(in)) {
					t.Fatalf("%d reads, %d bytes out of %d in", reads, out.Len(), len(in))
				}
			}
			if out.Len() > outputBound(len(in)) {
				t.Fatalf("%d bytes out of %d in", out.Len(), len(in))
			}
			done := bytes.HasSuffix(out.Bytes(), []byte("data: [DONE]\n\n"))
			if err == io.EOF && !done && !bytes.Contains(out.Bytes(), []byte(`data: {"error":`)) {
				t.Fatalf("clean end without [DONE] or an error event:\n%s", out.Bytes())
			}
			if err != io.EOF && done {
				t.Fatalf("[DONE] then error %v", err)
			}
			if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && len(in) < 1<<20 && !isMalformed(err) {
				t.Fatalf("unexpected error %v", err)
			}
		}
	})
}

func isMalformed(err error) bool {
	return err != nil && bytes.Contains([]byte(err.Error()), []byte("malformed"))
}

// FuzzRequest: any body is translated to valid JSON or refused with a
// RequestError; nothing panics.
func FuzzRequest(f *testing.F) {
	addSeeds(f, "testdata/request/*.openai.json")
	addSeeds(f, "testdata/request/refuse/*.openai.json")
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := translateRequest(in, func(string) int { return 100 })
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if !json.Valid(tr.body) {
			t.Fatalf("invalid JSON %s", tr.body)
		}
	})
}

// FuzzResponse: any body is translated to valid JSON or refused.
func FuzzResponse(f *testing.F) {
	addSeeds(f, "testdata/response/*.anthropic.json")
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := translateResponse(in, testCreated)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}
