package aireq

import "unicode/utf8"

// A Conflict reports a routing field that JSON decoders may read
// differently, so that what the gateway routes, allows and prices could
// differ from what the upstream runs. The zero value means none.
type Conflict struct {
	// Field is the field's canonical name: "model", "stream",
	// "stream_options.include_usage", …; "" for an invalid key that looks
	// like no routing field, and "stream_options" for one inside
	// stream_options.
	Field string
	// Reason is one of the Reason constants; "" when there is no conflict.
	Reason string
}

// The reasons for a Conflict.
const (
	// ReasonDuplicate: the field appears more than once (keys compared
	// after decoding their escapes). Most decoders keep the last, some the
	// first, some refuse.
	ReasonDuplicate = "duplicate"
	// ReasonCaseVariant: a key differs from the field's name only in case
	// ("Model", "MODEL", "ſtream" with U+017F, which folds to s), which
	// encoding/json matches too; or in '_' and '-' as well ("max-Tokens"),
	// which encoding/json/v2 matches when names are case-insensitive.
	ReasonCaseVariant = "case variant"
	// ReasonInvalid: a key, or the model or user value, has invalid UTF-8,
	// a lone surrogate escape (\ud800), an unknown escape or a control
	// byte. encoding/json reads those as U+FFFD, Python keeps a lone
	// surrogate and refuses invalid UTF-8, and lenient decoders drop them
	// ("mod\xffel" may read as "model").
	ReasonInvalid = "invalid string"
	// ReasonType: stream or stream_options.include_usage is not a
	// boolean or null, or max_tokens or max_completion_tokens is not a
	// number or null. Lax validators read "true" or 1 as true and "100" as
	// 100, so the upstream could stream while the gateway expects JSON.
	ReasonType = "wrong type"
)

// String returns "model: duplicate", or "" for no conflict.
func (c Conflict) String() string {
	if c.Field == "" {
		return c.Reason
	}
	return c.Field + ": " + c.Reason
}

// field is a routing or policy field: one whose duplicates, case variants
// and invalid spellings Scan reports.
type field uint8

const (
	noField field = iota
	fieldModel
	fieldStream
	fieldStreamOptions
	fieldN
	fieldMaxTokens
	fieldMaxCompletionTokens
	fieldTools
	fieldToolChoice
	fieldResponseFormat
	fieldUser
	fieldMessages
	fieldInput
	fieldPrompt
	fieldIncludeUsage // inside stream_options, the one nested field read
	numFields
)

var fieldNames = [numFields]string{
	"", "model", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens",
	"tools", "tool_choice", "response_format", "user", "messages", "input", "prompt",
	"stream_options.include_usage",
}

func (f field) String() string { return fieldNames[f] }

// exactField returns the field named k. Inside stream_options (inner)
// only include_usage counts; at the top level everything else.
func exactField(k []byte, inner bool) field {
	if inner {
		if string(k) == "include_usage" {
			return fieldIncludeUsage
		}
		return noField
	}
	switch string(k) {
	case "model":
		return fieldModel
	case "stream":
		return fieldStream
	case "stream_options":
		return fieldStreamOptions
	case "n":
		return fieldN
	case "max_tokens":
		return fieldMaxTokens
	case "max_completion_tokens":
		return fieldMaxCompletionTokens
	case "tools":
		return fieldTools
	case "tool_choice":
		return fieldToolChoice
	case "response_format":
		return fieldResponseFormat
	case "user":
		return fieldUser
	case "messages":
		return fieldMessages
	case "input":
		return fieldInput
	case "prompt":
		return fieldPrompt
	}
	return noField
}

// foldedField returns the field whose folded name (lower case, no '_' or
// '-') is k.
func foldedField(k []byte, inner bool) field {
	if inner {
		if string(k) == "includeusage" {
			return fieldIncludeUsage
		}
		return noField
	}
	switch string(k) {
	case "model":
		return fieldModel
	case "stream":
		return fieldStream
	case "streamoptions":
		return fieldStreamOptions
	case "n":
		return fieldN
	case "maxtokens":
		return fieldMaxTokens
	case "maxcompletiontokens":
		return fieldMaxCompletionTokens
	case "tools":
		return fieldTools
	case "toolchoice":
		return fieldToolChoice
	case "responseformat":
		return fieldResponseFormat
	case "user":
		return fieldUser
	case "messages":
		return fieldMessages
	case "input":
		return fieldInput
	case "prompt":
		return fieldPrompt
	}
	return noField
}

// maxName is the length of the longest field name, folded or not.
const maxName = len("max_completion_tokens")

// folder builds the folded form of a key one character at a time, in a
// fixed buffer: a key that does not fit, or has a character that folds to
// nothing ASCII, is no field's variant.
type folder struct {
	buf  [maxName]byte
	n    int
	none bool // the key cannot fold to a field name
}

func (f *folder) add(r rune) {
	switch {
	case r == '_' || r == '-':
		return
	case 'A' <= r && r <= 'Z':
		r += 'a' - 'A'
	case r == '\u017f': // LATIN SMALL LETTER LONG S folds to s
		r = 's'
	case r == '\u212a': // KELVIN SIGN folds to k
		r = 'k'
	case r >= utf8.RuneSelf:
		f.none = true
		return
	}
	if f.n == len(f.buf) {
		f.none = true
		return
	}
	f.buf[f.n] = byte(r)
	f.n++
}

func (f *folder) field(inner bool) field {
	if f.none {
		return noField
	}
	return foldedField(f.buf[:f.n], inner)
}

// classify reads a key (the content of its string literal, still escaped).
// It returns the field the key names when decoded (exact), or the field it
// is a case variant of (exact false), or noField; valid is false when the
// key is not a valid string, and the field is then what it would name with
// its invalid parts dropped.
func classify(key []byte, inner bool) (f field, exact, valid bool) {
	// The common cases compare the key in place: a field's name (which has
	// no escapes to decode), then any other printable ASCII key.
	if f := exactField(key, inner); f != noField {
		return f, true, true
	}
	var fold folder
	for _, c := range key {
		if !plain(c) {
			return classifyEscaped(key, inner)
		}
		if !fold.none {
			fold.add(rune(c))
		}
	}
	return fold.field(inner), false, true
}

// classifyEscaped is classify for a key with escapes, non-ASCII or
// invalid bytes, decoding it character by character.
func classifyEscaped(key []byte, inner bool) (f field, exact, valid bool) {
	var dec [maxName]byte // the decoded key, if it is short ASCII
	nd, decOK := 0, true
	var fold folder
	valid = true
	for i := 0; i < len(key); {
		r, n, ok := next(key, i)
		i = n
		if !ok {
			valid = false
			if r == utf8.RuneError {
				continue // drop what cannot be read, as a lenient decoder might
			}
		}
		if r < utf8.RuneSelf && nd < len(dec) {
			dec[nd] = byte(r)
			nd++
		} else {
			decOK = false
		}
		fold.add(r)
	}
	if valid && decOK {
		if f := exactField(dec[:nd], inner); f != noField {
			return f, true, true
		}
	}
	return fold.field(inner), false, valid
}
