package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// validator checks a value against a JSON Schema, for the subset of
// keywords generate follows; a schema with any other constraining keyword
// is unsupported, and its values are not checked.
type validator struct {
	root        any
	unsupported bool
}

// checked lists the keywords the validator knows: annotations, and the
// constraints it checks.
var checked = []string{
	"title", "description", "default", "examples", "$defs", "definitions", "$schema", "$id", "$comment",
	"format", "strict", "name", "deprecated", "readOnly", "writeOnly",
	"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
	"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "anyOf", "$ref",
}

// validate decodes doc and checks it against schema.
func validate(doc []byte, schema any) (err error, supported bool) {
	v, err := decodeSchema(doc)
	if err != nil {
		return fmt.Errorf("not JSON: %v: %s", err, doc), true
	}
	c := validator{root: schema}
	err = c.check(v, schema, "$", 0)
	return err, !c.unsupported
}

func (c *validator) check(v, schema any, at string, depth int) error {
	if depth > 64 {
		c.unsupported = true
		return nil
	}
	if b, ok := schema.(bool); ok {
		if !b {
			return fmt.Errorf("%s: schema false accepts nothing", at)
		}
		return nil
	}
	m, ok := schema.(map[string]any)
	if !ok {
		c.unsupported = true
		return nil
	}
	for k := range m {
		if !slices.Contains(checked, k) {
			c.unsupported = true
		}
	}
	if ref, ok := m["$ref"].(string); ok {
		g := valueGen{root: c.root}
		target, found := g.resolve(ref)
		if !found {
			c.unsupported = true
			return nil
		}
		if err := c.check(v, target, at, depth+1); err != nil {
			return err
		}
	}
	if alts, ok := m["anyOf"].([]any); ok {
		var errs []string
		for _, alt := range alts {
			err := c.check(v, alt, at, depth+1)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err.Error())
		}
		if errs != nil {
			return fmt.Errorf("%s: no anyOf branch matches: %s", at, strings.Join(errs, "; "))
		}
	}
	if e, ok := m["const"]; ok && !sameJSON(e, v) {
		return fmt.Errorf("%s: %v is not the const %v", at, v, e)
	}
	if e, ok := m["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return sameJSON(x, v) }) {
		return fmt.Errorf("%s: %v is not in the enum %v", at, v, e)
	}
	if t, ok := m["type"]; ok && !hasType(v, t) {
		return fmt.Errorf("%s: %v (%T) is not of type %v", at, v, v, t)
	}
	switch x := v.(type) {
	case map[string]any:
		return c.checkObject(x, m, at, depth)
	case []any:
		return c.checkArray(x, m, at, depth)
	case string:
		n := float64(utf8.RuneCountInString(x))
		if lo, ok := number(m["minLength"]); ok && n < lo {
			return fmt.Errorf("%s: %q is shorter than %v", at, x, lo)
		}
		if hi, ok := number(m["maxLength"]); ok && n > hi {
			return fmt.Errorf("%s: %q is longer than %v", at, x, hi)
		}
	case json.Number:
		f, _ := x.Float64()
		lo, hasLo := number(m["minimum"])
		hi, hasHi := number(m["maximum"])
		xlo, hasXlo := number(m["exclusiveMinimum"])
		xhi, hasXhi := number(m["exclusiveMaximum"])
		if (hasLo && f < lo) || (hasHi && f > hi) || (hasXlo && f <= xlo) || (hasXhi && f >= xhi) {
			return fmt.Errorf("%s: %v is out of range in %v", at, f, m)
		}
	}
	return nil
}

func (c *validator) checkObject(x map[string]any, m map[string]any, at string, depth int) error {
	props, _ := m["properties"].(map[string]any)
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, _ := r.(string); name != "" {
				if _, ok := x[name]; !ok {
					return fmt.Errorf("%s: required %q is missing", at, name)
				}
			}
		}
	}
	for k, val := range x {
		if ps, ok := props[k]; ok {
			if err := c.check(val, ps, at+"."+k, depth+1); err != nil {
				return err
			}
		} else if extra, ok := m["additionalProperties"]; ok {
			if err := c.check(val, extra, at+"."+k, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *validator) checkArray(x []any, m map[string]any, at string, depth int) error {
	n := float64(len(x))
	if lo, ok := number(m["minItems"]); ok && n < lo {
		return fmt.Errorf("%s: %d items, want at least %v", at, len(x), lo)
	}
	if hi, ok := number(m["maxItems"]); ok && n > hi {
		return fmt.Errorf("%s: %d items, want at most %v", at, len(x), hi)
	}
	if items, ok := m["items"]; ok {
		for i, it := range x {
			if err := c.check(it, items, fmt.Sprintf("%s[%d]", at, i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasType(v, t any) bool {
	switch t := t.(type) {
	case string:
		return isType(v, t)
	case []any:
		for _, name := range t {
			if s, ok := name.(string); ok && isType(v, s) {
				return true
			}
		}
	}
	return false
}

func isType(v any, t string) bool {
	switch x := v.(type) {
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		f, err := x.Float64()
		return t == "number" || (t == "integer" && err == nil && f == math.Trunc(f))
	}
	return false
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func mustSchema(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeSchema([]byte(s))
	if err != nil {
		t.Fatalf("bad test schema %s: %v", s, err)
	}
	return v
}

// schemas the generator follows exactly, for many seeds.
var exactSchemas = []string{
	`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","unit"]}`,
	`{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"address":{"type":"object","properties":{"zip":{"type":"string","minLength":5,"maxLength":5}},"required":["zip"]}},"required":["name","tags","address"]}},"required":["user"],"additionalProperties":false}`,
	`{"type":"object","properties":{"exact":{"type":"integer","minimum":10,"maximum":10},"open":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"big":{"type":"number","minimum":1e300},"neg":{"type":"integer","maximum":-5}},"required":["exact","open","big","neg"]}`,
	`{"type":"object","properties":{"long":{"type":"string","minLength":50,"maxLength":60},"short":{"type":"string","maxLength":2},"nullable":{"type":["string","null"]},"flag":{"type":"boolean"},"nothing":{"type":"null"}},"required":["long","short","nullable","flag","nothing"]}`,
	`{"type":"object","properties":{"either":{"anyOf":[{"type":"integer"},{"type":"string","maxLength":3}]},"k":{"const":{"a":[1,2]}},"e":{"enum":[1.50,"x",null,{"b":true}]}},"required":["either","k","e"]}`,
	`{"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"type":"object","properties":{"points":{"type":"array","items":{"$ref":"#/$defs/point"},"minItems":3,"maxItems":3}},"required":["points"]}`,
	`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"id":{"type":"string","format":"uuid"},"any":{},"yes":true}}`,
	`{"properties":{"a":{"type":"string"}},"required":["a","b"]}`,
	`{}`,
}

func TestGenerateFollowsTheSchema(t *testing.T) {
	for i, src := range exactSchemas {
		schema := mustSchema(t, src)
		for seed := range uint64(40) {
			doc, exact := generate(schema, rand.New(rand.NewPCG(seed, 1)))
			err, supported := validate(doc, schema)
			if !exact || !supported || err != nil {
				t.Fatalf("schema %d, seed %d: %s: exact %v, supported %v, %v", i, seed, doc, exact, supported, err)
			}
			if doc[0] != '{' {
				t.Fatalf("schema %d: %s is not an object", i, doc)
			}
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	schema := mustSchema(t, exactSchemas[1])
	a, _ := generate(schema, rand.New(rand.NewPCG(5, 1)))
	b, _ := generate(schema, rand.New(rand.NewPCG(5, 1)))
	if !bytes.Equal(a, b) {
		t.Errorf("same seed: %s, then %s", a, b)
	}
	seen := map[string]bool{}
	for seed := range uint64(20) {
		doc, _ := generate(schema, rand.New(rand.NewPCG(seed, 1)))
		seen[string(doc)] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 seeds gave %d different documents, want variety", len(seen))
	}
}

// deep returns a schema nested n objects deep, each requiring the next.
func deep(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`},"required":["a"]}`, n)
}

// Hostile schemas give a small, valid JSON document, marked inexact,
// and never a panic.
func TestGenerateHostileSchemas(t *testing.T) {
	many := `{"type":"object","required":["p"`
	for i := range 5000 {
		many += fmt.Sprintf(`,"p%d"`, i)
	}
	many += `]}`
	for name, src := range map[string]string{
		"deep":            deep(3000),
		"recursive ref":   `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"required":["next"]}},"$ref":"#/$defs/n"}`,
		"self ref":        `{"anyOf":[{"$ref":"#"}]}`,
		"remote ref":      `{"$ref":"https://example.com/schema.json"}`,
		"huge minItems":   `{"type":"object","properties":{"a":{"type":"array","minItems":1e9}},"required":["a"]}`,
		"huge minLength":  `{"type":"object","properties":{"a":{"type":"string","minLength":1e12}},"required":["a"]}`,
		"empty range":     `{"type":"object","properties":{"a":{"type":"integer","minimum":5,"maximum":4},"b":{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":1}},"required":["a","b"]}`,
		"garbage":         `{"type":7,"properties":5,"required":"x","enum":[],"items":[1,2]}`,
		"garbage props":   `{"type":"object","properties":{"a":5,"b":"x","c":null},"required":["a","b","c",1]}`,
		"false":           `false`,
		"false prop":      `{"type":"object","properties":{"a":false},"required":["a"]}`,
		"pattern":         `{"type":"object","properties":{"a":{"type":"string","pattern":"^[0-9]{4}$"}},"required":["a"]}`,
		"many required":   many,
		"wide arrays":     `{"type":"array","minItems":8,"items":{"type":"array","minItems":8,"items":{"type":"array","minItems":8,"items":{"type":"array","minItems":8,"items":{"type":"string","minLength":1000}}}}}`,
		"nan-ish numbers": `{"type":"object","properties":{"a":{"type":"number","minimum":-1.7e308,"maximum":1.7e308},"b":{"type":"integer","minimum":1e400},"c":{"type":"number","multipleOf":1e-300}},"required":["a","b","c"]}`,
	} {
		schema, err := decodeSchema([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, _ := generate(schema, rand.New(rand.NewPCG(1, 1)))
		if !json.Valid(doc) || len(doc) > 1<<20 {
			t.Errorf("%s: %d bytes, valid %v: %.200s", name, len(doc), json.Valid(doc), doc)
		}
	}
}

func FuzzGenerate(f *testing.F) {
	for _, s := range exactSchemas {
		f.Add(s, uint64(1))
	}
	f.Add(deep(40), uint64(2))
	f.Add(`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, uint64(3))
	f.Add(`{"type":["integer","null"],"minimum":-3,"exclusiveMaximum":2,"multipleOf":2}`, uint64(4))
	f.Add(`{"type":"array","items":{"enum":["a","b"]},"uniqueItems":true,"minItems":2}`, uint64(5))
	f.Fuzz(func(t *testing.T, src string, seed uint64) {
		schema, err := decodeSchema([]byte(src))
		if err != nil {
			return
		}
		doc, exact := generate(schema, rand.New(rand.NewPCG(seed, 1)))
		if !json.Valid(doc) {
			t.Fatalf("invalid JSON %q from %s", doc, src)
		}
		if limit := 300 * (len(src) + 2*maxStringLen); len(doc) > limit {
			t.Fatalf("%d bytes from a %d-byte schema", len(doc), len(src))
		}
		if err, supported := validate(doc, schema); exact && supported && err != nil {
			t.Fatalf("exact, yet %s does not match %s: %v", doc, src, err)
		}
	})
}
