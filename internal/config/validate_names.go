package config

import "strconv"

// A target's name, provider/model, is sent to clients in the
// X-Fusebox-Target and X-Fusebox-Tried headers and labels its metrics, so
// provider and model names must be printable ASCII: a header cannot carry
// anything else safely.

// maxNameLen bounds a provider's or a model's name, in bytes.
const maxNameLen = 256

// checkName reports, at path, a provider's or model's name (what: the
// noun) that is not printable ASCII or is too long. An empty name is
// left to the caller's own message.
func checkName(r *report, path, what, name string) {
	switch {
	case len(name) > maxNameLen:
		r.field(path, what+" is "+strconv.Itoa(len(name))+" bytes long (at most "+strconv.Itoa(maxNameLen)+")")
	case !printableASCII(name):
		r.field(path, what+" "+strconv.QuoteToASCII(name)+" must be printable ASCII: it is sent in the X-Fusebox-Target header")
	}
}

// printableASCII reports whether every byte of s is printable ASCII
// (0x20 to 0x7e).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
