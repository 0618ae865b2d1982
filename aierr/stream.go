package aierr

import "bytes"

// ClassifyEvent classifies one server-sent event of a stream with a zero
// Classifier. See Classifier.ClassifyEvent.
func ClassifyEvent(event string, data []byte) Verdict {
	var c Classifier
	return c.ClassifyEvent(event, data)
}

// ClassifyEvent classifies one server-sent event of a 200 stream: its event
// name ("" when the event had no "event:" line) and its data. Errors that
// arrive inside a stream are found here: Anthropic's "event: error" with
// {"type":"error","error":{"type":"overloaded_error",…}}, OpenRouter's
// data: {"error":{"code":429,…}} chunks (the code is taken as the status),
// and a finish reason that says the answer was cut by a content filter
// (finish_reason "content_filter", Gemini finishReason "SAFETY", Anthropic
// stop_reason "refusal", Bedrock Converse stopReason "guardrail_intervened").
// Ordinary content events and "[DONE]" are Success.
//
// Bedrock's in-stream exceptions are read in either form a provider
// passes them on: as an error whose type or code is the exception's name
// ("throttlingException", "modelStreamErrorException", …; case does not
// matter), or as an event named after the exception with its payload,
// {"message":…}, as data. Throttling is a Throttle; internal server,
// service unavailable, model stream and model timeout errors are an
// Outage; a validation error is a ClientError.
//
// An "error" event whose data is not a known error shape is an Outage,
// and so is an unknown "…Exception" event.
func (c *Classifier) ClassifyEvent(event string, data []byte) Verdict {
	data = bytes.TrimSpace(data)
	if len(data) > MaxBody {
		data = data[:MaxBody]
	}
	if event == "error" || isException(event) {
		var f bodyFields
		msg := c.readBody(data, &f)
		f.isError = true
		if event != "error" {
			f.amzn = event
		}
		return c.bodyError(0, &f, msg)
	}
	if len(data) == 0 || data[0] != '{' && data[0] != '[' {
		return successVerdict(0)
	}
	// Most chunks carry neither an error nor a finish reason, or only a
	// null one ("finish_reason":null in every OpenAI chunk but the last).
	// A key can hide those words only behind a \u escape
	// ("finish_r\u0065ason").
	if !bytes.Contains(data, []byte("rror")) && onlyNullReasons(data) &&
		!bytes.Contains(data, []byte(`\u`)) {
		return successVerdict(0)
	}
	return c.classifyBody(0, data)
}

// onlyNullReasons reports whether every "eason" in data ends a member
// name whose value is null: `eason"`, then a colon and null, with JSON's
// whitespace between. Unescaped, a quote after the word in valid JSON
// closes a key (a string value cannot be followed by a colon), so such a
// chunk has no finish, stop or block reason that says anything. Any other
// "eason" (the word in an answer's text, a reason that is a string) is
// left to the full reading.
func onlyNullReasons(data []byte) bool {
	for {
		i := bytes.Index(data, reasonWord)
		if i < 0 {
			return true
		}
		data = data[i+len(reasonWord):]
		if len(data) == 0 || data[0] != '"' {
			return false
		}
		data = skipSpace(data[1:])
		if len(data) == 0 || data[0] != ':' {
			return false
		}
		data = skipSpace(data[1:])
		if !bytes.HasPrefix(data, nullWord) {
			return false
		}
		data = data[len(nullWord):]
		if len(data) > 0 && data[0] != ',' && data[0] != '}' && data[0] != ']' && !isSpace(data[0]) {
			return false // nullx: not JSON's null
		}
	}
}

var (
	reasonWord = []byte("eason")
	nullWord   = []byte("null")
)

// skipSpace drops JSON's whitespace from the front of b.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// ClassifyFinish classifies a completed, non-stream 200 body with a zero
// Classifier. See Classifier.ClassifyFinish.
func ClassifyFinish(body []byte) Verdict {
	var c Classifier
	return c.ClassifyFinish(body)
}

// ClassifyFinish classifies a completed, non-stream 200 body: an error
// object in it (some gateways answer 200 with {"error":…}) is classified as
// that error, and a finish reason that says content filter (OpenAI
// finish_reason "content_filter", Gemini finishReason "SAFETY" or
// promptFeedback.blockReason, Anthropic stop_reason "refusal", Bedrock
// Converse stopReason "content_filtered" or "guardrail_intervened") gives
// ClientError with sub-kind ContentFilter. Anything else is Success.
func (c *Classifier) ClassifyFinish(body []byte) Verdict {
	return c.classifyBody(http200, body)
}

const http200 = 200

// classifyBody looks for an error object or a content-filter finish reason
// in the body of a successful answer.
func (c *Classifier) classifyBody(status int, body []byte) Verdict {
	if len(body) == 0 {
		return successVerdict(status)
	}
	var f bodyFields
	if !f.parse(body) {
		return successVerdict(status)
	}
	f.json = true
	switch {
	case f.isError:
		m, _ := f.message()
		return c.bodyError(status, &f, m.Raw())
	case f.filtered != "":
		v := Verdict{Kind: ClientError, Sub: ContentFilter, Status: status, Code: f.filtered}
		return c.finish(v, &f)
	case f.finishError:
		v := Verdict{Kind: Outage, Status: status, Code: "error"}
		return c.finish(v, &f)
	}
	return successVerdict(status)
}

// bodyError classifies an error found inside a successful answer or stream.
func (c *Classifier) bodyError(status int, f *bodyFields, msg []byte) Verdict {
	v := c.decide(status, f, msg)
	v.Limits = unknownLimits
	setWait(&v, &headerHints{}, f, msg)
	return v
}

// finish completes a verdict built from a finish reason.
func (c *Classifier) finish(v Verdict, f *bodyFields) Verdict {
	c.override(&v, f)
	v.policy()
	v.Limits = unknownLimits
	if m, ok := f.message(); ok {
		v.Message = decodeMessage(m, MaxMessageLen)
	}
	return v
}

// isException reports whether an event is named like an AWS exception
// ("throttlingException"): an event-stream exception passed on as it came.
func isException(event string) bool {
	const suffix = "Exception"
	return len(event) > len(suffix) && len(event) <= MaxCodeLen && event[len(event)-len(suffix):] == suffix
}

func successVerdict(status int) Verdict {
	return Verdict{Kind: Success, Status: status, Limits: unknownLimits}
}
