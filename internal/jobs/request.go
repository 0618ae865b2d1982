package jobs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// maxSeconds bounds the video length a submit may ask for.
const maxSeconds = 600

// submitBody is a client's submit, read as its upstream will read it: by
// decoded key names, with duplicates and case variants of the fields the
// gateway routes and prices by refused, so that what is routed and priced
// is what runs.
type submitBody struct {
	model   string
	seconds int // 0: not given
	images  int // the images asked for (n); 1 when not given
	fields  map[string]json.RawMessage
	parts   []part // a multipart body; nil for JSON
}

// part is one part of a multipart body.
type part struct {
	name   string
	header textproto.MIMEHeader
	data   []byte
}

// routing are the fields read by decoded name; a case variant of one is
// refused, since a case-insensitive decoder would read it as the field.
var routing = []string{"model", "seconds", "n"}

// parseBody reads a submit body of content type ct.
func parseBody(ct string, body []byte) (*submitBody, *apiError) {
	mt, params, _ := mime.ParseMediaType(ct)
	if mt == "multipart/form-data" {
		return parseMultipart(body, params["boundary"])
	}
	if mt != "" && mt != "application/json" {
		return nil, errorf(http.StatusUnsupportedMediaType, "invalid_request_error", "", "",
			"Unsupported Content-Type "+strconv.Quote(mt)+": send application/json or multipart/form-data.")
	}
	return parseJSON(body)
}

// parseJSON reads a JSON object's members by their decoded names.
func parseJSON(body []byte) (*submitBody, *apiError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, badRequest("", "The request body must be a JSON object.")
	}
	b := &submitBody{fields: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badRequest("", "We could not parse the JSON body of your request.")
		}
		key := tok.(string)
		if e := b.checkName(key); e != nil {
			return nil, e
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, badRequest("", "We could not parse the JSON body of your request.")
		}
		b.fields[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, badRequest("", "We could not parse the JSON body of your request.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("", "The request body must hold one JSON object and nothing after it.")
	}
	return b, b.read(func(name string) (string, bool, bool) {
		raw, ok := b.fields[name]
		if !ok || string(raw) == "null" {
			return "", false, true
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true, true
		}
		if name != "model" && len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			return string(raw), true, true
		}
		return "", true, false
	})
}

// checkName refuses a second member of one name, and case variants of
// the routing fields.
func (b *submitBody) checkName(key string) *apiError {
	if _, dup := b.fields[key]; dup {
		return badRequest(key, "The field "+strconv.Quote(key)+" is set twice.")
	}
	for _, r := range routing {
		if key != r && strings.EqualFold(key, r) {
			return badRequest(key, "Unknown field "+strconv.Quote(key)+"; did you mean "+strconv.Quote(r)+"?")
		}
	}
	return nil
}

// read reads the routing fields through get, which returns a field's text,
// whether it is present and whether it is of a usable type.
func (b *submitBody) read(get func(name string) (string, bool, bool)) *apiError {
	m, present, ok := get("model")
	switch {
	case !ok:
		return badRequest("model", "'model' must be a string.")
	case !present || m == "":
		return badRequest("model", "You must provide a model parameter.")
	}
	b.model = m
	if s, present, ok := get("seconds"); present {
		n, err := strconv.Atoi(s)
		if !ok || err != nil || n < 1 || n > maxSeconds {
			return badRequest("seconds", "'seconds' must be a whole number from 1 to "+strconv.Itoa(maxSeconds)+".")
		}
		b.seconds = n
	}
	b.images = 1
	if s, present, ok := get("n"); present {
		n, err := strconv.Atoi(s)
		if !ok || err != nil || n < 1 || n > 10 {
			return badRequest("n", "'n' must be a whole number from 1 to 10.")
		}
		b.images = n
	}
	return nil
}

// parseMultipart reads a multipart/form-data body: text fields by name,
// files kept as they are.
func parseMultipart(body []byte, boundary string) (*submitBody, *apiError) {
	if boundary == "" {
		return nil, badRequest("", "The multipart body has no boundary.")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	b := &submitBody{fields: map[string]json.RawMessage{}}
	text := map[string]string{}
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, badRequest("", "We could not parse the multipart body of your request.")
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, badRequest("", "We could not parse the multipart body of your request.")
		}
		name := p.FormName()
		if p.FileName() == "" {
			if _, dup := text[name]; dup {
				return nil, badRequest(name, "The field "+strconv.Quote(name)+" is set twice.")
			}
			if e := b.checkName(name); e != nil {
				return nil, e
			}
			text[name] = string(data)
			b.fields[name] = nil
		}
		b.parts = append(b.parts, part{name: name, header: p.Header, data: data})
	}
	return b, b.read(func(name string) (string, bool, bool) {
		v, ok := text[name]
		return v, ok, true
	})
}

// digest identifies the request a body makes, for the Idempotency-Key
// rule (the same key with another body is a 422): a JSON body's bytes, a
// multipart body's parts (name, file name, type and bytes, in order)
// without its boundary, which a client such as openai-go draws anew for
// every send, a resend included.
func (b *submitBody) digest(raw []byte) [32]byte {
	if b.parts == nil {
		return sha256.Sum256(raw)
	}
	h := sha256.New()
	for _, p := range b.parts {
		for _, f := range []string{p.name, fileName(p.header), p.header.Get("Content-Type"), string(p.data)} {
			var n [8]byte
			binary.BigEndian.PutUint64(n[:], uint64(len(f)))
			h.Write(n[:])
			io.WriteString(h, f)
		}
	}
	return [32]byte(h.Sum(nil))
}

// fileName is a part's file name, from its Content-Disposition.
func fileName(h textproto.MIMEHeader) string {
	_, params, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	return params["filename"]
}

// forTarget returns the body to send to a target whose model is model: the
// client's, with its model replaced.
func (b *submitBody) forTarget(model string) (body []byte, contentType string) {
	if b.parts == nil {
		f := maps.Clone(b.fields)
		f["model"], _ = json.Marshal(model)
		data, _ := json.Marshal(f) // raw values that decoded always marshal
		return data, "application/json"
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range b.parts {
		w, _ := mw.CreatePart(p.header) // writes to a buffer: no error
		if p.name == "model" && p.header.Get("Content-Disposition") != "" && !strings.Contains(p.header.Get("Content-Disposition"), "filename") {
			io.WriteString(w, model)
			continue
		}
		w.Write(p.data)
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// estimateSeconds is the length a submit is priced at before it is known:
// what it asked for, or the API's default.
func (b *submitBody) estimateSeconds() int {
	if b.seconds > 0 {
		return b.seconds
	}
	return defaultSeconds
}

// defaultSeconds is the video length a submit that gives none gets, as
// OpenAI's API does.
const defaultSeconds = 4
