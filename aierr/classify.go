package aierr

import (
	"net/http"
	"strings"
	"time"
)

// Classifier turns provider answers into Verdicts. The zero Classifier is
// ready to use: no overrides, real time. A Classifier is safe for concurrent
// use as long as its fields are not changed while it is in use.
type Classifier struct {
	// Overrides remaps verdicts for one target, e.g. to count 429 as an
	// Outage. Empty: the built-in rules alone decide.
	Overrides Overrides
	// Now tells the time, for Retry-After dates and RFC 3339 reset headers.
	// nil means time.Now. It is called at most once per classification, and
	// only when a header needs it.
	Now func() time.Time
}

// Overrides maps answers to the Kind an operator wants instead of the
// built-in one. The retry and failover fields of the Verdict follow the new
// Kind. A code override beats a status override.
type Overrides struct {
	// Status maps an HTTP status (or the status an in-stream error carried)
	// to a Kind: {429: Outage} makes throttling trip the breaker.
	Status map[int]Kind
	// Code maps a provider code to a Kind. It is matched exactly against
	// Verdict.Code and the error body's error.code, error.type,
	// error.status, error.innererror.code and details reason, and AWS's
	// exception name (x-amzn-ErrorType or __type, without namespace or
	// URL); for transport errors against the names in Verdict.Code
	// (connect, timeout, …).
	Code map[string]Kind
}

func (c *Classifier) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Classify classifies an HTTP answer with a zero Classifier. See
// Classifier.Classify.
func Classify(status int, header http.Header, body []byte) Verdict {
	var c Classifier
	return c.Classify(status, header, body)
}

// Classify classifies an HTTP answer: its status, headers and body (only the
// first MaxBody bytes are read; a partial body is fine, and nil is fine).
//
// For a 2xx status the body, when given, is checked as ClassifyFinish does:
// an error object or a content-filter finish reason in a 200 is not a
// success. Rate-limit headers fill Verdict.Limits whatever the status.
func (c *Classifier) Classify(status int, header http.Header, body []byte) Verdict {
	if len(body) > MaxBody {
		body = body[:MaxBody]
	}
	clk := lazyNow{c: c}
	var hh headerHints
	c.scanHeaders(header, &hh, &clk)
	if status >= 200 && status < 300 {
		v := c.classifyBody(status, body)
		v.Limits = hh.limits
		if v.Kind != Success && (hh.hasMS || hh.hasAfter) {
			setWait(&v, &hh, nil, nil)
		}
		return v
	}
	var f bodyFields
	msg := c.readBody(body, &f)
	f.amzn = hh.errType
	v := c.decide(status, &f, msg)
	v.Limits = hh.limits
	setWait(&v, &hh, &f, msg)
	return v
}

// readBody parses a non-2xx body into f and returns the raw message: the
// JSON message field, or for a text or HTML body its first line or title.
func (c *Classifier) readBody(body []byte, f *bodyFields) []byte {
	if len(body) == 0 {
		return nil
	}
	if f.parse(body) {
		f.json = true
		m, _ := f.message()
		return m.Raw()
	}
	return textMessage(body)
}

// ClassifyJobError classifies the error record of an asynchronous job (a
// batch line, a queued generation) given its code and message, such as
// "queue_full", "provider_capacity_exceeded" or "runtime_unavailable".
// A record with a code the package does not know is an Outage.
func (c *Classifier) ClassifyJobError(code, message string) Verdict {
	if len(code) > MaxCodeLen {
		code = code[:MaxCodeLen+1] // too long to be known; kept only as an unknown code
	}
	if len(message) > maxMessageScan {
		message = message[:maxMessageScan]
	}
	f := bodyFields{isError: true, errCode: []byte(code)}
	msg := []byte(message)
	v := c.decide(0, &f, msg)
	setWait(&v, &headerHints{limits: unknownLimits}, &f, msg)
	v.Limits = unknownLimits
	return v
}

// ClassifyJobError classifies a job's error record with a zero Classifier.
// See Classifier.ClassifyJobError.
func ClassifyJobError(code, message string) Verdict {
	var c Classifier
	return c.ClassifyJobError(code, message)
}

// decide turns a status and body fields into a Verdict, without wait hints.
// Precedence: a specific code (context_length_exceeded, insufficient_quota,
// queue_full, …) beats the HTTP status, which beats a generic code
// (invalid_request_error, api_error, …); then the message refines
// (context length, content filter, capacity, quota); then overrides apply.
func (c *Classifier) decide(status int, f *bodyFields, msg []byte) Verdict {
	v := Verdict{Status: status}
	if (status == 0 || status == http.StatusOK) && f.status() != 0 {
		status = f.status() // OpenRouter and Gemini errors inside a 200 stream
		v.Status = status
	}
	if (status == 0 || status == http.StatusOK) && f.status() == 0 && len(f.errCode) == 3 {
		if n, ok := atoiStatus(f.errCode); ok { // Azure: "code":"429"
			status = n
			v.Status = status
		}
	}
	// AWS names its exception in a header or __type: it is the most
	// specific code there is. (Copied to the stack to be looked up as the
	// others are; a name longer than a code is none.)
	var ab [MaxCodeLen]byte
	var amzn []byte
	if n := awsName(f.amzn); n != "" && len(n) <= MaxCodeLen {
		amzn = append(ab[:0], n...)
	}
	fields := [...][]byte{amzn, awsName(f.awsType), f.errCode, f.innerCode, f.reason, f.errType, f.errStatus,
		f.topCode, f.topType, f.errString}
	var generic codeInfo
	var codeRaw []byte
	found, decided := false, false
	for _, raw := range fields {
		ci, ok := lookupCode(raw)
		if !ok {
			if codeRaw == nil && len(raw) > 0 && !isNumeric(raw) && isCode(raw) {
				codeRaw = raw
			}
			continue
		}
		if !ci.generic {
			v.Kind, v.Sub, v.Code, decided = ci.kind, ci.sub, ci.name, true
			break
		}
		if !found {
			generic, found = ci, true
		}
	}
	if !decided {
		kind, sub, known := statusKind(status)
		switch {
		case known:
			v.Kind, v.Sub = kind, sub
			if found && generic.kind == kind && generic.sub != NoSub {
				v.Sub = generic.sub
			}
		case found:
			v.Kind, v.Sub = generic.kind, generic.sub
		default:
			v.Kind = kind // Outage: an error of unknown shape and status
		}
		if found {
			v.Code = generic.name
		} else if codeRaw != nil {
			v.Code = string(codeRaw)
		}
	}
	refine(&v, f, msg, decided)
	c.override(&v, f)
	v.policy()
	if len(msg) > 0 {
		if f.json {
			m, _ := f.message()
			v.Message = decodeMessage(m, MaxMessageLen)
		} else {
			v.Message = trimmedString(msg, MaxMessageLen)
		}
	}
	return v
}

// statusKind is the built-in meaning of an HTTP status. known is false for
// statuses that say nothing (0, 1xx, 2xx, 3xx); those give Outage.
func statusKind(status int) (k Kind, sub SubKind, known bool) {
	switch {
	case status == http.StatusUnauthorized:
		return Auth, Unauthenticated, true
	case status == http.StatusForbidden:
		return Auth, PermissionDenied, true
	case status == http.StatusPaymentRequired:
		return Quota, Billing, true
	case status == http.StatusTooManyRequests:
		return Throttle, NoSub, true
	case status == http.StatusRequestTimeout:
		return Outage, Timeout, true
	case status == 499: // client closed request (nginx and some providers)
		return Canceled, NoSub, true
	case status == http.StatusNotFound:
		return ClientError, NotFound, true
	case status == http.StatusRequestEntityTooLarge:
		return ClientError, RequestTooLarge, true
	case status >= 400 && status < 500:
		return ClientError, NoSub, true
	case status == http.StatusGatewayTimeout:
		return Outage, Timeout, true
	case status == 529: // Anthropic: overloaded
		return Outage, Overloaded, true
	case status >= 500 && status < 600:
		return Outage, NoSub, true
	}
	return Outage, NoSub, false
}

// refine adjusts a verdict using the message text and Google's quota
// details, the only clue some servers give. specific says a
// provider-specific code decided the verdict; then the message is searched
// only for what that code leaves open (a per-day window behind
// rate_limit_exceeded, a model the target does not have behind an access
// denial).
func refine(v *Verdict, f *bodyFields, msg []byte, specific bool) {
	var t lowerText
	switch v.Kind {
	case ClientError:
		if v.Sub != NoSub && v.Sub != NotFound || len(msg) == 0 {
			return
		}
		t.set(msg)
		switch {
		case t.has(contextLengthPhrases):
			v.Sub = ContextLength
		case t.has(contentFilterPhrases):
			v.Sub = ContentFilter
		case t.has(notDeployedPhrases):
			v.Sub = NotDeployed
		case t.has(quotaPhrases):
			v.Kind, v.Sub = Quota, Billing
		case t.has(locationPhrases):
			// Google's FAILED_PRECONDITION "User location is not
			// supported": no key of this provider works from here.
			v.Kind, v.Sub = Auth, PermissionDenied
		}
	case Auth:
		// Bedrock's AccessDeniedException "You don't have access to the
		// model with the specified model ID" is about one model on one
		// target, not about the credential.
		if len(msg) > 0 {
			t.set(msg)
			if t.has(notDeployedPhrases) {
				v.Kind, v.Sub = ClientError, NotDeployed
			}
		}
	case Throttle:
		if f.perDay {
			v.Kind, v.Sub = Quota, DailyQuota
			return
		}
		if f.quotaInfo || len(msg) == 0 {
			// Gemini says "You exceeded your current quota" for per-minute
			// limits too; its QuotaFailure details are what tell them apart.
			return
		}
		t.set(msg)
		switch {
		case t.has(dailyPhrases):
			v.Kind, v.Sub = Quota, DailyQuota
		case specific:
		case t.has(quotaPhrases):
			v.Kind, v.Sub = Quota, Billing
		case t.has(capacityPhrases) || t.has(queuePhrases):
			v.Kind = Capacity
		}
	case Outage:
		if !specific && len(msg) > 0 {
			t.set(msg)
			if t.has(capacityPhrases) || t.has(queuePhrases) {
				v.Kind = Capacity
			}
		}
	case Quota:
		if f.perDay {
			v.Sub = DailyQuota
		}
	}
}

// override applies the operator's overrides: a code match first, then the
// status.
func (c *Classifier) override(v *Verdict, f *bodyFields) {
	o := &c.Overrides
	if len(o.Code) > 0 {
		if k, ok := o.Code[v.Code]; ok && v.Code != "" {
			v.Kind = k
			return
		}
		if f != nil {
			if n := awsName(f.amzn); n != "" {
				if k, ok := o.Code[n]; ok {
					v.Kind = k
					return
				}
			}
			for _, raw := range [...][]byte{awsName(f.awsType), f.errCode, f.innerCode, f.reason, f.errType, f.errStatus, f.topCode} {
				if k, ok := o.Code[string(raw)]; ok && len(raw) > 0 {
					v.Kind = k
					return
				}
			}
		}
	}
	if len(o.Status) > 0 && v.Status != 0 {
		if k, ok := o.Status[v.Status]; ok {
			v.Kind = k
		}
	}
}

func isNumeric(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// isCode reports whether an unknown code may become Verdict.Code: 1 to
// MaxCodeLen bytes, each an HTTP token character (RFC 9110 tchar: letters,
// digits and !#$%&'*+-.^_`|~). A code goes into logs, metric labels and
// response headers; anything else (spaces, quotes, control or non-ASCII
// bytes, a sentence) is no code, and the verdict keeps none.
func isCode(b []byte) bool {
	if len(b) == 0 || len(b) > MaxCodeLen {
		return false
	}
	for _, c := range b {
		if !isTokenChar(c) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', isDigit(c):
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
