package responses

import "github.com/fuseboxhq/fusebox/aireq"

// builtinTools are the Responses API's tools that OpenAI runs itself.
var builtinTools = []string{
	"web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11",
	"file_search", "code_interpreter", "computer_use_preview", "computer_use", "image_generation",
	"mcp", "local_shell", "shell", "apply_patch", "tool_search",
}

func isBuiltin(typ string) bool {
	for _, b := range builtinTools {
		if typ == b {
			return true
		}
	}
	return false
}

// toolFields are the raw members of a function tool.
type toolFields struct {
	typ, name, description, parameters, strict []byte
}

// readTools translates the tools: function tools to chat function tools;
// any other type is refused, naming it.
func (c *chatRequest) readTools(raw []byte) error {
	if absent(raw) {
		return nil
	}
	if raw[0] != '[' {
		return wrongType("", "an array of tools", raw)
	}
	b := append(make([]byte, 0, len(raw)+64), '[')
	err := elements(raw, func(_ int, el []byte) error {
		var f toolFields
		if el[0] != '{' || !members(el, func(name []byte, _ aireq.Text, v []byte) {
			switch string(name) {
			case "type":
				f.typ = v
			case "name":
				f.name = v
			case "description":
				f.description = v
			case "parameters":
				f.parameters = v
			case "strict":
				f.strict = v
			}
		}) {
			return wrongType("", "an object", el)
		}
		var err error
		b, err = c.appendTool(b, &f)
		return err
	})
	if err != nil {
		return err
	}
	if len(c.toolNames) > 0 {
		c.tools = append(b, ']')
	}
	return nil
}

// appendTool appends one tool in the chat format.
func (c *chatRequest) appendTool(b []byte, f *toolFields) ([]byte, error) {
	typ, err := needString("type", f.typ)
	if err != nil {
		return b, err
	}
	switch {
	case typ == "function":
	case isBuiltin(typ):
		return b, unsupported("type", "the built-in tool "+quote(typ)+" runs on OpenAI's servers and cannot be served through chat completions targets")
	default:
		return b, unsupported("type", "tools of type "+quote(typ)+" cannot be served through chat completions targets; only function tools can")
	}
	name, err := needString("name", f.name)
	if err != nil {
		return b, err
	}
	desc, err := readString("description", f.description)
	if err != nil {
		return b, err
	}
	if !absent(f.parameters) && f.parameters[0] != '{' {
		return b, wrongType("parameters", "an object", f.parameters)
	}
	strict, err := readBool("strict", f.strict, false)
	if err != nil {
		return b, err
	}
	if len(c.toolNames) > 0 {
		b = append(b, ',')
	}
	c.toolNames = append(c.toolNames, name)
	b = append(b, `{"type":"function","function":{`...)
	b = appendStringMember(b, "name", name)
	if desc != "" {
		b = appendStringMember(b, "description", desc)
	}
	if !absent(f.parameters) {
		b = compact(appendKey(b, "parameters"), f.parameters)
	}
	if !absent(f.strict) {
		b = appendBool(b, "strict", strict)
	}
	return append(b, '}', '}'), nil
}

// readToolChoice translates tool_choice: a mode, or a function by name.
// Without tools, "auto" and "none" mean what no choice means and are
// dropped (chat completions refuses a tool_choice without tools).
func (c *chatRequest) readToolChoice(raw []byte) error {
	if absent(raw) {
		return nil
	}
	var name string
	switch raw[0] {
	case '"':
		mode := decodeString(raw)
		switch mode {
		case "auto", "none":
			if len(c.toolNames) > 0 {
				c.toolChoice = appendString(nil, mode)
			}
			return nil
		case "required":
		default:
			return invalid("", "want auto, none, required or a function, got "+quote(mode))
		}
	case '{':
		var typ, fname []byte
		members(raw, func(key []byte, _ aireq.Text, v []byte) {
			switch string(key) {
			case "type":
				typ = v
			case "name":
				fname = v
			}
		})
		t, err := needString("type", typ)
		if err != nil {
			return err
		}
		if t != "function" {
			return unsupported("type", "a tool_choice of type "+quote(t)+" cannot be served through chat completions targets")
		}
		if name, err = needString("name", fname); err != nil {
			return err
		}
	default:
		return wrongType("", "a string or an object", raw)
	}
	if len(c.toolNames) == 0 {
		return invalid("", "needs tools")
	}
	if name == "" {
		c.toolChoice = appendString(nil, "required")
		return nil
	}
	if !c.hasTool(name) {
		return invalid("name", "no function tool is named "+quote(name))
	}
	b := append([]byte(nil), `{"type":"function","function":{"name":`...)
	c.toolChoice = append(appendString(b, name), '}', '}')
	return nil
}

func (c *chatRequest) hasTool(name string) bool {
	for _, n := range c.toolNames {
		if n == name {
			return true
		}
	}
	return false
}
