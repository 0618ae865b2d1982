package sim

import (
	"encoding/json"
	"math"
	"slices"
)

// typeNames are the types of JSON Schema.
var typeNames = []string{"object", "array", "string", "integer", "number", "boolean", "null"}

// declares reports whether the type keyword t names typ, a known type.
func declares(t any, typ string) bool {
	if !slices.Contains(typeNames, typ) {
		return false
	}
	switch t := t.(type) {
	case string:
		return t == typ
	case []any:
		return slices.Contains(t, any(typ))
	}
	return false
}

// ofType reports whether the decoded value v is of type t (a name or a
// list of names; nil: any type).
func ofType(v, t any) bool {
	var names []any
	switch t := t.(type) {
	case nil:
		return true
	case string:
		names = []any{t}
	case []any:
		names = t
	}
	var is string
	switch x := v.(type) {
	case map[string]any:
		is = "object"
	case []any:
		is = "array"
	case string:
		is = "string"
	case bool:
		is = "boolean"
	case nil:
		is = "null"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && slices.Contains(names, any("integer")) {
			return true
		}
		is = "number"
	}
	return slices.Contains(names, any(is))
}

// typeOf returns the type a value for m takes: its type keyword (the first
// name that is not "null" in a list), else what its keywords imply; at the
// top, "object"; "" for any value.
func typeOf(m map[string]any, top bool) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		name := ""
		for _, v := range t {
			if s, ok := v.(string); ok && (name == "" || name == "null") {
				name = s
			}
		}
		if name != "" {
			return name
		}
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case top || has("properties", "required", "additionalProperties"):
		return "object"
	case has("items", "minItems", "maxItems"):
		return "array"
	case has("minLength", "maxLength", "format"):
		return "string"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return ""
}

// least appends the smallest value of a type, for when a bound is reached.
func least(b []byte, typ string) []byte {
	switch typ {
	case "array":
		return append(b, "[]"...)
	case "string":
		return append(b, `""`...)
	case "integer", "number":
		return append(b, '0')
	case "boolean":
		return append(b, "false"...)
	case "null":
		return append(b, "null"...)
	}
	return append(b, "{}"...)
}
