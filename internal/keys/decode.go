package keys

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// The admin API's bodies are read strictly: encoding/json alone would
// take the last of two "name"s, match "NAME" to name and ignore unknown
// fields, so a body could mean one thing to a reader and another to the
// gateway. Each name must be one of the fields, written exactly, once.

// shape lists an object's fields; a nil shape is any value.
type shape map[string]shape

var (
	limitsShape = shape{"rpm": nil, "tpm": nil}
	budgetShape = shape{"daily": nil, "monthly": nil}
	specShape   = shape{"name": nil, "models": nil, "limits": limitsShape, "budget": budgetShape, "weight": nil}
	patchShape  = shape{"name": nil, "rotate": nil, "models": nil, "limits": limitsShape, "budget": budgetShape, "weight": nil}
)

// DecodeSpec reads a POST /fusebox/keys body.
func DecodeSpec(body []byte) (Spec, error) {
	var s Spec
	if err := decodeStrict(body, specShape, &s); err != nil {
		return Spec{}, err
	}
	return s, s.Check()
}

// DecodePatch reads a PATCH /fusebox/keys/{id} body.
func DecodePatch(body []byte) (Patch, error) {
	var p Patch
	if err := decodeStrict(body, patchShape, &p); err != nil {
		return Patch{}, err
	}
	return p, p.Check()
}

// decodeStrict checks body against sh, then decodes it into v.
func decodeStrict(body []byte, sh shape, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := walk(dec, sh, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &FieldError{"", "the body must be one JSON object, with nothing after it"}
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if strings.HasPrefix(te.Value, "number") { // 1.5 or 1e400 for an int
				return &FieldError{te.Field, "must be a whole number in range"}
			}
			return &FieldError{te.Field, "must be " + kind(te.Type.Kind().String()) + ", not a JSON " + te.Value}
		}
		return &FieldError{"", "the body is not valid JSON"}
	}
	return nil
}

// walk reads one object of shape sh at path from dec.
func walk(dec *json.Decoder, sh shape, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return &FieldError{path, "the body is not valid JSON"}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if path == "" {
			return &FieldError{"", "the body must be a JSON object"}
		}
		return &FieldError{path, "must be an object"}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &FieldError{path, "the body is not valid JSON"}
		}
		name := tok.(string) // an object's keys are strings
		field := strings.TrimPrefix(path+"."+name, ".")
		sub, known := sh[name]
		switch {
		case !known:
			return &FieldError{field, "unknown field (fields: " + fields(sh) + ")"}
		case seen[name]:
			return &FieldError{field, "appears more than once (counting escaped names)"}
		}
		seen[name] = true
		if sub != nil {
			if err := walk(dec, sub, field); err != nil {
				return err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return &FieldError{field, "the body is not valid JSON"}
		}
	}
	if _, err := dec.Token(); err != nil {
		return &FieldError{path, "the body is not valid JSON"}
	}
	return nil
}

// fields lists sh's fields in a fixed order.
func fields(sh shape) string {
	order := []string{"name", "rotate", "models", "limits", "budget", "weight", "rpm", "tpm", "daily", "monthly"}
	var out []string
	for _, f := range order {
		if _, ok := sh[f]; ok {
			out = append(out, f)
		}
	}
	return strings.Join(out, ", ")
}

// kind names a Go kind as JSON does.
func kind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "bool":
		return "true or false"
	case k == "slice":
		return "a list"
	case k == "string":
		return "a string"
	}
	return "an object"
}
