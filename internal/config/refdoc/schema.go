package refdoc

import (
	"go/doc/comment"
	"reflect"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// Section is a block of the file: a struct type of the schema, with every
// path where a file writes it.
type Section struct {
	// Type is the Go type's name, e.g. Breaker.
	Type string
	// Paths are where the block is written, e.g. defaults.breaker and
	// models[].breaker; "" for the top level.
	Paths []string
	// Intros are, per path, the field that holds the block, for its doc.
	Intros []Intro
	// Doc is the type's doc comment.
	Doc *comment.Doc
	// Examples are the code blocks of Doc: YAML as a file writes the block,
	// under its own key ("cache: {ttl: 10m}") or as a list item ("- name:
	// smart").
	Examples []string
	// Fields are the block's fields, in the order of the type.
	Fields []*Field

	names map[string]string // Go field name → YAML name
}

// Intro is the field that holds a block, at one of its paths.
type Intro struct {
	// Path is the field's path, e.g. models[].breaker or providers.
	Path string
	// Doc is the field's doc comment.
	Doc *comment.Doc

	goName string
	names  map[string]string // of the block the field is in
}

// Field is one setting of a block.
type Field struct {
	// Name is the field's YAML name.
	Name string
	// Paths are the field's YAML paths, one per path of its block.
	Paths []string
	// Type is the field's type in YAML terms: duration, string, int, list
	// of …, map of … to …, or the words it takes.
	Type string
	// Default is what a file that leaves the field out gets; "" for a
	// field that holds a block.
	Default string
	// Block is the block the field holds (a mapping, or a list or map of
	// them); nil for a plain setting.
	Block *Section
	// Doc is the field's doc comment.
	Doc *comment.Doc

	goName string
	rtype  reflect.Type
	rawDoc string
}

// builder collects the sections while it walks the schema's types.
type builder struct {
	src      *source
	sections map[reflect.Type]*Section
	order    []*Section
}

// section adds path to the section of the struct type t, creating it the
// first time, and walks the blocks under it. intro is the field that holds
// it (its Doc unset: the raw doc is in raw).
func (b *builder) section(t reflect.Type, path string, intro Intro, raw string) *Section {
	s, ok := b.sections[t]
	if !ok {
		s = &Section{Type: t.Name(), Doc: b.src.parse(b.typeDoc(t)), names: map[string]string{}}
		s.Examples = codeBlocks(s.Doc)
		b.sections[t] = s
		b.order = append(b.order, s)
	}
	s.Paths = append(s.Paths, path)
	intro.Doc = b.src.parse(raw)
	s.Intros = append(s.Intros, intro)
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		s.names[f.Name] = name
		fs := s.field(b, t, f, name)
		fpath := join(path, name)
		fs.Paths = append(fs.Paths, fpath)
		if bt, bpath := blockOf(f.Type, fpath); bt != nil {
			fs.Block = b.section(bt, bpath, Intro{Path: fpath, goName: f.Name, names: s.names}, fs.rawDoc)
		}
	}
	return s
}

// field returns the Field of f in s, creating it the first time.
func (s *Section) field(b *builder, t reflect.Type, f reflect.StructField, name string) *Field {
	for _, fs := range s.Fields {
		if fs.Name == name {
			return fs
		}
	}
	raw := b.src.fields[t.Name()][f.Name]
	fs := &Field{Name: name, Type: b.typeName(f.Type, f.Tag), Doc: b.src.parse(raw), goName: f.Name, rtype: f.Type, rawDoc: raw}
	s.Fields = append(s.Fields, fs)
	return fs
}

// typeDoc returns the doc comment of the schema type t.
func (b *builder) typeDoc(t reflect.Type) string {
	if dt, ok := b.src.types[t.Name()]; ok {
		return dt.Doc
	}
	return ""
}

// blockOf returns the block type a field of type t holds, and its path:
// path for a struct, path[] for a list of them, path.<name> for a map of
// them; nil for other types.
func blockOf(t reflect.Type, path string) (reflect.Type, string) {
	switch {
	case t.Kind() == reflect.Struct:
		return t, path
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return t.Elem(), path + "[]"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		return t.Elem(), path + ".<name>"
	}
	return nil, ""
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	kindType     = reflect.TypeFor[aierr.Kind]()
	secretType   = reflect.TypeFor[config.Secret]()
)

// typeName names t in YAML terms, for a field with the struct tag tag.
func (b *builder) typeName(t reflect.Type, tag reflect.StructTag) string {
	switch {
	case t == durationType && tag.Get("auto") != "":
		return "duration or auto"
	case t == durationType && tag.Get("quantile") != "":
		return "duration or percentile (p50 to p99.9)"
	case t == durationType:
		return "duration"
	case t == kindType:
		return "verdict kind (" + strings.Join(kindNames(), " | ") + ")"
	case t == secretType:
		return "secret"
	}
	if words := b.src.consts[t.Name()]; t.PkgPath() == secretType.PkgPath() && len(words) > 0 {
		return strings.Join(words, " | ")
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int:
		return "int"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "bool"
	case reflect.Struct:
		return "mapping"
	case reflect.Slice:
		return "list of " + b.elemName(t.Elem())
	case reflect.Map:
		key := "string"
		if t.Key().Kind() == reflect.Int {
			key = "int"
		}
		if t.Elem().Kind() == reflect.Struct {
			return "map of name to mapping"
		}
		return "map of " + key + " to " + b.elemName(t.Elem())
	}
	return t.String()
}

// elemName names the element type t of a list or map.
func (b *builder) elemName(t reflect.Type) string {
	name := b.typeName(t, "")
	switch {
	case t.Kind() == reflect.Struct:
		return "mappings"
	case strings.Contains(name, " | ") && !strings.Contains(name, "("):
		return "(" + name + ")"
	}
	return name
}

// kindNames lists the verdict kinds an override may name.
func kindNames() []string {
	var names []string
	for k := aierr.Kind(0); ; k++ {
		if _, err := aierr.ParseKind(k.String()); err != nil {
			return names
		}
		names = append(names, k.String())
	}
}

// yamlName returns a field's name in the file; "" for fields not in it.
func yamlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	return tag
}

// join appends a field name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// codeBlocks returns the code blocks of d.
func codeBlocks(d *comment.Doc) []string {
	var out []string
	for _, blk := range d.Content {
		if c, ok := blk.(*comment.Code); ok {
			out = append(out, c.Text)
		}
	}
	return out
}
