package openai

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// Refusal returns the first field of body, among unsupported, set to other
// than its neutral value, as the router's refusal whose message starts
// with provider ("openai", "azure"); nil when there is none. It decodes
// the body's top level only when the host lacks a field.
func Refusal(body []byte, unsupported []string, provider string) *router.Unservable {
	if len(unsupported) == 0 {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil // the host will say what is wrong with it
	}
	for _, f := range unsupported {
		if v, ok := top[f]; ok && !neutral(f, v) {
			return &router.Unservable{Param: f, Code: "unsupported_parameter",
				Message: provider + ": " + f + " is not supported by this provider (its unsupported list in the Fusebox configuration)"}
		}
	}
	return nil
}

// neutral reports whether v, the value of field f, asks for nothing the
// field would add: null, false, an empty list, n of 1, a text format.
func neutral(f string, v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	switch {
	case slices.Contains([]string{"null", "false", "[]", "{}"}, string(v)):
		return true
	case f == "n" || f == "top_logprobs":
		return (f == "n" && string(v) == "1") || (f == "top_logprobs" && string(v) == "0")
	case f == "response_format":
		var rf struct{ Type string }
		return json.Unmarshal(v, &rf) == nil && rf.Type == "text"
	case f == "tool_choice":
		return string(v) == `"none"`
	}
	return false
}
