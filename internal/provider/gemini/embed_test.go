package gemini

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/fuseboxhq/fusebox/internal/router"
)

const embedAnswerBody = `{"embeddings":[{"values":[0.25,-1.5,3]},{"values":[1e-7,0,2]}]}`

func TestSendEmbeddings(t *testing.T) {
	var sent []byte
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		if r.URL.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || r.Header.Get("X-Goog-Api-Key") != "k" {
			t.Errorf("sent to %s", r.URL)
		}
		io.WriteString(w, embedAnswerBody)
	})
	send := func(body string) map[string]any {
		resp, err := u.Send(context.Background(), &router.Call{Path: "/embeddings", Key: "k", Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if b := readAll(t, resp); resp.StatusCode != 200 || json.Unmarshal([]byte(b), &out) != nil {
			t.Fatalf("got %d %s", resp.StatusCode, b)
		}
		return out
	}
	out := send(`{"model":"gemini-embedding-001","input":["hello","worlds"],"dimensions":3,"encoding_format":"float"}`)
	sameJSON(t, sent, `{"requests":[{"model":"models/gemini-embedding-001","content":{"role":"user","parts":[{"text":"hello"}]},"outputDimensionality":3},{"model":"models/gemini-embedding-001","content":{"role":"user","parts":[{"text":"worlds"}]},"outputDimensionality":3}]}`)
	want := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,-1.5,3]},{"object":"embedding","index":1,"embedding":[1e-7,0,2]}],"model":"gemini-embedding-001","usage":{"prompt_tokens":3,"total_tokens":3}}`
	got, _ := json.Marshal(out)
	sameJSON(t, got, want)

	// base64 is little-endian float32s, as OpenAI's SDKs decode them.
	resp, err := u.Send(context.Background(), &router.Call{Path: "/embeddings", Key: "k", Body: []byte(`{"model":"gemini-embedding-001","input":["a","b"],"encoding_format":"base64"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(readAll(t, resp)), &list)
	raw, err := base64.StdEncoding.DecodeString(list.Data[0].Embedding)
	if err != nil || len(raw) != 12 {
		t.Fatalf("base64 %q: %v", list.Data[0].Embedding, err)
	}
	var floats []float32
	for i := 0; i < len(raw); i += 4 {
		floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
	}
	if !reflect.DeepEqual(floats, []float32{0.25, -1.5, 3}) {
		t.Errorf("decoded %v", floats)
	}
}

// Google's client writes the same batchEmbedContents request.
func TestGenaiWritesTheSameEmbedRequest(t *testing.T) {
	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, _ = io.ReadAll(r.Body)
		if !strings.HasSuffix(r.URL.Path, "/models/gemini-embedding-001:batchEmbedContents") {
			t.Errorf("genai embeds at %s", r.URL)
		}
		io.WriteString(w, embedAnswerBody)
	}))
	defer srv.Close()
	dims := int32(3)
	if _, err := genaiClient(t, srv).Models.EmbedContent(context.Background(), "gemini-embedding-001",
		[]*genai.Content{genai.NewContentFromText("hello", ""), genai.NewContentFromText("worlds", "")},
		&genai.EmbedContentConfig{OutputDimensionality: &dims}); err != nil {
		t.Fatal(err)
	}
	r, err := translateEmbed([]byte(`{"model":"gemini-embedding-001","input":["hello","worlds"],"dimensions":3}`), "")
	if err != nil {
		t.Fatal(err)
	}
	var ours, theirs any
	json.Unmarshal(r.body, &ours)
	json.Unmarshal(sent, &theirs)
	if !reflect.DeepEqual(ours, theirs) {
		t.Errorf("ours   %s\ngenai's %s", r.body, sent)
	}
}

func TestEmbeddingsRefusedAndUnreadable(t *testing.T) {
	many := `["` + strings.Repeat(`x","`, MaxEmbedInputs) + `x"]`
	for _, c := range []struct{ body, param, code string }{
		{`{"model":"m","input":[[1,2,3]]}`, "input", CodeUnsupportedValue},
		{`{"model":"m","input":[]}`, "input", CodeInvalidValue},
		{`{"model":"m"}`, "input", CodeInvalidValue},
		{`{"model":"m","input":` + many + `}`, "input", CodeUnsupportedValue},
		{`{"model":"m","input":"x","encoding_format":"int8"}`, "encoding_format", CodeUnsupportedValue},
		{`{"model":"m","input":"x","dimensions":0}`, "dimensions", CodeInvalidValue},
		{`{"model":"m","input":"x","Input":"y"}`, "Input", CodeUnsupportedParameter},
	} {
		_, err := translateEmbed([]byte(c.body), "")
		var u *router.Unservable
		if !errors.As(err, &u) || u.Param != c.param || u.Code != c.code {
			t.Errorf("%s: got %v, want %s %s", c.body, err, c.param, c.code)
		}
	}
	r, _ := translateEmbed([]byte(`{"model":"m","input":["a","b","c"]}`), "")
	for _, body := range []string{embedAnswerBody, `nope`, `{"embeddings":{}}`} {
		resp, err := embedAnswer(answer(200, body), &r)
		if err != nil {
			t.Fatal(err)
		}
		if b := readAll(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(b, CodeBadUpstreamResponse) {
			t.Errorf("%s: got %d %s", body, resp.StatusCode, b)
		}
	}
}
