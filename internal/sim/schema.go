package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a generated value, so that a hostile schema costs little.
const (
	maxSchemaDepth  = 16   // nesting of values, $ref hops and combinators
	maxSchemaValues = 256  // values in one document; then the least of each
	maxArrayItems   = 8    // a minItems above it is not met
	maxStringLen    = 1024 // a minLength above it is not met
)

// decodeSchema decodes a JSON Schema as generate reads it, keeping numbers
// as written (json.Number), so that enum and const values come back
// exactly.
func decodeSchema(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// generate returns a JSON document that schema (as decodeSchema returns it)
// accepts, drawing its choices from rng, and whether it honoured every
// keyword: false when the schema uses what the generator does not follow
// (pattern, not, if/then/else, …), asks for more than its bounds allow,
// or is not a schema. A schema with no type at the top yields an object, so
// that tool arguments are always one.
//
// Supported: type (a name or a list: the first that is not "null"), enum,
// const, properties (required ones always, others on a coin flip, in key
// order), required, additionalProperties false, items, minItems,
// maxItems, uniqueItems, minLength, maxLength, format (date-time, date,
// time, email, uri, uuid, ipv4, hostname), minimum, maximum and their
// exclusive forms, multipleOf, anyOf, oneOf and allOf (one branch) and
// local $ref (#/$defs/…, #/definitions/…).
func generate(schema any, rng *rand.Rand) (doc []byte, exact bool) {
	g := valueGen{rng: rng, root: schema, left: maxSchemaValues, exact: true}
	return g.value(nil, schema, 0, true), g.exact
}

// valueGen writes one generated document.
type valueGen struct {
	rng   *rand.Rand
	root  any  // what $refs resolve in
	left  int  // values it may still write in full
	exact bool // every keyword was honoured so far
}

// value appends a value for schema at depth; top is the document's root.
func (g *valueGen) value(b []byte, schema any, depth int, top bool) []byte {
	g.left--
	switch sc := schema.(type) {
	case map[string]any:
		return g.valueOf(b, sc, depth, top)
	case bool:
		if !sc {
			g.exact = false // false accepts nothing
		}
		if top {
			return append(b, "{}"...)
		}
		return g.words(b, 1)
	}
	g.exact = false // not a schema
	return append(b, "{}"...)
}

// unfollowed are keywords that constrain values in ways the generator does
// not follow: a schema with one may reject what it writes.
var unfollowed = []string{
	"pattern", "not", "if", "then", "else", "prefixItems", "contains", "minContains",
	"patternProperties", "propertyNames", "minProperties", "maxProperties",
	"dependentRequired", "dependentSchemas", "dependencies", "unevaluatedItems",
	"unevaluatedProperties", "additionalItems",
}

func (g *valueGen) valueOf(b []byte, m map[string]any, depth int, top bool) []byte {
	if depth >= maxSchemaDepth || g.left < 0 {
		g.exact = false
		return least(b, typeOf(m, top))
	}
	for _, k := range unfollowed {
		if _, ok := m[k]; ok {
			g.exact = false
			break
		}
	}
	if ref, ok := m["$ref"]; ok {
		s, _ := ref.(string)
		target, found := g.resolve(s)
		if !found || hasConstraints(m, "$ref") {
			g.exact = false
		}
		if !found {
			return least(b, typeOf(m, top))
		}
		return g.value(b, target, depth+1, top)
	}
	if c, ok := m["const"]; ok {
		return g.fixed(b, m, c, "const")
	}
	if e, ok := m["enum"]; ok {
		list, _ := e.([]any)
		if len(list) == 0 {
			g.exact = false
			return append(b, "null"...)
		}
		return g.fixed(b, m, list[g.rng.IntN(len(list))], "enum")
	}
	if branch, ok := g.branch(m); ok {
		return g.value(b, branch, depth+1, top)
	}
	typ := typeOf(m, top)
	if t, typed := m["type"]; typed && !declares(t, typ) {
		g.exact = false // no known type named
	}
	switch typ {
	case "object":
		return g.object(b, m, depth)
	case "array":
		return g.array(b, m, depth)
	case "string":
		return g.str(b, m)
	case "integer":
		return g.number(b, m, true)
	case "number":
		return g.number(b, m, false)
	case "boolean":
		return strconv.AppendBool(b, g.rng.IntN(2) == 0)
	case "null":
		return append(b, "null"...)
	case "":
		return g.words(b, 1) // any value will do
	}
	g.exact = false // an unknown type
	return append(b, "{}"...)
}

// fixed appends v, a const or enum value, exactly when the schema says
// nothing more of it than its type, and v is of that type.
func (g *valueGen) fixed(b []byte, m map[string]any, v any, k string) []byte {
	if hasConstraints(m, k, "type") || !ofType(v, m["type"]) {
		g.exact = false
	}
	return appendAny(b, v)
}

// branch picks the schema to follow from anyOf, oneOf or allOf. Only anyOf
// is exact with several branches; any is exact only when the combinator is
// all the schema says.
func (g *valueGen) branch(m map[string]any) (any, bool) {
	for _, k := range [...]string{"anyOf", "oneOf", "allOf"} {
		alts, ok := m[k].([]any)
		if !ok || len(alts) == 0 {
			continue
		}
		if (len(alts) > 1 && k != "anyOf") || hasConstraints(m, k) {
			g.exact = false
		}
		if k == "allOf" {
			return alts[0], true
		}
		return alts[g.rng.IntN(len(alts))], true
	}
	return nil, false
}

// annotations are keywords that do not constrain a value.
var annotations = []string{"title", "description", "default", "examples", "$defs", "definitions",
	"$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly", "strict", "name"}

// hasConstraints reports whether m says more than the keywords except.
func hasConstraints(m map[string]any, except ...string) bool {
	for key := range m {
		if !slices.Contains(except, key) && !slices.Contains(annotations, key) {
			return true
		}
	}
	return false
}

// resolve finds a local $ref ("#", "#/$defs/point") in the root schema.
func (g *valueGen) resolve(ref string) (any, bool) {
	if ref != "#" && !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	cur := g.root
	for _, tok := range strings.Split(ref, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch node := cur.(type) {
		case map[string]any:
			next, ok := node[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// object appends an object: every required property, and each other one
// on a coin flip, in key order so that a seed gives the same draws.
func (g *valueGen) object(b []byte, m map[string]any, depth int) []byte {
	props, ok := m["properties"].(map[string]any)
	if _, has := m["properties"]; has && !ok {
		g.exact = false
	}
	required := g.names(m["required"])
	closed := m["additionalProperties"] == false
	b = append(b, '{')
	n := 0
	add := func(name string, schema any) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, name)
		b = append(b, ':')
		b = g.value(b, schema, depth+1, false)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(required, k) || g.rng.IntN(2) == 0 {
			add(k, props[k])
		}
	}
	for _, k := range required {
		if _, ok := props[k]; !ok {
			if closed {
				g.exact = false // required, yet not allowed
			}
			add(k, true)
		}
	}
	return append(b, '}')
}

// names reads a required list, without repeats.
func (g *valueGen) names(v any) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		g.exact = false
		return nil
	}
	var out []string
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			g.exact = false
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// array appends one or two items, or as many as minItems and maxItems
// ask; one when items must be unique.
func (g *valueGen) array(b []byte, m map[string]any, depth int) []byte {
	lo, _ := g.count(m["minItems"])
	hi, bounded := g.count(m["maxItems"])
	n := 1 + g.rng.IntN(2)
	if m["uniqueItems"] == true {
		n = 1
	}
	n = max(n, lo)
	if bounded {
		n = min(n, hi)
	}
	if n > maxArrayItems || (bounded && lo > hi) || (n > 1 && m["uniqueItems"] == true) {
		g.exact = false
		n = min(n, maxArrayItems)
	}
	items, ok := m["items"]
	if !ok {
		items = true
	}
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.value(b, items, depth+1, false)
	}
	return append(b, ']')
}

// count reads a non-negative whole number keyword; ok is false when it is
// absent or not one (not one also makes the value inexact).
func (g *valueGen) count(v any) (int, bool) {
	if v == nil {
		return 0, false
	}
	f, ok := number(v)
	if !ok || f < 0 || f != math.Trunc(f) {
		g.exact = false
		return 0, false
	}
	return int(min(f, 1<<30)), true
}
