package config

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fuseboxhq/fusebox/aierr"
)

// maxNodes bounds the values decoded, aliases expanded, so that a small file
// of nested YAML aliases cannot make Parse run for ever ("billion laughs").
const maxNodes = 100_000

// decoder fills Go values from a yaml.Node tree, expanding environment
// variables in scalars and recording the line of every field it sets. It
// reports every problem and goes on, so that one run finds them all.
type decoder struct {
	r     *report
	env   Env
	refs  []string // ${…} references behind the placeholders, see protect
	nodes int      // values decoded so far
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	kindType     = reflect.TypeFor[aierr.Kind]()
)

// pair is a key and its value in a mapping.
type pair struct{ key, val *yaml.Node }

// decode fills v from n; path names v in errors.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if n == nil || isNull(n) {
		return
	}
	if d.nodes++; d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			d.r.broke(n.Line, path, "too many values (over 100000, counting YAML aliases expanded)")
		}
		return
	}
	switch t := v.Type(); {
	case t == durationType:
		d.duration(n, v, path)
	case t == kindType:
		d.kind(n, v, path)
	default:
		switch t.Kind() {
		case reflect.String:
			if s, ok := d.scalar(n, path, "a string"); ok {
				v.SetString(s)
			}
		case reflect.Bool:
			d.boolean(n, v, path)
		case reflect.Int:
			d.integer(n, v, path)
		case reflect.Float64:
			d.float(n, v, path)
		case reflect.Slice:
			d.slice(n, v, path)
		case reflect.Map:
			d.mapping(n, v, path)
		case reflect.Struct:
			d.structure(n, v, path)
		default:
			panic("config: cannot decode into " + t.String()) // a schema bug
		}
	}
}

// resolve follows YAML aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return resolve(n.Content[0])
	}
	if n != nil && (n.Kind == yaml.AliasNode || n.Kind == 0) {
		return nil // an alias chain too long, or an empty file
	}
	return n
}

// isNull reports whether n is an explicit or empty null: the field is then
// left unset.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names a node for "want …, got …" messages, where a value of
// type t (nil: unknown) was wanted; see showValue for what it shows of a
// scalar.
func (d *decoder) describe(n *yaml.Node, t reflect.Type) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return showValue(restore(n.Value, d.refs), t)
}

// scalar returns n's value with environment variables expanded, or reports
// why it cannot. want names the expected type in the message.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.r.broke(n.Line, path, "want "+want+", got "+d.describe(n, nil))
		return "", false
	}
	s, msg := expand(restore(n.Value, d.refs), d.env)
	if msg != "" {
		d.r.broke(n.Line, path, msg)
		return "", false
	}
	return s, true
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a duration")
	if !ok {
		return
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		d.r.broke(n.Line, path, "bad duration "+quote(s)+" (want a number and a unit: 200ms, 5s, 2m, 1h)")
		return
	}
	v.SetInt(int64(dur))
}

// A duration field of a struct may take a word instead of a duration, set
// in a companion field that the file cannot name, by one of two tags:
//
//	auto:"Flag"   "auto" sets the bool field Flag and leaves the duration
//	              alone (defaults then fill it in, see inherit)
//	quantile:"Q"  "p95" or "p99.9" sets the float field Q to 0.95 or 0.999
//
// wordOr decodes such a field f of the struct st, and reports whether f is
// one; other fields are left to decode.
func (d *decoder) wordOr(n *yaml.Node, st reflect.Value, f reflect.StructField, path string) bool {
	flag, quantile := f.Tag.Get("auto"), f.Tag.Get("quantile")
	if flag == "" && quantile == "" {
		return false
	}
	n = resolve(n)
	if d.nodes++; d.nodes > maxNodes {
		return true // decode has reported it
	}
	want := "a duration or auto"
	if quantile != "" {
		want = "a duration or a percentile"
	}
	if f.Type.Kind() == reflect.Float64 {
		want = "a number or auto"
	}
	s, ok := d.scalar(n, path, want)
	if !ok {
		return true
	}
	word := strings.ToLower(strings.TrimSpace(s))
	switch {
	case flag != "" && word == "auto":
		st.FieldByName(flag).SetBool(true)
	case quantile != "" && strings.HasPrefix(word, "p"):
		q, ok := parsePercentile(word)
		if !ok {
			d.r.broke(n.Line, path, "bad percentile "+quote(s)+" (want p50 to p99.9, at most one decimal: p90, p95, p99.9)")
			return true
		}
		st.FieldByName(quantile).SetFloat(q)
	case f.Type.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			d.r.broke(n.Line, path, "bad number "+quote(s)+" (want a number such as 2 or 0.5, or auto)")
			return true
		}
		st.FieldByIndex(f.Index).SetFloat(x)
	default:
		dur, err := time.ParseDuration(strings.TrimSpace(s))
		switch {
		case err == nil:
			st.FieldByIndex(f.Index).SetInt(int64(dur))
		case quantile != "":
			d.r.broke(n.Line, path, "bad value "+quote(s)+" (want a duration such as 800ms, or a percentile such as p95)")
		default:
			d.r.broke(n.Line, path, "bad duration "+quote(s)+" (want a number and a unit: 200ms, 5s, 2m, 1h; or auto)")
		}
	}
	return true
}

// parsePercentile turns "p95" or "p99.9" into 0.95 or 0.999: p50 to p99.9,
// with at most one decimal.
func parsePercentile(word string) (float64, bool) {
	num := strings.TrimPrefix(word, "p")
	whole, frac, hasFrac := strings.Cut(num, ".")
	if len(whole) != 2 || (hasFrac && len(frac) != 1) {
		return 0, false
	}
	tenths, err := strconv.Atoi(whole + frac)
	if err != nil || strings.ContainsAny(num, "+-") {
		return 0, false
	}
	if !hasFrac {
		tenths *= 10
	}
	if tenths < 500 || tenths > 999 {
		return 0, false
	}
	return float64(tenths) / 1000, true
}

func (d *decoder) boolean(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		v.SetBool(true)
	case "false", "no", "off":
		v.SetBool(false)
	default:
		d.r.broke(n.Line, path, "want true or false, got "+quote(s))
	}
}

func (d *decoder) kind(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a verdict kind")
	if !ok {
		return
	}
	k, err := aierr.ParseKind(s)
	if err != nil {
		d.r.broke(n.Line, path, "unknown kind "+quote(s)+" (known: "+kindNames()+")")
		return
	}
	v.SetUint(uint64(k))
}

// kindNames lists the kinds an override may name.
func kindNames() string {
	var names []string
	for k := aierr.Kind(0); ; k++ {
		name := k.String()
		if _, err := aierr.ParseKind(name); err != nil {
			break
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

func (d *decoder) integer(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return
	}
	i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 0)
	if err != nil {
		d.r.broke(n.Line, path, "want a whole number, got "+quote(s))
		return
	}
	v.SetInt(i)
}

func (d *decoder) float(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a number")
	if !ok {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.r.broke(n.Line, path, "want a number, got "+quote(s))
		return
	}
	v.SetFloat(f)
}

func (d *decoder) slice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.r.broke(n.Line, path, "want a list, got "+d.describe(n, v.Type())+listHint(n, v.Type(), path))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := path + "[" + strconv.Itoa(i) + "]"
		d.r.lines[p] = item.Line
		d.decode(item, s.Index(i), p)
	}
	v.Set(s)
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	pairs, ok := d.pairs(n, path, v.Type())
	if !ok {
		return
	}
	t := v.Type()
	m := reflect.MakeMapWithSize(t, len(pairs))
	for _, kv := range pairs {
		name := restore(kv.key.Value, d.refs)
		p := path + "." + name
		if isSecretType(t.Elem()) && !validHeaderName(name) {
			// A map of secrets is headers: a key that is no header name
			// may well hold the value ("Authorization: Bearer …").
			d.r.broke(kv.key.Line, path+"."+notShown, "bad header name (not shown, as it may hold a secret); write headers: {Name: value}, one name per header")
			continue
		}
		d.r.lines[p] = kv.key.Line
		key := reflect.New(t.Key()).Elem()
		if t.Key().Kind() == reflect.Int {
			i, err := strconv.Atoi(name)
			if err != nil {
				d.r.broke(kv.key.Line, p, "want a whole number as the key, got "+quote(name))
				continue
			}
			key.SetInt(int64(i))
		} else {
			key.SetString(name)
		}
		val := reflect.New(t.Elem()).Elem()
		d.decode(kv.val, val, p)
		m.SetMapIndex(key, val)
	}
	v.Set(m)
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	pairs, ok := d.pairs(n, path, v.Type())
	if !ok {
		return
	}
	fields := fieldsOf(v.Type())
	var meant []string // the fields that misspelled ones were meant to be
	set := map[string]bool{}
	for _, kv := range pairs {
		name := restore(kv.key.Value, d.refs)
		p := join(path, name)
		i, ok := fields[name]
		if !ok {
			msg, best := unknownField(name, v.Type())
			d.r.broke(kv.key.Line, p, msg)
			if best != "" {
				meant = append(meant, best)
			}
			continue
		}
		set[name] = true
		if val := resolve(kv.val); val == nil || isNull(val) {
			d.r.nulls[p] = kv.key.Line
			continue // an empty value leaves the field unset, to inherit
		}
		d.r.lines[p] = kv.key.Line
		if !d.wordOr(kv.val, v, v.Type().Field(i), p) {
			d.decode(kv.val, v.Field(i), p)
		}
	}
	// A misspelled field leaves the one it was meant to be unset: what
	// follows from that ("target has no model") would only confuse.
	for _, name := range meant {
		if !set[name] {
			d.r.markBroken(join(path, name))
		}
	}
}

// pairs returns the entries of mapping n, merge keys (<<) applied: an entry
// of the mapping itself beats a merged one, an earlier merged one a later.
// It reports duplicate keys and non-scalar keys.
// t is the type the mapping is decoded into, for messages.
func (d *decoder) pairs(n *yaml.Node, path string, t reflect.Type) ([]pair, bool) {
	if n.Kind != yaml.MappingNode {
		d.r.broke(n.Line, path, "want a mapping, got "+d.describe(n, t))
		return nil, false
	}
	var own, merged []pair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.r.at(k.Line, path, "want a plain key, got "+d.describe(k, nil))
			continue
		}
		if k.Tag == "!!merge" {
			merged = append(merged, d.merge(val, path, t)...)
			continue
		}
		name := restore(k.Value, d.refs)
		if first, dup := seen[name]; dup {
			d.r.at(k.Line, join(path, name), "set twice (first on line "+strconv.Itoa(first)+")")
			continue
		}
		seen[name] = k.Line
		own = append(own, pair{k, val})
	}
	for _, kv := range merged {
		name := restore(kv.key.Value, d.refs)
		if _, dup := seen[name]; !dup {
			seen[name] = kv.key.Line
			own = append(own, kv)
		}
	}
	return own, true
}

// merge returns the entries a merge key brings in: those of a mapping, or of
// a list of mappings.
func (d *decoder) merge(n *yaml.Node, path string, t reflect.Type) []pair {
	n = resolve(n)
	if n == nil {
		return nil
	}
	if d.nodes++; d.nodes > maxNodes {
		return nil
	}
	var out []pair
	switch n.Kind {
	case yaml.MappingNode:
		ps, _ := d.pairs(n, path, t)
		out = append(out, ps...)
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if item = resolve(item); item != nil && item.Kind == yaml.MappingNode {
				ps, _ := d.pairs(item, path, t)
				out = append(out, ps...)
			} else if item != nil {
				d.r.at(item.Line, path, "a merge (<<) list must hold mappings")
			}
		}
	default:
		d.r.at(n.Line, path, "a merge (<<) takes a mapping or a list of mappings")
	}
	return out
}

// join appends a field name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// fieldsOf maps the YAML names of t's fields to their indexes.
func fieldsOf(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if tag := yamlName(t.Field(i)); tag != "" {
			m[tag] = i
		}
	}
	return m
}

// yamlName returns a field's name in the file; "" for fields not in it.
func yamlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	return tag
}

// unknownField says that name is not a field of t, with the closest field
// name when one is close, which it also returns, or the list of fields
// otherwise.
func unknownField(name string, t reflect.Type) (msg, best string) {
	var known []string
	for i := range t.NumField() {
		if tag := yamlName(t.Field(i)); tag != "" {
			known = append(known, tag)
		}
	}
	if best := closest(name, known); best != "" {
		return "unknown field, did you mean " + strconv.Quote(best) + "?", best
	}
	return "unknown field (known: " + strings.Join(known, ", ") + ")", ""
}

// listHint tells how to write a list, for a scalar n given where the list
// of strings at path, of type t, was wanted; "" otherwise.
func listHint(n *yaml.Node, t reflect.Type, path string) string {
	if n.Kind != yaml.ScalarNode || t.Elem().Kind() != reflect.String {
		return ""
	}
	name := path[strings.LastIndexAny(path, ".]")+1:]
	if name == "" {
		return ""
	}
	return " (write " + name + ": [a, b], or one \"- item\" per line)"
}

// closest returns the candidate nearest to s in edit distance, if it is near
// enough to be a likely typo; "" otherwise.
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), c)
		if d < bestD && d <= max(1, len(c)/3) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours each cost 1.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt32
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
