package aierr

import (
	"bytes"
	"math/bits"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/aireq"
)

// MaxBody is how much of a body the classifier reads: 64 KiB. Bytes past it
// are ignored, so a caller need only buffer this prefix of an error body
// (io.LimitReader(resp.Body, aierr.MaxBody)). Error bodies are small; a
// truncated one still yields the fields that came before the cut.
const MaxBody = 64 << 10

// MaxMessageLen caps Verdict.Message, in bytes (cut at a rune boundary).
const MaxMessageLen = 512

// MaxCodeLen caps Verdict.Code, in bytes.
const MaxCodeLen = 64

// maxMessageScan is how much of a message is searched for phrases such as
// "context length" or "try again in".
const maxMessageScan = 1024

// bodyFields is what the classifier takes from a JSON body. The byte slices
// point into the body (or hold a decoded copy of a value with escapes) and
// are valid only while it is being classified.
type bodyFields struct {
	json    bool // the body was JSON (so messages have JSON escapes)
	isError bool // an error object, "type":"error" or "object":"error" was seen

	// Candidate codes, decoded, in the order they are consulted (most
	// specific first).
	amzn      string // the x-amzn-ErrorType header, or an "…Exception" event's name (AWS)
	awsType   []byte // __type at the root (AWS JSON protocols)
	innerCode []byte // error.innererror.code (Azure)
	errCode   []byte // error.code when a string (OpenAI, Azure, jobs)
	reason    []byte // error.details[].reason (Gemini ErrorInfo)
	errType   []byte // error.type (OpenAI, Anthropic)
	errStatus []byte // error.status when a string (Gemini)
	topCode   []byte // code at the root or in errors.data (job records, some hosts)
	topType   []byte // type or error_type at the root (vLLM, TGI)
	errString []byte // "error" when a string rather than an object

	// HTTP statuses given as numeric codes (Gemini, OpenRouter): error.code,
	// and code or statusCode (Azure API Management) at the root or in
	// errors.data.
	errNum, topNum int

	msgs   [numMsgs]aireq.Text // the messages found, by where they came from
	hasMsg uint8               // bit i: msgs[i] was found (numMsgs ≤ 8)

	retryDelay []byte // error.details[].retryDelay (Gemini RetryInfo)
	quotaInfo  bool   // Google quota details (QuotaFailure, ErrorInfo metadata) were present
	perDay     bool   // a quota id, limit or metric said PerDay

	filtered    string // the finish, stop or block reason that said content filter
	finishError bool   // finish_reason "error" (OpenRouter mid-stream)
}

// Where a message may come from; the first found in this order is the
// message.
const (
	msgError       = iota // error.message
	msgJob                // errors.data[].message (OpenAI batch errors)
	msgRoot               // message
	msgAWS                // Message (AWS)
	msgDetail             // detail (FastAPI servers)
	msgErrorString        // error, when a string
	numMsgs
)

func (f *bodyFields) setMessage(from int, s aireq.Text, ok bool) {
	if ok {
		f.msgs[from], f.hasMsg = s, f.hasMsg|1<<from
	} else {
		f.hasMsg &^= 1 << from
	}
}

// message returns the message, raw (JSON escapes not decoded); ok is false
// when there is none.
func (f *bodyFields) message() (m aireq.Text, ok bool) {
	if f.hasMsg == 0 {
		return aireq.Text{}, false
	}
	return f.msgs[bits.TrailingZeros8(f.hasMsg)], true
}

// awsName returns the exception name in an AWS error type, as Smithy's
// protocols define it: what follows the last '#' (a namespace,
// "com.amazon.coral.validate#ValidationException") of what precedes the
// first ':' (a URL, "ThrottlingException:http://internal.amazon.com/…").
func awsName[S ~string | ~[]byte](s S) S {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			s = s[:i]
			break
		}
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '#' {
			return s[i+1:]
		}
	}
	return s
}

// status returns the HTTP status a numeric code gave, error.code first; 0
// if none.
func (f *bodyFields) status() int {
	if f.errNum != 0 {
		return f.errNum
	}
	return f.topNum
}

// parse reads a JSON body into f. It reports whether the body was JSON (an
// object or an array).
func (f *bodyFields) parse(body []byte) bool {
	if len(body) > MaxBody {
		body = body[:MaxBody]
	}
	return readJSON(body, f)
}

// atoiStatus parses a three-digit HTTP status, as a JSON number or string.
func atoiStatus(b []byte) (int, bool) {
	if len(b) != 3 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= 100 && n <= 599
}

// decodeMessage decodes a JSON string into at most max bytes (whole
// characters), trimmed of surrounding space. JSON's white-space escapes
// (\n, \r, \t) read as spaces, \b and \f as nothing.
func decodeMessage(m aireq.Text, max int) string {
	max = min(max, MaxMessageLen)
	raw := m.Raw()
	if bytes.IndexByte(raw, '\\') < 0 {
		return trimmedString(raw, max) // the common case: nothing to decode
	}
	var buf [MaxMessageLen]byte
	n, _ := m.Decode(buf[:max])
	out := buf[:0]
	for _, c := range buf[:n] {
		switch c {
		case '\n', '\r', '\t':
			out = append(out, ' ')
		case '\b', '\f':
		default:
			out = append(out, c)
		}
	}
	return trimmedString(out, max)
}

// trimmedString returns b, cut to max bytes at a rune boundary and trimmed of
// ASCII space, as a string. Invalid UTF-8 is kept as is.
func trimmedString(b []byte, max int) string {
	if len(b) > max {
		n := max
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
	}
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// textMessage picks a message out of a body that is not JSON: an HTML page's
// <title>, or else the first non-empty line.
func textMessage(body []byte) []byte {
	if len(body) > maxMessageScan {
		body = body[:maxMessageScan]
	}
	if i := indexFold(body, "<title>"); i >= 0 {
		t := body[i+len("<title>"):]
		if j := indexFold(t, "</title>"); j >= 0 {
			return t[:j]
		}
	}
	for len(body) > 0 {
		line := body
		rest := []byte(nil)
		for i, c := range body {
			if c == '\n' {
				line, rest = body[:i], body[i+1:]
				break
			}
		}
		for len(line) > 0 && isSpace(line[0]) {
			line = line[1:]
		}
		if len(line) > 0 && line[0] != '<' {
			return line
		}
		body = rest
	}
	return nil
}
