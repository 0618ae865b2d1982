package geminiapi

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/fuseboxhq/fusebox/aireq"
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

// The members of a Schema, Google's OpenAPI subset.
var schemaFields = newFields("Schema", "type", "format", "title", "description", "nullable",
	"enum", "maxItems", "minItems", "properties", "required", "minProperties", "maxProperties",
	"minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default",
	"items", "minimum", "maximum", "additionalProperties", "$ref", "$defs")

const (
	scType = iota
	scFormat
	scTitle
	scDescription
	scNullable
	scEnum
	scMaxItems
	scMinItems
	scProperties
	scRequired
	scMinProperties
	scMaxProperties
	scMinLength
	scMaxLength
	scPattern
	scExample
	scAnyOf
	scPropertyOrdering
	scDefault
	scItems
	scMinimum
	scMaximum
	scAdditional
	scRef
	scDefs
	numSchemaFields
)

// jsonSchemaName is the JSON Schema keyword of each Schema member; ""
// for those written otherwise or not at all.
var jsonSchemaName = [numSchemaFields]string{
	scFormat: "format", scTitle: "title", scDescription: "description", scEnum: "enum",
	scMaxItems: "maxItems", scMinItems: "minItems", scRequired: "required",
	scMinProperties: "minProperties", scMaxProperties: "maxProperties", scMinLength: "minLength",
	scMaxLength: "maxLength", scPattern: "pattern", scDefault: "default", scMinimum: "minimum",
	scMaximum: "maximum", scAdditional: "additionalProperties", scRef: "$ref",
}

// appendSchema appends the Schema raw as the JSON Schema it stands for:
// types in lower case ("OBJECT" is "object"), nullable as a "null" type,
// int64 counts given as strings as numbers, example as examples;
// propertyOrdering has no JSON Schema equivalent and is left out.
func appendSchema(b, raw []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, rule("", "the schema nests deeper than 64 levels")
	}
	var v [numSchemaFields][]byte
	if err := eachMember(raw, schemaFields, func(i int, val []byte) error {
		v[i] = val
		return nil
	}); err != nil {
		return b, err
	}
	b = append(b, '{')
	first := true
	key := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsontext.AppendString(b, name)
		b = append(b, ':')
	}
	if err := appendType(&b, key, v[scType], v[scNullable]); err != nil {
		return b, err
	}
	for i, raw := range v {
		if raw == nil {
			continue
		}
		var err error
		switch i {
		case scFormat, scTitle, scDescription, scPattern, scRef:
			if raw[0] != '"' {
				return b, badValue(schemaFields.snake[i], "TYPE_STRING", raw)
			}
			key(jsonSchemaName[i])
			b = appendRawString(b, raw)
		case scEnum, scRequired:
			err = eachElement(raw, "TYPE_STRING", func(_ int, el []byte) error {
				_, err := readString(el)
				return err
			})
			key(jsonSchemaName[i])
			b = compact(b, raw)
		case scMaxItems, scMinItems, scMinProperties, scMaxProperties, scMinLength, scMaxLength, scMinimum, scMaximum:
			var f float64
			if f, err = readFloat(raw); err == nil {
				key(jsonSchemaName[i])
				b = appendNumber(b, raw, f)
			}
		case scExample:
			key("examples")
			b = append(compact(append(b, '['), raw), ']')
		case scDefault, scAdditional:
			key(jsonSchemaName[i])
			b = compact(b, raw)
		case scItems:
			key("items")
			b, err = appendSchema(b, raw, depth+1)
		case scAnyOf:
			key("anyOf")
			b, err = appendSchemaList(b, raw, depth+1)
		case scProperties:
			key("properties")
			b, err = appendSchemaMap(b, raw, depth+1)
		case scDefs:
			key("$defs")
			b, err = appendSchemaMap(b, raw, depth+1)
		}
		if err != nil {
			return b, under(err, schemaFields.snake[i])
		}
	}
	return append(b, '}'), nil
}

// appendType appends the type member: Google's enum name in lower case,
// with "null" beside it when nullable.
func appendType(b *[]byte, key func(string), typ, nullable []byte) error {
	null := false
	if nullable != nil {
		var err error
		if null, err = readBool(nullable); err != nil {
			return under(err, "nullable")
		}
	}
	if typ == nil {
		return nil
	}
	if typ[0] != '"' {
		return badValue("type", typePrefix+"Type", typ)
	}
	t := schemaType(typ)
	switch {
	case t == "unspecified":
		return nil
	case t == "":
		return badValue("type", typePrefix+"Type", typ)
	}
	key("type")
	if null && t != "null" {
		*b = append(*b, `["`...)
		*b = append(*b, t...)
		*b = append(*b, `","null"]`...)
		return nil
	}
	*b = append(*b, '"')
	*b = append(*b, t...)
	*b = append(*b, '"')
	return nil
}

// schemaType returns the JSON Schema type that the raw JSON string raw
// names in Google's enum, in either case ("OBJECT", "object"):
// "unspecified" for TYPE_UNSPECIFIED or "", "" for no type.
func schemaType(raw []byte) string {
	var buf [16]byte
	r := aireq.NewReader(raw)
	t, _ := r.ReadString()
	name := t.Name(buf[:])
	if len(name) > len(buf) {
		return ""
	}
	for _, s := range [...]string{"string", "number", "integer", "boolean", "array", "object", "null"} {
		if bytes.EqualFold(name, []byte(s)) {
			return s
		}
	}
	if len(name) == 0 || bytes.EqualFold(name, []byte("type_unspecified")) {
		return "unspecified"
	}
	return ""
}

// appendSchemaList appends an array of Schemas.
func appendSchemaList(b, raw []byte, depth int) ([]byte, error) {
	b = append(b, '[')
	err := eachElement(raw, (typePrefix + "Schema"), func(i int, el []byte) error {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		b, err = appendSchema(b, el, depth)
		return err
	})
	return append(b, ']'), err
}

// appendSchemaMap appends a map of names to Schemas.
func appendSchemaMap(b, raw []byte, depth int) ([]byte, error) {
	if raw[0] != '{' {
		return b, badValue("", "map<string, Schema>", raw)
	}
	b = append(b, '{')
	n := 0
	var err error
	r := aireq.NewReader(raw)
	r.Object(func(k aireq.Text) bool {
		v, ok := r.Value()
		if !ok {
			return false
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(appendRawString(append(b, '"'), k.Raw()), '"', ':')
		if b, err = appendSchema(b, v, depth); err != nil {
			err = under(err, "["+strconv.Quote(clip(k.String()))+"]")
		}
		return err == nil
	})
	return append(b, '}'), err
}
