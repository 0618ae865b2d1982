package geminiapi

import (
	"slices"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// The members of a Tool, a FunctionDeclaration, a ToolConfig and a
// FunctionCallingConfig.
var (
	toolFields = newFields("Tool", "functionDeclarations", "googleSearch", "googleSearchRetrieval",
		"codeExecution", "urlContext", "retrieval", "computerUse", "fileSearch", "googleMaps",
		"enterpriseWebSearch", "mcpServers")
	declFields = newFields("FunctionDeclaration", "name", "description", "parameters",
		"parametersJsonSchema", "response", "responseJsonSchema", "behavior")
	toolConfigFields = newFields("ToolConfig", "functionCallingConfig", "retrievalConfig",
		"includeServerSideToolInvocations")
	callingFields = newFields("FunctionCallingConfig", "mode", "allowedFunctionNames", "streamFunctionCallArguments")
)

// toolFields writes tools and tool_choice from the request's tools and
// toolConfig.
func (c *converter) toolFields(tools, config []byte) error {
	if config != nil {
		if err := c.toolConfig(config); err != nil {
			return under(err, "tool_config")
		}
	}
	if tools == nil {
		return nil
	}
	start := len(c.b)
	c.b = append(c.b, `,"tools":[`...)
	var names []string
	err := eachElement(tools, (typePrefix + "Tool"), func(_ int, el []byte) error {
		return eachMember(el, toolFields, func(i int, v []byte) error {
			if i != 0 {
				return unsupported(toolFields.snake[i], "the "+toolFields.snake[i]+" tool")
			}
			err := eachElement(v, (typePrefix + "FunctionDeclaration"), func(_ int, d []byte) error {
				name, err := c.declaration(d)
				names = append(names, name)
				return err
			})
			return under(err, "function_declarations")
		})
	})
	if err != nil {
		return under(err, "tools")
	}
	for _, n := range c.allowed {
		if !slices.Contains(names, n) {
			return rule("tool_config.function_calling_config.allowed_function_names",
				"the function "+strconv.Quote(clip(n))+" is not declared in tools")
		}
	}
	if c.tools == 0 {
		c.b = c.b[:start]
		return nil
	}
	c.b = append(c.b, ']')
	switch {
	case c.named:
		c.b = append(c.b, `,"tool_choice":{"type":"function","function":{"name":`...)
		c.b = jsontext.AppendString(c.b, c.choice)
		c.b = append(c.b, "}}"...)
	case c.choice != "":
		c.b = append(c.b, `,"tool_choice":"`...)
		c.b = append(c.b, c.choice...)
		c.b = append(c.b, '"')
	}
	return nil
}

// declaration writes the FunctionDeclaration raw as a function tool,
// unless toolConfig's allowed names leave it out, and returns its name.
func (c *converter) declaration(raw []byte) (string, error) {
	var name string
	var v [7][]byte
	err := eachMember(raw, declFields, func(i int, val []byte) error {
		v[i] = val
		switch i {
		case 0:
			var err error
			name, err = readString(val)
			return under(err, "name")
		case 1, 6:
			_, err := readString(val)
			return under(err, declFields.snake[i])
		}
		if !nestingWithin(val, maxDepth) {
			return rule(declFields.snake[i], "the schema nests deeper than 64 levels")
		}
		return nil
	})
	if err != nil {
		return name, err
	}
	if err := checkName(name); err != nil {
		return name, under(err, "name")
	}
	if v[2] != nil && v[3] != nil {
		return name, rule("parameters", "parameters and parameters_json_schema are mutually exclusive")
	}
	if len(c.allowed) > 0 && !slices.Contains(c.allowed, name) {
		return name, nil
	}
	if c.tools > 0 {
		c.b = append(c.b, ',')
	}
	c.tools++
	c.b = append(c.b, `{"type":"function","function":{"name":`...)
	c.b = jsontext.AppendString(c.b, name)
	if v[1] != nil {
		c.b = appendRawString(append(c.b, `,"description":`...), v[1])
	}
	switch {
	case v[2] != nil:
		c.b = append(c.b, `,"parameters":`...)
		if c.b, err = appendSchema(c.b, v[2], 0); err != nil {
			return name, under(err, "parameters")
		}
	case v[3] != nil:
		if v[3][0] != '{' {
			return name, badValue("parameters_json_schema", "google.protobuf.Value", v[3])
		}
		c.b = compact(append(c.b, `,"parameters":`...), v[3])
	}
	c.b = append(c.b, "}}"...)
	return name, nil
}

// toolConfig reads the ToolConfig raw into the choice and allowed names.
func (c *converter) toolConfig(raw []byte) error {
	var mode string
	err := eachMember(raw, toolConfigFields, func(i int, v []byte) error {
		switch i {
		case 1:
			return nil // retrievalConfig serves the search and maps tools, which are refused
		case 2:
			_, err := readBool(v)
			return under(err, "include_server_side_tool_invocations")
		}
		err := eachMember(v, callingFields, func(j int, w []byte) error {
			var err error
			switch j {
			case 0:
				mode, err = readString(w)
			case 1:
				err = eachElement(w, "TYPE_STRING", func(_ int, el []byte) error {
					n, err := readString(el)
					c.allowed = append(c.allowed, n)
					return err
				})
			case 2:
				_, err = readBool(w)
			}
			return under(err, callingFields.snake[j])
		})
		return under(err, "function_calling_config")
	})
	if err != nil {
		return err
	}
	const at = "function_calling_config.mode"
	switch mode {
	case "", "MODE_UNSPECIFIED", "AUTO", "VALIDATED":
		if len(c.allowed) > 0 && mode != "VALIDATED" {
			return rule("function_calling_config.allowed_function_names", "allowed function names may be given only with mode ANY or VALIDATED")
		}
		c.choice = "auto"
		if mode == "" || mode == "MODE_UNSPECIFIED" {
			c.choice = ""
		}
	case "ANY":
		c.choice = "required"
		if len(c.allowed) == 1 {
			c.choice, c.named = c.allowed[0], true
		}
	case "NONE":
		if len(c.allowed) > 0 {
			return rule("function_calling_config.allowed_function_names", "allowed function names may be given only with mode ANY or VALIDATED")
		}
		c.choice = "none"
	default:
		return badValue(at, (typePrefix + "FunctionCallingConfig.Mode"), []byte(strconv.Quote(mode)))
	}
	return nil
}
