package aierr

import "github.com/fuseboxhq/fusebox/aireq"

// A JSON body is read in one pass with aireq's lenient Reader, which
// allocates nothing, reads a cut body as far as it goes (a truncated body
// still yields its leading fields) and skips what is not read without
// looking into it. Only the members of the known error shapes are read,
// and they are read as encoding/json would read them:
//
//   - keys match exactly once their escapes are decoded ("c\u006fde" is
//     code, "Code" is not), and so do the values compared ("type":"error");
//     codes and retry delays are decoded;
//   - where a key appears twice in an object the last value counts, of
//     whatever type; where a field appears in several elements of an array
//     (error.details, choices), the last element that has it counts, and a
//     finish or block reason that says content filter counts in any;
//   - arrays are looked through: a body that is an array of error objects
//     (Gemini) is read as its elements, and so is an array where an object
//     is expected.
//
// Nesting is followed to maxJSONDepth levels; deeper values are skipped.

// maxJSONDepth is how many levels of objects and arrays are followed.
const maxJSONDepth = 16

// maxKey is room for the longest key read, decoded: a longer key is none
// of them. The objects with many keys to tell apart are read with a
// switch on the decoded key, the others with Text.Is.
const maxKey = len("promptFeedback")

// geminiBlockReasons are Gemini finish reasons that mean the
// safety system stopped the answer.
var geminiBlockReasons = [...]string{
	"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
}

// bodyReader reads a body into f. (The Reader is apart from it: escape
// analysis does not tell fields apart, and the keys it hands to functions
// would take f to the heap with them.)
type bodyReader struct {
	r     *aireq.Reader
	f     *bodyFields
	depth int
}

// readJSON reads body into f and reports whether it is JSON (an object or
// an array).
func readJSON(body []byte, f *bodyFields) bool {
	r := aireq.NewReader(body)
	b := bodyReader{r: &r, f: f}
	if k := b.r.Kind(); k != aireq.Object && k != aireq.Array {
		return false
	}
	b.each(b.root)
	return true
}

// each calls read for the object at the reader, or for each object in the
// array (of arrays) there; anything else is skipped.
func (b *bodyReader) each(read func()) {
	if b.depth == maxJSONDepth {
		return
	}
	b.depth++
	switch b.r.Kind() {
	case aireq.Object:
		read()
	case aireq.Array:
		b.r.Array(func() bool {
			b.each(read)
			return true
		})
	}
	b.depth--
}

// str reads a string value; nil if the value is not a string.
func (b *bodyReader) str() []byte {
	s, _ := b.r.ReadString()
	return short(s)
}

// short returns a short string (a code, a delay) decoded. A string too
// long to be a code even with every character escaped is kept as it is:
// it matches no code, and is not worth a copy.
func short(s aireq.Text) []byte {
	if len(s.Raw()) > 6*(MaxCodeLen+1) {
		return s.Raw()
	}
	return s.Bytes(nil) // the raw bytes unless s has escapes
}

// code reads a code: a string, or a number that is an HTTP status.
func (b *bodyReader) code(code *[]byte, status *int) {
	*code, *status = nil, 0
	if s, ok := b.r.ReadString(); ok {
		*code = short(s)
	} else if b.r.Kind() == aireq.Number {
		raw, _ := b.r.Value()
		if n, ok := atoiStatus(raw); ok {
			*status = n
		}
	}
}

// root reads a top-level object: an error, a job's errors, or an answer
// whose finish or stop reason may say content filter (OpenAI, Gemini,
// Anthropic, Bedrock Converse).
func (b *bodyReader) root() {
	f := b.f
	var stop, converseStop aireq.Text
	var kb [maxKey]byte
	b.r.Object(func(k aireq.Text) bool {
		switch string(k.Name(kb[:])) {
		case "error":
			s, ok := b.r.ReadString()
			f.errString = short(s)
			f.setMessage(msgErrorString, s, ok)
			if ok {
				f.isError = true
			} else {
				b.each(b.errorObject)
			}
		case "errors":
			b.each(b.jobErrors)
		case "code":
			b.code(&f.topCode, &f.topNum)
		case "statusCode": // Azure API Management: {"statusCode":429,"message":…}
			var none []byte
			b.code(&none, &f.topNum)
		case "__type": // AWS: "com.amazon.coral.service#ThrottlingException"
			if f.awsType = b.str(); f.awsType != nil {
				f.isError = true
			}
		case "type":
			s, _ := b.r.ReadString()
			if f.topType = short(s); s.Is("error") {
				f.isError, f.topType = true, nil
			}
		case "error_type":
			f.isError = true
			f.topType = b.str()
		case "object":
			if s, _ := b.r.ReadString(); s.Is("error") {
				f.isError = true
			}
		case "message":
			s, ok := b.r.ReadString()
			f.setMessage(msgRoot, s, ok)
			if !ok {
				b.each(b.stopReason) // an Anthropic message
			}
		case "Message": // AWS, where the shape says so
			s, ok := b.r.ReadString()
			f.setMessage(msgAWS, s, ok)
		case "detail":
			s, ok := b.r.ReadString()
			f.setMessage(msgDetail, s, ok)
		case "stop_reason":
			stop, _ = b.r.ReadString()
		case "stopReason": // Bedrock Converse
			converseStop, _ = b.r.ReadString()
		case "delta":
			b.each(b.stopReason)
		case "choices":
			b.each(b.choice)
		case "candidates":
			b.each(b.candidate)
		case "promptFeedback":
			b.each(b.promptFeedback)
		}
		return true
	})
	f.refusal(stop)
	for _, r := range converseFilterReasons {
		if converseStop.Is(r) {
			f.filtered = r
		}
	}
}

// converseFilterReasons are Bedrock Converse stop reasons that mean a
// content filter or guardrail stopped the answer.
var converseFilterReasons = [...]string{"content_filtered", "guardrail_intervened"}

// errorObject reads an error object: OpenAI's, Anthropic's, Azure's or
// Gemini's.
func (b *bodyReader) errorObject() {
	f := b.f
	var kb [maxKey]byte
	b.r.Object(func(k aireq.Text) bool {
		switch string(k.Name(kb[:])) {
		case "message":
			f.isError = true
			s, ok := b.r.ReadString()
			f.setMessage(msgError, s, ok)
		case "code":
			f.isError = true
			b.code(&f.errCode, &f.errNum)
		case "type":
			f.isError = true
			f.errType = b.str()
		case "status":
			f.errStatus = b.str()
		case "innererror":
			b.each(b.innerError)
		case "details":
			b.each(b.detail)
		}
		return true
	})
}

// innerError reads Azure's error.innererror.
func (b *bodyReader) innerError() {
	b.r.Object(func(k aireq.Text) bool {
		if k.Is("code") {
			b.f.innerCode = b.str()
		}
		return true
	})
}

// detail reads an element of Google's error.details: ErrorInfo (its
// reason and quota metadata), RetryInfo or QuotaFailure.
func (b *bodyReader) detail() {
	f := b.f
	b.r.Object(func(k aireq.Text) bool {
		switch {
		case k.Is("reason"):
			f.reason = b.str()
		case k.Is("retryDelay"):
			s, ok := b.r.ReadString()
			if f.retryDelay = short(s); !ok && b.r.Kind() == aireq.Number {
				f.retryDelay, _ = b.r.Value() // seconds
			}
		case k.Is("violations"), k.Is("metadata"):
			b.each(b.quota)
		}
		return true
	})
}

// quota reads a QuotaFailure violation (quotaId, quotaMetric) or an
// ErrorInfo's metadata (quota_limit, quota_metric): which quota was hit,
// and whether it is counted per day.
func (b *bodyReader) quota() {
	f := b.f
	var kb [len("quota_metric")]byte
	b.r.Object(func(k aireq.Text) bool {
		switch string(k.Name(kb[:])) {
		case "quotaId", "quotaMetric", "quota_limit", "quota_metric":
			f.quotaInfo = true
			if v := b.str(); indexFold(v, "perday") >= 0 || indexFold(v, "per_day") >= 0 {
				f.perDay = true
			}
		}
		return true
	})
}

// jobErrors reads OpenAI's batch errors: {"object":"list","data":[…]}.
func (b *bodyReader) jobErrors() {
	f := b.f
	b.r.Object(func(k aireq.Text) bool {
		if k.Is("data") {
			b.each(func() {
				b.r.Object(func(k aireq.Text) bool {
					switch {
					case k.Is("code"):
						f.isError = true
						b.code(&f.topCode, &f.topNum)
					case k.Is("message"):
						s, ok := b.r.ReadString()
						f.setMessage(msgJob, s, ok)
					}
					return true
				})
			})
		}
		return true
	})
}

// choice reads an OpenAI choice's finish_reason.
func (b *bodyReader) choice() {
	var reason aireq.Text
	b.r.Object(func(k aireq.Text) bool {
		if k.Is("finish_reason") {
			reason, _ = b.r.ReadString()
		}
		return true
	})
	switch {
	case reason.Is("content_filter"):
		b.f.filtered = "content_filter"
	case reason.Is("error"):
		b.f.finishError = true
	}
}

// candidate reads a Gemini candidate's finishReason.
func (b *bodyReader) candidate() {
	var reason aireq.Text
	b.r.Object(func(k aireq.Text) bool {
		if k.Is("finishReason") {
			reason, _ = b.r.ReadString()
		}
		return true
	})
	for _, r := range geminiBlockReasons {
		if reason.Is(r) {
			b.f.filtered = r
		}
	}
}

// promptFeedback reads Gemini's promptFeedback.blockReason.
func (b *bodyReader) promptFeedback() {
	var reason aireq.Text
	b.r.Object(func(k aireq.Text) bool {
		if k.Is("blockReason") {
			reason, _ = b.r.ReadString()
		}
		return true
	})
	if len(reason.Raw()) > 0 && !reason.Is("BLOCK_REASON_UNSPECIFIED") {
		b.f.filtered = "PROMPT_BLOCKED"
	}
}

// stopReason reads the stop_reason of an Anthropic message or
// message_delta's delta.
func (b *bodyReader) stopReason() {
	var stop aireq.Text
	b.r.Object(func(k aireq.Text) bool {
		if k.Is("stop_reason") {
			stop, _ = b.r.ReadString()
		}
		return true
	})
	b.f.refusal(stop)
}

// refusal notes a stop reason that says Anthropic's safety classifiers
// stopped the answer.
func (f *bodyFields) refusal(stop aireq.Text) {
	if stop.Is("refusal") {
		f.filtered = "refusal"
	}
}
