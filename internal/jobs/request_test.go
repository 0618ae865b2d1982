package jobs

import (
	"bytes"
	"mime/multipart"
	"testing"
)

// multipartBody is a submit as the SDKs send it.
func multipartBody(t testing.TB, fields ...string) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := w.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	fw, _ := w.CreateFormFile("input_reference", "ref.png")
	fw.Write([]byte("\x89PNG fake"))
	w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func TestVideoMultipartSubmit(t *testing.T) {
	body, ct := multipartBody(t, "model", "video", "prompt", "a fox", "seconds", "12")
	b, e := parseBody(ct, body)
	if e != nil || b.model != "video" || b.seconds != 12 {
		t.Fatalf("parse = %+v, %v", b, e)
	}
	out, oct := b.forTarget("sora-2")
	again, e := parseBody(oct, out)
	if e != nil || again.model != "sora-2" || again.seconds != 12 || len(again.parts) != 4 ||
		!bytes.Equal(again.parts[3].data, []byte("\x89PNG fake")) {
		t.Fatalf("the body for the target: %+v, %v", again, e)
	}
	for _, bad := range [][]string{
		{"model", "video", "model", "chat", "prompt", "p"},
		{"model", "video", "MODEL", "chat", "prompt", "p"},
		{"prompt", "p"},
		{"model", "video", "seconds", "x"},
	} {
		body, ct := multipartBody(t, bad...)
		if _, e := parseBody(ct, body); e == nil || e.Status != 400 {
			t.Errorf("%q: %v, want a 400", bad, e)
		}
	}
	if _, e := parseBody("text/plain", []byte("model=video")); e == nil || e.Status != 415 {
		t.Errorf("text/plain: %v, want a 415", e)
	}
}

func FuzzParseBody(f *testing.F) {
	f.Add("application/json", []byte(`{"model":"video","prompt":"p","seconds":"8"}`))
	f.Add("application/json", []byte(`{"model":"video","mod\u0065l":"x"}`))
	f.Add("application/json", []byte(`{"model":"v","n":3,"seconds":4}`))
	body, ct := multipartBody(f, "model", "video", "prompt", "p")
	f.Add(ct, body)
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		b, e := parseBody(ct, body)
		if e != nil {
			if e.Status < 400 || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		out, oct := b.forTarget("target-model")
		again, e := parseBody(oct, out)
		if e != nil || again.model != "target-model" || again.seconds != b.seconds || again.images != b.images {
			t.Fatalf("%q: re-read for the target: %+v %v, want the model replaced and the rest kept", body, again, e)
		}
	})
}

func BenchmarkParseBody(b *testing.B) {
	body := []byte(`{"model":"video","prompt":"a fox running in the snow at dawn, cinematic","seconds":"8","size":"1280x720"}`)
	b.ReportAllocs()
	for b.Loop() {
		sb, e := parseBody("application/json", body)
		if e != nil {
			b.Fatal(e)
		}
		sb.forTarget("sora-2")
	}
}

// A multipart body's digest is its parts', not its boundary's: openai-go
// draws a new boundary for every send, so a resend under the same
// Idempotency-Key must digest the same, and another prompt must not.
func TestMultipartDigestIgnoresTheBoundary(t *testing.T) {
	body := func(boundary, prompt string) (string, []byte) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		w.SetBoundary(boundary)
		w.WriteField("model", "video")
		w.WriteField("prompt", prompt)
		fw, _ := w.CreateFormFile("input_reference", "ref.png")
		fw.Write([]byte("\x89PNG"))
		w.Close()
		return w.FormDataContentType(), b.Bytes()
	}
	digest := func(ct string, raw []byte) [32]byte {
		t.Helper()
		b, e := parseBody(ct, raw)
		if e != nil {
			t.Fatal(e.Message)
		}
		return b.digest(raw)
	}
	ct1, raw1 := body("aaaaaaaaaaaaaaaa", "a fox")
	ct2, raw2 := body("bbbbbbbbbbbbbbbb", "a fox")
	ct3, raw3 := body("cccccccccccccccc", "a cat")
	if digest(ct1, raw1) != digest(ct2, raw2) {
		t.Error("the same parts under another boundary digest differently")
	}
	if digest(ct1, raw1) == digest(ct3, raw3) {
		t.Error("another prompt digests the same")
	}
	j1, j2 := []byte(`{"model":"video","prompt":"a fox"}`), []byte(`{"model":"video","prompt":"a fox" }`)
	if digest("application/json", j1) == digest("application/json", j2) {
		t.Error("a JSON body's digest is not its bytes'")
	}
}
