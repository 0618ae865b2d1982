package config

import (
	"bytes"
	"strconv"
	"strings"
)

// Environment variables are expanded in scalar values only, after the YAML
// is parsed (so line numbers stay right), never in field names:
//
//	${VAR}          the value of VAR; an error if VAR is not set
//	${VAR:-default} the value of VAR, or default when VAR is unset or empty
//	$$              a literal $ (so $${VAR} is the text ${VAR})
//
// Any other $ is kept as is. Names are letters, digits and underscores, not
// starting with a digit. The expanded text is used as it is: it is not YAML,
// so a variable cannot add fields or list items.

// Env looks up an environment variable, as os.LookupEnv does.
type Env func(name string) (value string, ok bool)

// Placeholders stand for ${…} references while the YAML is parsed: YAML does
// not allow "{" inside a plain scalar of a flow collection, so [${KEY}] would
// not parse. A placeholder is letters, digits and underscores only, and has
// no newline, so lines keep their numbers.
const (
	placeholderPrefix = "__fusebox_env_"
	placeholderSuffix = "__"
)

// protect replaces each ${…} reference in data (those on one line, and not
// escaped by $$) with a placeholder, and returns the new data with the
// references in placeholder order.
func protect(data []byte) ([]byte, []string) {
	if !bytes.Contains(data, []byte("${")) {
		return data, nil
	}
	var out []byte
	var refs []string
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '$' && i+1 < len(data) && data[i+1] == '$' {
			out = append(out, '$', '$')
			i++
			continue
		}
		if c == '$' && i+1 < len(data) && data[i+1] == '{' {
			end := bytes.IndexAny(data[i:], "}\n")
			if end > 0 && data[i+end] == '}' {
				refs = append(refs, string(data[i:i+end+1]))
				out = append(out, placeholderPrefix...)
				out = strconv.AppendInt(out, int64(len(refs)-1), 10)
				out = append(out, placeholderSuffix...)
				i += end
				continue
			}
		}
		out = append(out, c)
	}
	return out, refs
}

// restore puts the references back in place of their placeholders in s.
func restore(s string, refs []string) string {
	if len(refs) == 0 || !strings.Contains(s, placeholderPrefix) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, placeholderPrefix)
		if i < 0 {
			break
		}
		rest := s[i+len(placeholderPrefix):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[:j])
		if j == 0 || err != nil || n >= len(refs) || !strings.HasPrefix(rest[j:], placeholderSuffix) {
			b.WriteString(s[:i+len(placeholderPrefix)])
			s = rest
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(refs[n])
		s = rest[j+len(placeholderSuffix):]
	}
	b.WriteString(s)
	return b.String()
}

// expand expands the references in s, or returns an error message naming
// the first one that cannot be expanded.
func expand(s string, env Env) (string, string) {
	if !strings.Contains(s, "$") {
		return s, ""
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", "unterminated ${ (want ${VAR} or ${VAR:-default}; write $$ for a literal $)"
			}
			v, msg := lookupRef(s[i+2:i+end], env)
			if msg != "" {
				return "", msg
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// lookupRef expands the inside of one ${…}: VAR or VAR:-default.
func lookupRef(ref string, env Env) (string, string) {
	name, def, hasDef := strings.Cut(ref, ":-")
	if !validName(name) {
		return "", "bad variable reference " + showRef(name, hasDef && def != "") + " (want ${VAR} or ${VAR:-default})"
	}
	v, ok := env(name)
	switch {
	case hasDef && v == "":
		return def, ""
	case !ok:
		return "", "environment variable " + name + " is not set (use ${" + name + ":-default} to give a default)"
	}
	return v, ""
}

// showRef writes a bad reference for a message: its default, which may be
// a secret, elided, and the name hidden if it looks like a secret.
func showRef(name string, hasDef bool) string {
	if looksSecret(name) {
		name = notShown
	}
	if hasDef {
		return "${" + name + ":-…}"
	}
	return "${" + name + "}"
}

// validName reports whether s is a valid variable name.
func validName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
