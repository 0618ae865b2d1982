package batch

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// Outcome is how a line ended.
type Outcome struct {
	// Status is the answer's HTTP status; 0 when the line never got one
	// (a bad line, or an answer that never came).
	Status int
	// RequestID is the gateway's X-Request-Id for the answer.
	RequestID string
	// Body is the answer's body (JSON), nil without an answer.
	Body []byte
	// Target is the target that served the line (X-Fusebox-Target).
	Target string
	// Tried lists the targets passed over (X-Fusebox-Tried).
	Tried string
	// Cost is what the answer cost in USD (X-Fusebox-Cost).
	Cost float64
	// TokensIn and TokensOut are the answer's usage.
	TokensIn, TokensOut int
	// Attempts counts the times the line was sent.
	Attempts int
	// Verdict says why a dead-lettered line failed: a LineError code,
	// "client_error", "outage" (retried past the line deadline),
	// "answer_too_large" or "unreadable_answer". "" for a success.
	Verdict string
	// Err is the last error, for people.
	Err string

	left bool // the run stopped before the line ended: not written
}

// ok reports a success.
func (o *Outcome) ok() bool { return o.Verdict == "" }

// appendOutput appends the output line of l (or of the unparsable line raw)
// and its outcome, in OpenAI's batch output format with a "fusebox" member,
// and a newline. A dead letter also carries the verdict, the line number and
// the request, so that its file can be run again.
func appendOutput(b []byte, reqID string, l *Line, raw []byte, o *Outcome) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendString(b, reqID)
	b = append(b, `,"custom_id":`...)
	if l.CustomID == "" {
		b = append(b, "null"...)
	} else {
		b = jsontext.AppendString(b, l.CustomID)
	}
	b = append(b, `,"response":`...)
	if o.Status == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"status_code":`...)
		b = strconv.AppendInt(b, int64(o.Status), 10)
		b = append(b, `,"request_id":`...)
		b = jsontext.AppendString(b, o.RequestID)
		b = append(b, `,"body":`...)
		b = appendJSON(b, o.Body)
		b = append(b, '}')
	}
	b = append(b, `,"error":`...)
	if o.ok() {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		b = jsontext.AppendString(b, o.Verdict)
		b = append(b, `,"message":`...)
		b = jsontext.AppendString(b, o.Err)
		b = append(b, '}')
	}
	b = appendFusebox(b, l, o)
	if !o.ok() {
		b = appendRequest(b, l, raw)
	}
	return append(b, "}\n"...)
}

func appendFusebox(b []byte, l *Line, o *Outcome) []byte {
	b = append(b, `,"fusebox":{"line":`...)
	b = strconv.AppendInt(b, int64(l.N), 10)
	if o.Target != "" {
		b = append(b, `,"target":`...)
		b = jsontext.AppendString(b, o.Target)
	}
	if o.Tried != "" && o.Tried != "none" {
		b = append(b, `,"tried":`...)
		b = jsontext.AppendString(b, o.Tried)
	}
	b = append(b, `,"cost":`...)
	b = strconv.AppendFloat(b, o.Cost, 'f', -1, 64)
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(o.Attempts), 10)
	if !o.ok() {
		b = append(b, `,"verdict":`...)
		b = jsontext.AppendString(b, o.Verdict)
		b = append(b, `,"last_error":`...)
		b = jsontext.AppendString(b, o.Err)
	}
	return append(b, '}')
}

// appendRequest appends the request of a dead letter: the line as it
// would be written again, or, for a line that could not be read, its text.
func appendRequest(b []byte, l *Line, raw []byte) []byte {
	if l.Body == nil {
		b = append(b, `,"raw":`...)
		return jsontext.AppendString(b, raw)
	}
	b = append(b, `,"request":{"custom_id":`...)
	b = jsontext.AppendString(b, l.CustomID)
	b = append(b, `,"method":"POST","url":`...)
	b = jsontext.AppendString(b, l.URL)
	b = append(b, `,"body":`...)
	b = append(b, l.Body...)
	return append(b, '}')
}

// appendJSON appends v if it is valid JSON (compacted when it spans lines,
// so the output stays one line per request), else v as a string.
func appendJSON(b, v []byte) []byte {
	if len(v) == 0 || !json.Valid(v) {
		return jsontext.AppendString(b, v)
	}
	if bytes.IndexAny(v, "\r\n") < 0 {
		return append(b, v...)
	}
	buf := bytes.NewBuffer(b)
	json.Compact(buf, v) // valid, so it cannot fail
	return buf.Bytes()
}
