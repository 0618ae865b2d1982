package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
)

// Endpoints are the urls a line may have.
var Endpoints = []string{"/v1/chat/completions", "/v1/embeddings", "/v1/messages"}

// Line is one request of a batch, as read from its input.
type Line struct {
	// N is the line's number in its input, from 1.
	N int
	// CustomID is the caller's id for the line, unique in the batch.
	CustomID string
	// URL is the endpoint: one of Endpoints.
	URL string
	// Body is the request body, a JSON object.
	Body []byte
}

// LineError is why a line cannot be run as it is: its number, a code (as in
// OpenAI's batch errors) and a message for people.
type LineError struct {
	N       int
	Code    string
	Message string
}

func (e *LineError) Error() string { return "line " + itoa(e.N) + ": " + e.Message }

// The codes of LineError.
const (
	CodeInvalidJSON     = "invalid_json"
	CodeMissingCustomID = "missing_custom_id"
	CodeDuplicateID     = "duplicate_custom_id"
	CodeInvalidURL      = "invalid_url"
	CodeInvalidMethod   = "invalid_method"
	CodeInvalidBody     = "invalid_body"
	CodeTooLarge        = "line_too_large"
	CodeDuplicateKey    = "duplicate_key"
)

// parseLine reads one input line (without its newline). endpoint, if not
// empty, is the only url allowed (an OpenAI batch has one). Member names
// are compared decoded: a duplicate member, or a case variant of one of the
// four (which encoding/json would read as the same), is refused, so what
// runs is what any reader of the file would see.
func parseLine(n int, text []byte, endpoint string) (Line, *LineError) {
	var l Line
	l.N = n
	bad := func(code, msg string) (Line, *LineError) {
		return Line{N: n, CustomID: l.CustomID}, &LineError{N: n, Code: code, Message: msg}
	}
	var m struct{ id, method, url, body json.RawMessage }
	seen := map[string]bool{}
	var dup string
	ok := aireq.Members(text, func(key, value []byte) bool {
		name := string(key)
		if bytes.IndexByte(key, '\\') >= 0 && json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &name) != nil {
			dup = "an invalid member name"
			return false
		}
		canon := canonical(name)
		if seen[canon] {
			dup = "member " + quote(name) + " twice (or in two spellings)"
			return false
		}
		seen[canon] = true
		if canon != name {
			dup = "member " + quote(name) + "; write it " + quote(canon)
			return false
		}
		switch name {
		case "custom_id":
			m.id = value
		case "method":
			m.method = value
		case "url":
			m.url = value
		case "body":
			m.body = value
		}
		return true
	})
	switch {
	case dup != "":
		return bad(CodeDuplicateKey, "the line has "+dup+".")
	case !ok || !json.Valid(text):
		return bad(CodeInvalidJSON, "the line is not a JSON object.")
	}
	if json.Unmarshal(m.id, &l.CustomID) != nil || l.CustomID == "" {
		return bad(CodeMissingCustomID, "the line has no custom_id string.")
	}
	var method string
	if m.method != nil && (json.Unmarshal(m.method, &method) != nil || method != "POST") {
		return bad(CodeInvalidMethod, "method must be \"POST\".")
	}
	if json.Unmarshal(m.url, &l.URL) != nil || !supported(l.URL) {
		return bad(CodeInvalidURL, "url "+quote(string(m.url))+" is not supported; use one of "+strings.Join(Endpoints, ", ")+".")
	}
	if endpoint != "" && l.URL != endpoint {
		return bad(CodeInvalidURL, "url "+quote(l.URL)+" is not the batch's endpoint "+quote(endpoint)+".")
	}
	if err := checkBody(m.body); err != nil {
		return bad(CodeInvalidBody, err.Error())
	}
	l.Body = bytes.Clone(m.body)
	return l, nil
}

// checkBody accepts a JSON object that asks for no stream.
func checkBody(body []byte) error {
	f := aireq.Scan(body)
	switch {
	case len(body) == 0 || body[0] != '{' || !f.Object:
		return errors.New("body must be a JSON object.")
	case f.Conflict.Reason != "":
		return errors.New("body: " + f.Conflict.String() + ".")
	case f.Stream:
		return errors.New("body asks for a stream; a batch line cannot stream (leave out \"stream\").")
	}
	return nil
}

// members are the line's own member names.
var members = []string{"custom_id", "method", "url", "body"}

// canonical returns the member name that name spells, in any case (with
// Unicode's simple folding, as encoding/json matches), or name itself.
func canonical(name string) string {
	for _, m := range members {
		if strings.EqualFold(name, m) {
			return m
		}
	}
	return name
}

func supported(url string) bool {
	for _, e := range Endpoints {
		if url == e {
			return true
		}
	}
	return false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	if len(b) > 80 {
		return string(b[:77]) + "…\""
	}
	return string(b)
}
