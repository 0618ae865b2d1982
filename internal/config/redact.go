package config

import (
	"cmp"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Secret is a string that must not be shown: an API key, a token, a header
// value. Printing it with fmt, or marshalling it to JSON, YAML or text, gives
// "***" (or "" when it is empty); Value gives the secret itself.
type Secret string

// Value returns the secret itself, for the one place that sends it.
func (s Secret) Value() string { return string(s) }

// String returns "***", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// GoString returns the quoted String, so that %#v hides the secret too.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalText returns the String, so that encoders hide the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// StateURL is the state setting: "memory" or a Redis URL. Printing or
// marshalling it hides the URL's password; Value gives it whole.
type StateURL string

// Value returns the setting itself, password included.
func (s StateURL) Value() string { return string(s) }

// String returns the setting with the URL's password hidden.
func (s StateURL) String() string { return redactURL(string(s)) }

// GoString returns the quoted String, so that %#v hides the password too.
func (s StateURL) GoString() string { return strconv.Quote(s.String()) }

// MarshalText returns the String, so that encoders hide the password.
func (s StateURL) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Redacted returns a deep copy of c in which every Secret is "***" and the
// password of the state URL is hidden, fit for logs and the admin API.
func (c *Config) Redacted() *Config {
	out := reflect.New(reflect.TypeFor[Config]()).Elem()
	redactCopy(out, reflect.ValueOf(c).Elem())
	r := out.Addr().Interface().(*Config)
	r.State = StateURL(r.State.String())
	return r
}

var secretType = reflect.TypeFor[Secret]()

// redactCopy deep-copies src into dst, hiding secrets. Unexported fields are
// left zero.
func redactCopy(dst, src reflect.Value) {
	switch {
	case src.Type() == secretType:
		dst.SetString(Secret.String(Secret(src.String())))
		return
	}
	switch src.Kind() {
	case reflect.Struct:
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				redactCopy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			redactCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			redactCopy(v, it.Value())
			m.SetMapIndex(it.Key(), v)
		}
		dst.Set(m)
	default:
		dst.Set(src)
	}
}

// redactURL hides the password of a URL, and the user information of
// one that does not parse (redis://:p%zz@host is not a URL, but p%zz may
// be a password); other strings pass unchanged.
func redactURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return redactUserinfo(s)
	case u.User == nil:
		return s
	}
	return u.Redacted()
}

// redactUserinfo replaces what comes between "://" (or the start) and the
// last "@" of s by "xxxxx": a password may hold any character.
func redactUserinfo(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	at := strings.LastIndexByte(s, '@')
	if at < start {
		return s
	}
	return s[:start] + "xxxxx" + s[at:]
}

// String returns the configuration as YAML, defaults filled in, secrets
// hidden and zero fields left out.
func (c *Config) String() string {
	n := toNode(reflect.ValueOf(c.Redacted()).Elem())
	if n == nil {
		return "{}\n"
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "config: " + err.Error()
	}
	enc.Close()
	return b.String()
}

// toNode renders v as a YAML node; nil for a zero value.
func toNode(v reflect.Value) *yaml.Node {
	if v.IsZero() {
		return nil
	}
	scalar := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	switch {
	case v.Type() == durationType:
		return scalar(time.Duration(v.Int()).String())
	case v.Type() == kindType:
		return scalar(v.Interface().(interface{ String() string }).String())
	}
	switch v.Kind() {
	case reflect.String:
		return scalar(v.String())
	case reflect.Bool:
		return scalar("true")
	case reflect.Int:
		return scalar(strconv.FormatInt(v.Int(), 10))
	case reflect.Float64:
		return scalar(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for i := range v.Len() {
			item := toNode(v.Index(i))
			if item == nil {
				item = &yaml.Node{Kind: yaml.MappingNode}
			}
			n.Content = append(n.Content, item)
		}
		return n
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			if a.Kind() == reflect.Int {
				return cmp.Compare(a.Int(), b.Int())
			}
			return cmp.Compare(a.String(), b.String())
		})
		for _, k := range keys {
			val := toNode(v.MapIndex(k))
			if val == nil {
				val = &yaml.Node{Kind: yaml.MappingNode}
			}
			n.Content = append(n.Content, scalar(keyString(k)), val)
		}
		return n
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			if val := wordNode(v, f); val != nil {
				n.Content = append(n.Content, scalar(name), val)
			} else if val := toNode(v.Field(i)); val != nil {
				n.Content = append(n.Content, scalar(name), val)
			}
		}
		return n
	}
	return scalar(v.String())
}

// wordNode renders the field f of the struct st as the word the file gave
// (see wordOr): "auto", with its ceiling as a comment, or a percentile; nil
// when the field holds a plain duration.
func wordNode(st reflect.Value, f reflect.StructField) *yaml.Node {
	if flag := f.Tag.Get("auto"); flag != "" && st.FieldByName(flag).Bool() {
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: "auto"}
		if d := time.Duration(st.FieldByIndex(f.Index).Int()); d > 0 {
			n.LineComment = "at most " + d.String()
		}
		return n
	}
	if q := f.Tag.Get("quantile"); q != "" {
		if x := st.FieldByName(q).Float(); x > 0 {
			return &yaml.Node{Kind: yaml.ScalarNode, Value: "p" + strconv.FormatFloat(math.Round(x*1000)/10, 'f', -1, 64)}
		}
	}
	return nil
}

func keyString(k reflect.Value) string {
	if k.Kind() == reflect.Int {
		return strconv.FormatInt(k.Int(), 10)
	}
	return k.String()
}
