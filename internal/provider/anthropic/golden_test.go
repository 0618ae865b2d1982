package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const testCreated = 1700000000

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func testUpstream(t testing.TB) *Upstream {
	u, err := New(Config{DefaultMaxTokens: map[string]int{"claude-custom": 1000, "claude-custom-1": 10}})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRequestGolden(t *testing.T) {
	u := testUpstream(t)
	files, _ := filepath.Glob("testdata/request/*.openai.json")
	refuse, _ := filepath.Glob("testdata/request/refuse/*.openai.json")
	if len(files) == 0 || len(refuse) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range append(files, refuse...) {
		name := strings.TrimSuffix(f, ".openai.json")
		wantErr := strings.Contains(f, "/refuse/")
		t.Run(strings.TrimPrefix(name, "testdata/request/"), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := translateRequest(body, u.defaultMaxTokens)
			if wantErr {
				var re *RequestError
				if !errors.As(err, &re) {
					t.Fatalf("translated, want a refusal: %s", tr.body)
				}
				if re.Field == "" || !strings.Contains(re.Message, re.Field) {
					t.Errorf("refusal %+v does not name its field", re)
				}
				resp := requestErrorResponse(re)
				if resp.StatusCode != 400 {
					t.Errorf("status %d, want 400", resp.StatusCode)
				}
				out, _ := io.ReadAll(resp.Body)
				if v := aierr.Classify(resp.StatusCode, resp.Header, out); v.Kind != aierr.ClientError {
					t.Errorf("aierr verdict %v, want ClientError", v.Kind)
				}
				golden(t, name+".error.json", indent(t, out))
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			golden(t, name+".anthropic.json", indent(t, tr.body))
		})
	}
}

func TestResponseGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/response/*.anthropic.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".anthropic.json")
		t.Run(filepath.Base(name), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := translateResponse(body, testCreated)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".openai.json", indent(t, out))
		})
	}
}

// translateStream runs the stream translator over in, reading through r
// (to vary the read sizes), and returns its output with a final read error
// appended as a comment line.
func translateStream(t testing.TB, in []byte, includeUsage bool, wrap func(io.Reader) io.Reader) []byte {
	t.Helper()
	s := newChatStream(io.NopCloser(bytes.NewReader(in)), includeUsage, testCreated)
	out, err := io.ReadAll(wrap(s))
	if err != nil {
		out = append(out, "# read error: "+err.Error()+"\n"...)
	}
	return out
}

func TestStreamGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/stream/*.anthropic.sse")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".anthropic.sse")
		t.Run(filepath.Base(name), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			usage := strings.HasSuffix(name, "_usage")
			out := translateStream(t, in, usage, func(r io.Reader) io.Reader { return r })
			golden(t, name+".openai.sse", out)
			// Byte-at-a-time reads, upstream and downstream, give the same bytes.
			s := newChatStream(io.NopCloser(iotest.OneByteReader(bytes.NewReader(in))), usage, testCreated)
			slow, err := io.ReadAll(iotest.OneByteReader(s))
			if err != nil {
				slow = append(slow, "# read error: "+err.Error()+"\n"...)
			}
			if !bytes.Equal(slow, out) {
				t.Errorf("one-byte reads differ:\n%s", slow)
			}
			checkChunks(t, out)
		})
	}
}

// checkChunks checks the translated stream as the gateway reads it: every
// event is a JSON chunk or [DONE], the first content is recognised by
// sse.HasContent, and [DONE] comes last, only after a finish_reason.
func checkChunks(t *testing.T, out []byte) {
	t.Helper()
	rd := sse.NewReader(bytes.NewReader(out), sse.Options{})
	sawContent, sawFinish, done := false, false, false
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if done {
			t.Errorf("event after [DONE]: %s", ev.Raw)
		}
		if sse.IsDone(ev) {
			done = true
			if !sawFinish {
				t.Error("[DONE] without a finish_reason")
			}
			continue
		}
		if !json.Valid(ev.Data) {
			t.Errorf("event is not JSON: %s", ev.Data)
		}
		if sse.HasContent(ev) {
			sawContent = true
		}
		if bytes.Contains(ev.Data, []byte(`"finish_reason":"`)) {
			sawFinish = true
		}
		if bytes.HasPrefix(ev.Data, []byte(`{"error"`)) {
			if v := aierr.ClassifyEvent(ev.Name, ev.Data); v.Kind == aierr.Success {
				t.Errorf("error event classified as success: %s", ev.Data)
			}
		}
	}
	if done && !sawContent {
		t.Error("a complete stream with no event sse.HasContent recognises")
	}
}
