package aierr

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
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
// point into the body and are valid only while it is being classified.
type bodyFields struct {
	json    bool // the body was JSON (so message has JSON escapes)
	isError bool // an error object, "type":"error" or "object":"error" was seen

	// Candidate codes, in the order they are consulted (most specific first).
	innerCode []byte // error.innererror.code (Azure)
	errCode   []byte // error.code when a string (OpenAI, Azure, jobs)
	reason    []byte // error.details[].reason (Gemini ErrorInfo)
	errType   []byte // error.type (OpenAI, Anthropic)
	errStatus []byte // error.status when a string (Gemini)
	topCode   []byte // code at the root (job records, some hosts)
	topType   []byte // type or error_type at the root (vLLM, TGI)
	errString []byte // "error" when a string rather than an object

	errNum int // error.code or root code when a number (Gemini, OpenRouter): a status

	message []byte // the first message found, raw (JSON escapes not decoded)
	msgPrio int    // rank of the field message came from; lower wins

	retryDelay []byte // error.details[].retryDelay (Gemini RetryInfo)
	quotaInfo  bool   // Gemini QuotaFailure violations were present
	perDay     bool   // a quotaId or quota metric said PerDay

	filtered    string // the finish, stop or block reason that said content filter
	finishError bool   // finish_reason "error" (OpenRouter mid-stream)
}

// geminiBlockReasons are Gemini finish reasons that mean the
// safety system stopped the answer.
var geminiBlockReasons = [...]string{
	"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
}

// parseBody walks a JSON body into f. It reports whether the body was JSON.
func (f *bodyFields) parse(body []byte) bool {
	if len(body) > MaxBody {
		body = body[:MaxBody]
	}
	return walkJSON(body, f)
}

// visit is called by the JSON walker for each scalar.
func (f *bodyFields) visit(path, raw []byte, str bool) {
	switch string(path) {
	case "error":
		if str {
			f.isError = true
			f.errString = raw
			f.setMessage(raw, 3)
		}
	case "error.message":
		f.isError = true
		f.setMessage(raw, 0)
	case "error.code":
		f.isError = true
		f.code(&f.errCode, raw, str)
	case "error.type":
		f.isError = true
		if str {
			f.errType = raw
		}
	case "error.status":
		if str {
			f.errStatus = raw
		}
	case "error.innererror.code":
		f.innerCode = raw
	case "error.details.reason":
		f.reason = raw
	case "error.details.retryDelay":
		f.retryDelay = raw
	case "error.details.violations.quotaId", "error.details.violations.quotaMetric":
		f.quotaInfo = true
		if indexFold(raw, "perday") >= 0 {
			f.perDay = true
		}
	case "errors.data.code": // OpenAI batch job errors
		f.isError = true
		f.code(&f.topCode, raw, str)
	case "errors.data.message":
		f.setMessage(raw, 1)
	case "code":
		f.code(&f.topCode, raw, str)
	case "type":
		if str && string(raw) == "error" {
			f.isError = true
		} else if str {
			f.topType = raw
		}
	case "error_type":
		f.isError = true
		f.topType = raw
	case "object":
		if str && string(raw) == "error" {
			f.isError = true
		}
	case "message":
		f.setMessage(raw, 1)
	case "detail":
		f.setMessage(raw, 2)
	case "choices.finish_reason":
		switch string(raw) {
		case "content_filter":
			f.filtered = "content_filter"
		case "error":
			f.finishError = true
		}
	case "candidates.finishReason":
		for _, r := range geminiBlockReasons {
			if string(raw) == r {
				f.filtered = r
			}
		}
	case "promptFeedback.blockReason":
		if str && len(raw) > 0 && string(raw) != "BLOCK_REASON_UNSPECIFIED" {
			f.filtered = "PROMPT_BLOCKED"
		}
	case "stop_reason", "delta.stop_reason", "message.stop_reason":
		if string(raw) == "refusal" { // Anthropic's safety classifiers
			f.filtered = "refusal"
		}
	}
}

// code stores a code field: a string as is, a number as an embedded status.
func (f *bodyFields) code(dst *[]byte, raw []byte, str bool) {
	if str {
		*dst = raw
		return
	}
	if n, ok := atoiStatus(raw); ok && f.errNum == 0 {
		f.errNum = n
	}
}

func (f *bodyFields) setMessage(raw []byte, prio int) {
	if f.message == nil || prio < f.msgPrio {
		f.message, f.msgPrio = raw, prio
	}
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

// decodeMessage decodes a raw JSON string's escapes into at most max bytes,
// cut at a rune boundary, trimmed of surrounding space.
func decodeMessage(raw []byte, max int) string {
	var buf [MaxMessageLen + utf8.UTFMax]byte
	if max > MaxMessageLen {
		max = MaxMessageLen
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return trimmedString(raw, max) // the common case: nothing to decode
	}
	out := buf[:0]
	for len(raw) > 0 && len(out) < max {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			i = len(raw)
		}
		n := min(i, max-len(out))
		out = append(out, raw[:n]...)
		raw = raw[n:]
		if n < i || len(raw) < 2 {
			break
		}
		switch raw[1] {
		case 'n', 'r', 't':
			out = append(out, ' ')
		case 'b', 'f':
		case 'u':
			r, n := decodeU(raw[2:])
			raw = raw[n:]
			out = utf8.AppendRune(out, r)
		default: // \" \\ \/ and anything unknown: the character itself
			out = append(out, raw[1])
		}
		raw = raw[2:]
	}
	return trimmedString(out, max)
}

// decodeU decodes the hex digits after \u (and a following low surrogate),
// returning the rune and how many bytes it consumed.
func decodeU(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return utf8.RuneError, 0
	}
	if utf16.IsSurrogate(r) && len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
		if r2, ok := hex4(b[6:]); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 10
			}
		}
	}
	return r, 4
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
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
