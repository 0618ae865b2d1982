package aireq

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzScanValidMatchesEncodingJSON checks ScanValid against encoding/json
// and Scan: Valid is exactly json.Valid of a body whose value is an
// object, and on such a body ScanValid reads every field as Scan does. The
// seeds are the reader's syntax cases, each alone and as a member's value,
// and the corpus of FuzzScanMatchesEncodingJSON.
func FuzzScanValidMatchesEncodingJSON(f *testing.F) {
	for _, s := range readerCases {
		f.Add([]byte(s))
		f.Add([]byte(`{"model":"m","messages":` + s + `}`))
		f.Add([]byte(`{"model":` + s + `,"stream":true}`))
	}
	for _, s := range scanCorpus(f) {
		f.Add(s)
	}
	f.Add([]byte(strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)))
	f.Add([]byte(`{"messages":[` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got := ScanValid(body)
		want := json.Valid(body) && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{"))
		if got.Valid != want {
			t.Fatalf("ScanValid(%q).Valid = %v; json.Valid and an object: %v", body, got.Valid, want)
		}
		if !want {
			return
		}
		lenient := Scan(body)
		if lenient.Valid {
			t.Fatalf("Scan(%q) set Valid", body)
		}
		if out, g := got.WithIncludeUsageFields(body); !sameFields(g, ScanValid(out)) {
			t.Fatalf("WithIncludeUsageFields(%q) = %q, %+v; ScanValid reads %+v", body, out, g, ScanValid(out))
		}
		got.Valid = false
		if !sameFields(got, lenient) {
			t.Fatalf("ScanValid(%q) = %+v; Scan %+v", body, got, lenient)
		}
	})
}

// sameFields reports whether a and b read the same fields, from the same
// places.
func sameFields(a, b Fields) bool {
	return bytes.Equal(a.Model, b.Model) && (a.Model == nil) == (b.Model == nil) && a.ModelAt == b.ModelAt &&
		a.Stream == b.Stream && a.IncludeUsage == b.IncludeUsage && a.StreamOptions == b.StreamOptions &&
		a.MaxTokens == b.MaxTokens && bytes.Equal(a.User, b.User) && (a.User == nil) == (b.User == nil) &&
		a.Messages == b.Messages && a.Object == b.Object && a.Valid == b.Valid && a.Conflict == b.Conflict
}

// scanCorpus reads the bodies of FuzzScanMatchesEncodingJSON's corpus.
func scanCorpus(tb testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzScanMatchesEncodingJSON", "*"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus of FuzzScanMatchesEncodingJSON: %v", err)
	}
	var out [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			lit, ok := strings.CutPrefix(line, "[]byte(")
			if !ok {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			out = append(out, []byte(s))
		}
	}
	return out
}

// TestScanValidRefuses checks the invalid bodies a lenient scan reads as
// objects: ScanValid says they are not valid, json.Valid agrees.
func TestScanValidRefuses(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[1,]}`, `{"model":"m","temperature":01}`, `{"model":"m","x":tru}`,
		"{\"model\":\"m\",\"x\":\"a\x01\"}", `{"model":"m","x":"\q"}`, `{"model":"m"} x`,
		`{"model":"m","x":1.}`, `{"model":"m","x":nul}`, `{"model":"m","x":{"a" 1}}`,
	} {
		if !Scan([]byte(body)).Object && !strings.HasSuffix(body, " x") {
			t.Errorf("Scan(%q): not an Object; the case does not test what a lenient scan lets through", body)
		}
		if f := ScanValid([]byte(body)); f.Valid || json.Valid([]byte(body)) {
			t.Errorf("ScanValid(%q).Valid = %v, json.Valid %v; want both false", body, f.Valid, json.Valid([]byte(body)))
		}
	}
	if f := ScanValid([]byte(` {"model":"m","messages":[{"role":"user","content":"h\u00e9"}]} `)); !f.Valid || f.ModelName() != "m" || f.Messages != '[' {
		t.Errorf("a valid body: %+v", f)
	}
}
