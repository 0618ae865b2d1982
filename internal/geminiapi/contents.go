package geminiapi

import (
	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// The members of a Content and of a Part.
var (
	contentFields = newFields("Content", "role", "parts")
	partFields    = newFields("Part", "text", "inlineData", "fileData", "functionCall",
		"functionResponse", "executableCode", "codeExecutionResult", "thought",
		"thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution", "toolCall",
		"toolResponse", "audioTranscription", "mediaProcessing", "speechMetadata")
)

const (
	ptText = iota
	ptInline
	ptFile
	ptCall
	ptResponse
	ptCode
	ptCodeResult
	ptThought
	ptSignature
	ptVideo
	ptMetadata
	ptResolution
	ptToolCall // this one and those after it are not translated
)

// part is a Part as read: its one data member and whether it is a thought.
type part struct {
	kind    int    // ptText … ptCodeResult
	raw     []byte // the data member's value
	thought bool
}

// readPart reads the Part el.
func readPart(el []byte) (part, error) {
	p := part{kind: -1}
	err := eachMember(el, partFields, func(i int, v []byte) error {
		switch i {
		case ptThought:
			var err error
			p.thought, err = readBool(v)
			return under(err, "thought")
		case ptSignature:
			_, err := readString(v)
			return under(err, "thought_signature")
		case ptVideo, ptMetadata, ptResolution:
			if v[0] != '{' {
				return badValue(partFields.snake[i], msgType(partFields.camel[i]), v)
			}
			return nil
		case ptText:
			if v[0] != '"' {
				return badValue("text", "TYPE_STRING", v)
			}
		}
		if p.kind >= 0 {
			return rule("", "a part must have exactly one data field; this one has "+
				partFields.snake[p.kind]+" and "+partFields.snake[i])
		}
		p.kind, p.raw = i, v
		return nil
	})
	switch {
	case err != nil:
		return p, err
	case p.kind < 0:
		return p, rule("", "a part must have exactly one data field (text, inline_data, file_data, function_call, function_response)")
	case p.kind == ptCode || p.kind == ptCodeResult:
		return p, unsupported(partFields.snake[p.kind], "code execution")
	case p.kind >= ptToolCall:
		return p, unsupported(partFields.snake[p.kind], "a part with "+partFields.snake[p.kind])
	}
	return p, nil
}

// system writes the systemInstruction Content as the system message.
func (c *converter) system(raw []byte) error {
	parts, err := contentParts(raw)
	if err != nil || parts == nil {
		return err
	}
	c.parts = c.parts[:0]
	n := 0
	var single []byte
	err = eachElement(parts, (typePrefix + "Part"), func(i int, el []byte) error {
		p, err := readPart(el)
		if err != nil {
			return err
		}
		if p.kind != ptText {
			return unsupported(partFields.snake[p.kind], "a system instruction other than text")
		}
		c.parts = appendTextPart(c.parts, n, p.raw)
		single = p.raw
		n++
		return nil
	})
	if err != nil || n == 0 {
		return under(err, "parts")
	}
	c.message("system")
	c.writeContent(n, single, true)
	c.b = append(c.b, '}')
	return nil
}

// contentParts reads the Content raw and returns its parts (nil when it
// has none), checking its role.
func contentParts(raw []byte) ([]byte, error) {
	var parts []byte
	err := eachMember(raw, contentFields, func(i int, v []byte) error {
		if i == 1 {
			parts = v
			return nil
		}
		_, err := readString(v)
		return under(err, "role")
	})
	if err == nil && parts != nil && parts[0] != '[' {
		err = badValue("parts", (typePrefix + "Part"), parts)
	}
	if parts != nil && isEmptyArray(parts) {
		parts = nil
	}
	return parts, err
}

// contents writes the messages of the contents array raw.
func (c *converter) contents(raw []byte) error {
	return eachElement(raw, typePrefix+"Content", func(_ int, el []byte) error {
		var role, parts []byte
		err := eachMember(el, contentFields, func(i int, v []byte) error {
			if i == 1 {
				parts = v
			} else if role = v; v[0] != '"' {
				return badValue("role", "TYPE_STRING", v)
			}
			return nil
		})
		switch {
		case err != nil:
			return err
		case parts == nil || isEmptyArray(parts):
			return rule("parts", "contents.parts must not be empty")
		case isText(role, "model"):
			err = c.modelTurn(parts)
		case role == nil || isText(role, "user") || isText(role, "") || isText(role, "function"):
			err = c.userTurn(parts)
		default:
			return rule("role", "Please use a valid role: user, model.")
		}
		return under(err, "parts")
	})
}

// isText reports whether the raw JSON string raw decodes to s.
func isText(raw []byte, s string) bool {
	r := aireq.NewReader(raw)
	t, ok := r.ReadString()
	return ok && t.Is(s)
}

// userTurn writes a user turn: its function responses as tool messages,
// then the rest of its parts as one user message.
func (c *converter) userTurn(parts []byte) error {
	c.parts = c.parts[:0]
	n, texts := 0, 0
	var single []byte
	err := eachElement(parts, (typePrefix + "Part"), func(_ int, el []byte) error {
		p, err := readPart(el)
		if err != nil {
			return err
		}
		switch p.kind {
		case ptText:
			c.parts = appendTextPart(c.parts, n, p.raw)
			single = p.raw
			texts++
		case ptInline:
			c.parts, err = appendInline(c.parts, n, p.raw)
		case ptFile:
			c.parts, err = appendFile(c.parts, n, p.raw)
		case ptResponse:
			return under(c.toolMessage(p.raw), "function_response")
		case ptCall:
			return rule("function_call", "a function call belongs in a turn of role model")
		}
		n++
		return err
	})
	if err != nil || n == 0 {
		return err
	}
	c.message("user")
	c.writeContent(n, single, texts == n)
	c.b = append(c.b, '}')
	return nil
}

// writeContent writes the content member of a message whose n parts are
// in c.parts: the text of a single text part as a string, else the array.
func (c *converter) writeContent(n int, single []byte, allText bool) {
	c.b = append(c.b, `,"content":`...)
	if n == 1 && allText {
		c.b = appendRawString(c.b, single)
		return
	}
	c.b = append(c.b, '[')
	c.b = append(c.b, c.parts...)
	c.b = append(c.b, ']')
}

// appendTextPart appends a chat text part holding the JSON string raw,
// after n parts.
func appendTextPart(b []byte, n int, raw []byte) []byte {
	if n > 0 {
		b = append(b, ',')
	}
	b = append(b, `{"type":"text","text":`...)
	return append(appendRawString(b, raw), '}')
}

// modelTurn writes a model turn as an assistant message: its text as the
// content, its thoughts as reasoning_content, its function calls as
// tool_calls.
func (c *converter) modelTurn(parts []byte) error {
	var text, thoughts joined
	c.parts = c.parts[:0] // the tool calls
	calls := 0
	err := eachElement(parts, (typePrefix + "Part"), func(_ int, el []byte) error {
		p, err := readPart(el)
		if err != nil {
			return err
		}
		switch p.kind {
		case ptText:
			if p.thought {
				thoughts.add(p.raw)
			} else {
				text.add(p.raw)
			}
		case ptCall:
			err = under(c.toolCall(calls, p.raw), "function_call")
			calls++
		case ptResponse:
			err = rule("function_response", "a function response belongs in a turn of role user")
		default:
			err = unsupported(partFields.snake[p.kind], "media in a turn of role model")
		}
		return err
	})
	if err != nil {
		return err
	}
	c.message("assistant")
	c.b = append(c.b, `,"content":`...)
	switch {
	case text.n > 0:
		c.b = text.appendTo(c.b)
	case calls > 0:
		c.b = append(c.b, "null"...)
	default:
		c.b = append(c.b, `""`...)
	}
	if thoughts.n > 0 {
		c.b = thoughts.appendTo(append(c.b, `,"reasoning_content":`...))
	}
	if calls > 0 {
		c.b = append(c.b, `,"tool_calls":[`...)
		c.b = append(c.b, c.parts...)
		c.b = append(c.b, ']')
	}
	c.b = append(c.b, '}')
	return nil
}

// joined is text parts joined into one string: the JSON string of the
// first as the client spelled it, decoded and joined once there are more.
type joined struct {
	first []byte
	buf   []byte
	n     int
}

func (j *joined) add(raw []byte) {
	switch j.n++; j.n {
	case 1:
		j.first = raw
		return
	case 2:
		j.buf = appendDecoded(j.buf, j.first)
	}
	j.buf = appendDecoded(j.buf, raw)
}

func (j *joined) appendTo(b []byte) []byte {
	if j.n == 1 {
		return appendRawString(b, j.first)
	}
	return jsontext.AppendString(b, j.buf)
}

// appendDecoded appends the JSON string raw decoded.
func appendDecoded(b, raw []byte) []byte {
	r := aireq.NewReader(raw)
	t, _ := r.ReadString()
	return append(b, t.Bytes(nil)...)
}
