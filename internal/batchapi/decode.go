package batchapi

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
)

// members reads a JSON object's members by their decoded names, refusing
// a duplicate or a case variant of a known name (which encoding/json
// would read as that name), so what is checked is what any reader sees.
// Unknown members are kept too, for the caller to refuse or ignore. It
// returns the problem for people, or "".
func members(body []byte, known []string) (map[string]json.RawMessage, string) {
	out := map[string]json.RawMessage{}
	problem := ""
	ok := aireq.Members(body, func(key, value []byte) bool {
		name := string(key)
		if bytes.IndexByte(key, '\\') >= 0 && json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &name) != nil {
			problem = "the body has an invalid member name"
			return false
		}
		canon := name
		for _, k := range known {
			if strings.EqualFold(name, k) {
				canon = k
			}
		}
		if _, dup := out[canon]; dup {
			problem = "the body has member " + quote(name) + " twice (or in two spellings)"
			return false
		}
		if canon != name {
			problem = "the body has member " + quote(name) + "; write it " + quote(canon)
			return false
		}
		out[name] = value
		return true
	})
	if problem == "" && (!ok || !json.Valid(body)) {
		problem = "the body is not a JSON object"
	}
	return out, problem
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	if len(b) > 80 {
		return string(b[:77]) + "…\""
	}
	return string(b)
}
