package config

import (
	"reflect"
	"strconv"
	"strings"
)

// What an error message may show of the file. A message quotes a value so
// that its reader can find it, but never the value of a secret, nor the
// placeholders that stand for ${VAR} while the YAML is parsed (see protect):
//
//   - a value meant for a Secret, a list or map of them, shows as "a
//     secret", and a value meant for a block that holds secrets (a provider,
//     a client, a target…) as "a value"; the line still says where it is;
//   - a value made only of ${VAR} references shows as written, defaults
//     elided: the name of a variable is not a secret;
//   - any other value or name that looks like a key pasted in the wrong
//     place (see looksSecret) is not shown either.

// notShown replaces a name or value that looks like a secret.
const notShown = "<not shown>"

// quote returns s quoted for a message, or a mention that it is not shown
// when it looks like a secret.
func quote(s string) string {
	if looksSecret(s) {
		return "<not shown: it looks like a secret>"
	}
	return strconv.Quote(s)
}

// keyPrefixes start the API keys of well-known providers and tokens.
var keyPrefixes = []string{"sk-", "sk_", "AIza", "gsk_", "xai-", "pplx-", "hf_", "ghp_", "github_pat_", "nvapi-", "eyJ", "Bearer ", "bearer ", "Basic "}

// looksSecret reports whether s, a value or a name from the file, could be
// a key pasted in the wrong place: it starts like a provider's key or an
// Authorization header (sk-, AIza, Bearer …), or it is one long word of
// letters and digits that mixes cases, or a long hexadecimal string.
// Names of fields, models and providers do not look like that.
func looksSecret(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			return true
		}
	}
	var lower, upper, digit, other bool
	hex := true
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
			hex = hex && c <= 'f'
		case c >= 'A' && c <= 'Z':
			upper = true
			hex = false
		case c >= '0' && c <= '9':
			digit = true
		case c == '-' || c == '_':
			hex = false
		default:
			other = true
		}
	}
	switch {
	case other:
		return false
	case len(s) >= 20 && lower && upper && digit:
		return true
	case len(s) >= 32 && hex && digit:
		return true
	}
	return false
}

// hideNames replaces, in a field path, each name that looks like a secret.
func hideNames(path string) string {
	if path == "" || !looksSecretPart(path) {
		return path
	}
	var b strings.Builder
	for path != "" {
		i := strings.IndexAny(path, ".[]")
		if i < 0 {
			i = len(path)
		}
		if looksSecret(path[:i]) {
			b.WriteString(notShown)
		} else {
			b.WriteString(path[:i])
		}
		if i < len(path) {
			b.WriteByte(path[i])
			i++
		}
		path = path[i:]
	}
	return b.String()
}

// looksSecretPart reports whether some name of path looks like a secret.
func looksSecretPart(path string) bool {
	for _, part := range strings.FieldsFunc(path, func(c rune) bool { return c == '.' || c == '[' || c == ']' }) {
		if looksSecret(part) {
			return true
		}
	}
	return false
}

// isSecretType reports whether t is Secret or a list or map of secrets.
func isSecretType(t reflect.Type) bool {
	for t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) {
		t = t.Elem()
	}
	return t == secretType
}

// holdsSecret reports whether a value of type t may hold a Secret.
func holdsSecret(t reflect.Type) bool {
	switch {
	case t == nil:
		return false
	case isSecretType(t):
		return true
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Map:
		return holdsSecret(t.Elem())
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if yamlName(t.Field(i)) != "" && holdsSecret(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// showValue returns how a message names the scalar s, as written in the
// file, placeholders restored, when it was meant for a value of type t.
func showValue(s string, t reflect.Type) string {
	if refs, ok := onlyRefs(s); ok {
		return strconv.Quote(refs)
	}
	switch {
	case isSecretType(t):
		return "a secret"
	case holdsSecret(t):
		return "a value (not shown: this block holds secrets)"
	}
	return quote(s)
}

// onlyRefs returns s with the defaults of its ${VAR:-default} references
// elided, when s is nothing but references; false otherwise.
func onlyRefs(s string) (string, bool) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return "", false
	}
	var b strings.Builder
	for rest != "" {
		end := strings.IndexByte(rest, '}')
		if !strings.HasPrefix(rest, "${") || end < 0 {
			return "", false
		}
		name, def, hasDef := strings.Cut(rest[2:end], ":-")
		if !validName(name) {
			return "", false
		}
		b.WriteString("${" + name)
		if hasDef && def != "" {
			b.WriteString(":-…")
		}
		b.WriteString("}")
		rest = rest[end+1:]
	}
	return b.String(), true
}
