package geminiapi

import "strings"

// ParsePath reads "/v1beta/models/{model}:{method}" (AI Studio; any
// version segment, v1 and v1alpha too) and Vertex's
// "/v1/projects/{p}/locations/{l}/publishers/{pub}/models/{model}:{method}"
// (v1beta1 too, and express mode's "/v1/publishers/{pub}/models/…"):
// model, method, publisher ("" for AI Studio), ok. The path is the
// decoded one (http.Request.URL.Path); the method follows the last ':'
// (generateContent, streamGenerateContent, countTokens, …) and is made of
// letters only; no segment may be empty.
func ParsePath(path string) (model, method, publisher string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/")
	if !ok {
		return "", "", "", false
	}
	version, rest, _ := strings.Cut(rest, "/")
	if len(version) < 2 || version[0] != 'v' || version[1] < '0' || version[1] > '9' {
		return "", "", "", false
	}
	if p, r, found := strings.Cut(rest, "/models/"); found {
		switch segs := strings.Split(p, "/"); {
		case p == "":
			return "", "", "", false
		case len(segs) == 2 && segs[0] == "publishers":
			publisher = segs[1]
		case len(segs) == 6 && segs[0] == "projects" && segs[2] == "locations" && segs[4] == "publishers":
			publisher = segs[5]
		default:
			return "", "", "", false
		}
		if !segmentsSet(strings.Split(p, "/")) {
			return "", "", "", false
		}
		rest = r
	} else if rest, ok = strings.CutPrefix(rest, "models/"); !ok {
		return "", "", "", false
	}
	colon := strings.LastIndexByte(rest, ':')
	if colon <= 0 || strings.IndexByte(rest, '/') >= 0 {
		return "", "", "", false
	}
	model, method = rest[:colon], rest[colon+1:]
	if !letters(method) {
		return "", "", "", false
	}
	return model, method, publisher, true
}

// segmentsSet reports whether no segment is empty.
func segmentsSet(segs []string) bool {
	for _, s := range segs {
		if s == "" {
			return false
		}
	}
	return true
}

// letters reports whether s is one or more ASCII letters.
func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}
