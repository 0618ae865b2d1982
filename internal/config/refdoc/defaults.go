package refdoc

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// seed is the smallest file that sets what a valid file must, and a hedge
// block (whose defaults apply once it is written): what Parse fills in
// beside it are the defaults.
const seed = `providers:
  p: {type: openai}
models:
  - name: a
    targets: [{provider: p, model: m}, {provider: p, model: n}]
    hedge: {after: p95}
clients:
  - {name: c, key: k}
`

// seeded are the fields that seed sets: their values are not defaults.
var seeded = map[string]bool{
	"providers.<name>.type":       true,
	"models[].name":               true,
	"models[].targets[].provider": true,
	"models[].targets[].model":    true,
	"models[].hedge.after":        true,
	"clients[].name":              true,
	"clients[].key":               true,
}

// setDefaults sets the Default of every field, from its doc or from what
// Parse fills in, and reports where the two disagree.
func (s *Schema) setDefaults() error {
	cfg, err := config.Parse("seed.yaml", []byte(seed), func(string) (string, bool) { return "", false })
	if err != nil {
		return fmt.Errorf("refdoc: the seed does not parse: %w", err)
	}
	root := reflect.ValueOf(cfg).Elem()
	var problems []string
	for _, sec := range s.Sections {
		for _, f := range sec.Fields {
			if f.Block != nil {
				continue
			}
			f.Default = f.defaultText(sec.names)
			if phrase := defaultPhrase(f.rawDoc); phrase != "" && shortForm(phrase) == phrase {
				f.Doc = s.src.parse(withoutDefault(f.rawDoc)) // the default line says it all
			}
			for _, path := range f.Paths {
				if p := checkDefault(f, path, root); p != "" {
					problems = append(problems, p)
				}
			}
		}
	}
	return errorList(problems)
}

// defaultText is what the reference says of f's default: the short form
// of its doc's "Default:" sentence, "required", or the zero of its type.
func (f *Field) defaultText(names map[string]string) string {
	if phrase := defaultPhrase(f.rawDoc); phrase != "" {
		short := shortForm(phrase)
		if _, ok := literal(short, f.rtype); ok {
			value, paren, _ := strings.Cut(short, " (")
			if paren != "" {
				return "`" + value + "` (" + paren
			}
			return "`" + value + "`"
		}
		return translate(short, names, true)
	}
	if required(f.rawDoc) {
		return "required"
	}
	switch f.rtype.Kind() {
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "`0`"
	case reflect.Bool:
		return "`false`"
	case reflect.String:
		return "empty"
	}
	return "none"
}

// checkDefault compares what the doc of f says of its default at path
// with what Parse fills in there; it returns the disagreement, or "".
func checkDefault(f *Field, path string, root reflect.Value) string {
	v, ok := valueAt(root, path)
	if !ok || seeded[path] || v.IsZero() {
		return "" // not in the seed, set by it, or left for later
	}
	phrase := defaultPhrase(f.rawDoc)
	if phrase == "" {
		return fmt.Sprintf("%s: Parse fills in %v, but the doc of %s says no \"Default: …\"", path, show(v), f.goName)
	}
	if want, ok := literal(shortForm(phrase), f.rtype); ok && !reflect.DeepEqual(want.Interface(), v.Interface()) {
		return fmt.Sprintf("%s: the doc of %s says \"Default: %s\", Parse fills in %v", path, f.goName, phrase, show(v))
	}
	return ""
}

// show formats a value for a problem.
func show(v reflect.Value) any {
	if v.Type() == durationType {
		return time.Duration(v.Int())
	}
	return v.Interface()
}

// valueAt returns the value at the YAML path in the Config root: a list's
// first item for [], the seed's one entry for <name>.
func valueAt(root reflect.Value, path string) (reflect.Value, bool) {
	v := root
	for _, part := range strings.Split(path, ".") {
		if part == "<name>" {
			keys := v.MapKeys()
			if len(keys) != 1 {
				return v, false
			}
			v = v.MapIndex(keys[0])
			continue
		}
		name, list := strings.CutSuffix(part, "[]")
		f, ok := fieldByYAML(v.Type(), name)
		if !ok {
			return v, false
		}
		v = v.FieldByIndex(f.Index)
		if list {
			if v.Len() == 0 {
				return v, false
			}
			v = v.Index(0)
		}
	}
	return v, true
}

// fieldByYAML returns the field of the struct type t named name in a file.
func fieldByYAML(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// defaultSentence finds "Default: X." (or "Default per type: X.",
// "Default, also for 0: X.") in a doc comment: X ends at the first period
// that ends a sentence.
var defaultSentence = regexp.MustCompile(`\bDefault(?: [a-z]+| ?,[^:.]{1,24})?: (.+?)\.(?:\s|$)`)

// withoutDefault returns doc without its "Default: X." sentence.
func withoutDefault(doc string) string {
	m := defaultSentence.FindString(strings.Join(strings.Fields(doc), " "))
	words := strings.Fields(m)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	sentence := regexp.MustCompile(`\s*` + strings.Join(words, `\s+`))
	loc := sentence.FindStringIndex(doc)
	if loc == nil {
		return doc
	}
	return doc[:loc[0]] + " " + doc[loc[1]:]
}

// defaultPhrase returns the X of a doc's "Default: X." sentence; "" when
// it has none.
func defaultPhrase(doc string) string {
	m := defaultSentence.FindStringSubmatch(strings.Join(strings.Fields(doc), " "))
	if m == nil {
		return ""
	}
	return m[1]
}

// shortForm returns the first clause of a default phrase ("5s" of "5s (the
// gateway's default; …)"), a short parenthesis kept ("16777216 (16 MiB)").
func shortForm(phrase string) string {
	if strings.HasPrefix(phrase, `"`) {
		if q, err := strconv.QuotedPrefix(phrase); err == nil {
			return q
		}
	}
	end := len(phrase)
	for _, sep := range []string{", ", "; ", ": ", " ("} {
		if i := strings.Index(phrase, sep); i >= 0 && i < end {
			end = i
		}
	}
	short, rest := phrase[:end], phrase[end:]
	if strings.HasPrefix(rest, " (") {
		if j := strings.IndexByte(rest, ')'); j > 0 && j <= 12 {
			short += rest[:j+1]
		}
	}
	return short
}

// literal parses a default's short form as a value of type t, its short
// parenthesis left out; false when it is words rather than a value.
func literal(short string, t reflect.Type) (reflect.Value, bool) {
	s, _, _ := strings.Cut(short, " (")
	v := reflect.New(t).Elem()
	var err error
	switch {
	case t == durationType:
		var d time.Duration
		d, err = time.ParseDuration(s)
		v.SetInt(int64(d))
	case t.Kind() == reflect.Int:
		var i int64
		i, err = strconv.ParseInt(s, 10, 0)
		v.SetInt(i)
	case t.Kind() == reflect.Float64:
		var x float64
		x, err = strconv.ParseFloat(s, 64)
		v.SetFloat(x)
	case t.Kind() == reflect.Bool:
		var b bool
		b, err = strconv.ParseBool(s)
		v.SetBool(b)
	case t.Kind() == reflect.String && strings.HasPrefix(s, `"`):
		s, err = strconv.Unquote(s)
		v.SetString(s)
	case t.Kind() == reflect.String && s != "" && !strings.ContainsAny(s, " ,;"):
		v.SetString(s)
	default:
		return v, false
	}
	return v, err == nil
}

// required reports whether a doc says that its field must be set.
func required(doc string) bool {
	return strings.Contains(strings.ToLower(doc), "required") || strings.Contains(doc, "At least one")
}
