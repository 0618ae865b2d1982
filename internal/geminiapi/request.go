package geminiapi

import (
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// The members of a GenerateContentRequest.
var requestFields = newFields("GenerateContentRequest",
	"model", "contents", "systemInstruction", "tools", "toolConfig",
	"safetySettings", "generationConfig", "cachedContent", "labels", "serviceTier", "store",
	"continuationToken", "modelArmorConfig", "outputConfig")

const (
	rqModel = iota
	rqContents
	rqSystem
	rqTools
	rqToolConfig
	rqSafety
	rqGeneration
	rqCached
	rqLabels
	rqServiceTier
	rqStore
	rqContinuation
	rqModelArmor
	rqOutput
	numRequestFields
)

// ToChat turns a GenerateContentRequest body into an OpenAI chat body for
// model; stream sets "stream": true with stream_options.include_usage.
// Refusals are *Error (400 INVALID_ARGUMENT naming the field as Google
// would, e.g. "contents[2].parts[0]"). doc.go has the mapping.
func ToChat(model string, body []byte, stream bool) ([]byte, error) {
	var c converter
	if err := c.request(model, body, stream, false); err != nil {
		return nil, public(err, "GenerateContentRequest")
	}
	return c.b, nil
}

// converter holds a translation in progress: the chat body being written
// and what later parts of the request need from earlier ones.
type converter struct {
	b    []byte // the chat body
	msgs int    // messages written

	calls   int           // function calls seen, for the ids of those without one
	pending []pendingCall // function calls not yet answered, in order

	parts   []byte   // scratch: a user turn's content parts
	scratch []byte   // scratch: a value being encoded as a JSON string
	allowed []string // toolConfig's allowedFunctionNames
	choice  string   // the chat tool_choice: "", "auto", "none", "required" or a function's name (named)
	named   bool     // choice names a function
	tools   int      // function tools written
}

// pendingCall is a function call of the model's that no function response
// has answered yet.
type pendingCall struct{ name, id string }

// request translates the GenerateContentRequest body; count asks for a
// request whose prompt is counted, not answered (CountTokensToChat).
func (c *converter) request(model string, body []byte, stream, count bool) error {
	if !validDocument(body) {
		return &fieldError{kind: errSyntax, detail: "The request body must be one JSON object."}
	}
	var v [numRequestFields][]byte
	if err := eachMember(body, requestFields, func(i int, raw []byte) error {
		v[i] = raw
		return nil
	}); err != nil {
		return err
	}
	return c.fields(model, &v, stream, count)
}

// fields translates the members of a request, in a fixed order: the
// first error found is the same whatever the body's order.
func (c *converter) fields(model string, v *[numRequestFields][]byte, stream, count bool) error {
	if v[rqCached] != nil {
		return unsupported("cached_content", "cached content")
	}
	for _, i := range [...]int{rqContinuation, rqModelArmor, rqOutput} {
		if v[i] != nil {
			return unsupported(requestFields.snake[i], requestFields.snake[i])
		}
	}
	if err := checkIgnored(v); err != nil {
		return err
	}
	if v[rqContents] == nil || isEmptyArray(v[rqContents]) {
		return rule("contents", "contents is not specified")
	}
	c.b = make([]byte, 0, len(v[rqContents])+len(v[rqSystem])+len(v[rqTools])+len(v[rqGeneration])+512)
	c.b = append(c.b, `{"model":`...)
	c.b = jsontext.AppendString(c.b, model)
	c.b = append(c.b, `,"messages":[`...)
	if v[rqSystem] != nil {
		if err := c.system(v[rqSystem]); err != nil {
			return under(err, "system_instruction")
		}
	}
	if err := c.contents(v[rqContents]); err != nil {
		return under(err, "contents")
	}
	c.b = append(c.b, ']')
	if err := c.toolFields(v[rqTools], v[rqToolConfig]); err != nil {
		return err
	}
	if count {
		c.b = append(c.b, `,"max_completion_tokens":1`...)
	} else if v[rqGeneration] != nil {
		if err := c.generation(v[rqGeneration]); err != nil {
			return under(err, "generation_config")
		}
	}
	if stream && !count {
		c.b = append(c.b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	c.b = append(c.b, '}')
	return nil
}

// checkIgnored checks the members that are read but not translated:
// model (the path names it), serviceTier (a price and latency class),
// store, labels (Vertex billing labels) and safetySettings (chat targets
// have their own filters, which report as content_filter).
func checkIgnored(v *[numRequestFields][]byte) error {
	for _, i := range [...]int{rqModel, rqServiceTier} {
		if raw := v[i]; raw != nil {
			if _, err := readString(raw); err != nil {
				return under(err, requestFields.snake[i])
			}
		}
	}
	if raw := v[rqStore]; raw != nil {
		if _, err := readBool(raw); err != nil {
			return under(err, "store")
		}
	}
	if raw := v[rqLabels]; raw != nil && raw[0] != '{' {
		return badValue("labels", "map<string, string>", raw)
	}
	if raw := v[rqSafety]; raw != nil {
		err := eachElement(raw, (typePrefix + "SafetySetting"), func(_ int, el []byte) error {
			return eachMember(el, safetyFields, func(i int, s []byte) error {
				_, err := readString(s)
				return under(err, safetyFields.snake[i])
			})
		})
		return under(err, "safety_settings")
	}
	return nil
}

// The members of a SafetySetting; all are enums, read as strings.
var safetyFields = newFields("SafetySetting", "category", "threshold", "method")

// isEmptyArray reports whether raw is the array [].
func isEmptyArray(raw []byte) bool {
	if raw[0] != '[' {
		return false
	}
	for _, c := range raw[1:] {
		switch c {
		case ' ', '\t', '\n', '\r':
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}

// message starts a chat message with its role.
func (c *converter) message(role string) {
	if c.msgs > 0 {
		c.b = append(c.b, ',')
	}
	c.msgs++
	c.b = append(c.b, `{"role":"`...)
	c.b = append(c.b, role...)
	c.b = append(c.b, '"')
}
