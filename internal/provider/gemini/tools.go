package gemini

import (
	"encoding/json"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// choice translates tool_choice and parallel_tool_calls.
func (t *translator) choice() error {
	var c *functionCallingConfig
	if raw := t.toolChoice; raw != nil {
		var err error
		if c, err = readChoice(raw); err != nil {
			return err
		}
	}
	if len(t.out.Tools) == 0 {
		if c != nil && c.Mode == "ANY" {
			return badValue("tool_choice", CodeInvalidValue, "needs tools")
		}
		return nil
	}
	if t.parallel != nil && !*t.parallel && (c == nil || c.Mode != "NONE") {
		return unsupported("parallel_tool_calls", "Gemini may call several functions at once; omit it or send true")
	}
	if c != nil {
		t.out.ToolConfig = &toolConfig{FunctionCallingConfig: *c}
	}
	return nil
}

func readChoice(raw []byte) (*functionCallingConfig, error) {
	if raw[0] == '"' {
		var mode string
		if err := decode("tool_choice", raw, &mode); err != nil {
			return nil, err
		}
		switch mode {
		case "auto":
			return &functionCallingConfig{Mode: "AUTO"}, nil
		case "none":
			return &functionCallingConfig{Mode: "NONE"}, nil
		case "required":
			return &functionCallingConfig{Mode: "ANY"}, nil
		}
		return nil, badValue("tool_choice", CodeInvalidValue, "unknown mode "+shown(mode))
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := decode("tool_choice", raw, &named); err != nil {
		return nil, err
	}
	switch {
	case named.Type == "function" && named.Function.Name != "":
		return &functionCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{named.Function.Name}}, nil
	case named.Type == "allowed_tools" && named.AllowedTools.Mode == "required":
		c := &functionCallingConfig{Mode: "ANY"}
		for i, tl := range named.AllowedTools.Tools {
			if tl.Type != "function" || tl.Function.Name == "" {
				return nil, badValue(path("tool_choice.allowed_tools.tools", i, "type"), CodeUnsupportedValue, "only named function tools are translated")
			}
			c.AllowedFunctionNames = append(c.AllowedFunctionNames, tl.Function.Name)
		}
		return c, nil
	case named.Type == "allowed_tools":
		return nil, badValue("tool_choice.allowed_tools.mode", CodeUnsupportedValue, "Gemini restricts functions only when one must be called (mode required)")
	}
	return nil, badValue("tool_choice", CodeUnsupportedValue, "only auto, none, required, a named function and allowed_tools are translated")
}

func (t *translator) tools(raw json.RawMessage) error {
	var tools []chatwire.Tool
	if err := decode("tools", raw, &tools); err != nil {
		return err
	}
	if len(tools) == 0 {
		return nil
	}
	decls := make([]functionDeclaration, 0, len(tools))
	for i, tl := range tools {
		if tl.Type != "function" {
			return badValue(path("tools", i, "type"), CodeUnsupportedValue, "only function tools are translated, got "+shown(tl.Type))
		}
		if tl.Function.Name == "" {
			return badValue(path("tools", i, "function.name"), CodeInvalidValue, "is required")
		}
		schema := tl.Function.Parameters
		if isNull(schema) {
			schema = nil
		}
		if len(schema) > 0 && schema[0] != '{' {
			return badValue(path("tools", i, "function.parameters"), CodeInvalidValue, "want a JSON schema object")
		}
		decls = append(decls, functionDeclaration{Name: tl.Function.Name, Description: tl.Function.Description, ParametersJSONSchema: schema})
	}
	t.out.Tools = []toolSet{{FunctionDeclarations: decls}}
	return nil
}

// SkipSignature is the thought signature Google documents for function
// calls that did not come from the model with one (a conversation begun on
// another model, a client that drops extra_content): Gemini 3 refuses a
// model turn whose function calls carry no signature.
const SkipSignature = "skip_thought_signature_validator"

// signCalls gives the first function call of each model turn that has no
// thought signature the documented stand-in.
func (t *translator) signCalls() {
	for i := range t.out.Contents {
		c := &t.out.Contents[i]
		if c.Role != "model" {
			continue
		}
		first := -1
		for j := range c.Parts {
			if c.Parts[j].ThoughtSignature != "" {
				first = -2
				break
			}
			if first == -1 && c.Parts[j].FunctionCall != nil {
				first = j
			}
		}
		if first >= 0 {
			c.Parts[first].ThoughtSignature = SkipSignature
		}
	}
}
