package geminiapi

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

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
	start := len(b)
	b, err := appendType(b, v[scType], v[scNullable])
	if err != nil {
		return b, err
	}
	for i, raw := range v {
		if raw == nil || i == scType || i == scNullable || i == scPropertyOrdering {
			continue
		}
		if len(b) > start {
			b = append(b, ',')
		}
		if b, err = appendSchemaMember(b, i, raw, depth); err != nil {
			return b, under(err, schemaFields.snake[i])
		}
	}
	return append(b, '}'), nil
}

// appendSchemaMember appends the Schema member i, of value raw, as a
// JSON Schema member.
func appendSchemaMember(b []byte, i int, raw []byte, depth int) ([]byte, error) {
	key := func(name string) {
		b = append(jsontext.AppendString(b, name), ':')
	}
	var err error
	switch i {
	case scFormat, scTitle, scDescription, scPattern, scRef:
		if raw[0] != '"' {
			return b, badValue("", "TYPE_STRING", raw)
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
		if f, err = readFloat(raw); err != nil {
			return b, err
		}
		key(jsonSchemaName[i])
		b = appendNumber(b, raw, f)
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
	return b, err
}

// appendType appends the type member: Google's enum name in lower case,
// with "null" beside it when nullable.
func appendType(b, typ, nullable []byte) ([]byte, error) {
	null := false
	if nullable != nil {
		var err error
		if null, err = readBool(nullable); err != nil {
			return b, under(err, "nullable")
		}
	}
	if typ == nil {
		return b, nil
	}
	if typ[0] != '"' {
		return b, badValue("type", typePrefix+"Type", typ)
	}
	t := schemaType(typ)
	switch {
	case t == "unspecified":
		return b, nil
	case t == "":
		return b, badValue("type", typePrefix+"Type", typ)
	}
	b = append(b, `"type":`...)
	if null && t != "null" {
		b = append(b, `["`...)
		b = append(b, t...)
		return append(b, `","null"]`...), nil
	}
	b = append(append(b, '"'), t...)
	return append(b, '"'), nil
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

// appendSchemaMap appends a map of names to Schemas. A name given twice
// (compared decoded) is refused: decoders differ on which one counts.
func appendSchemaMap(b, raw []byte, depth int) ([]byte, error) {
	if raw[0] != '{' {
		return b, badValue("", "map<string, Schema>", raw)
	}
	b = append(b, '{')
	n := 0
	var err error
	var names [][]byte
	r := aireq.NewReader(raw)
	r.Object(func(k aireq.Text) bool {
		v, ok := r.Value()
		if !ok {
			return false
		}
		name := k.Raw()
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
			name = []byte(k.String())
		}
		for _, seen := range names {
			if bytes.Equal(seen, name) {
				err = &fieldError{kind: errDuplicate, detail: clip(string(name))}
				return false
			}
		}
		names = append(names, name)
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
