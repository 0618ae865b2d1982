package sim

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// maxTools bounds a request's tools, as OpenAI does.
const maxTools = 128

// tool is a function a request offers the model.
type tool struct {
	name   string
	params any // the parameters schema, decoded; nil: none
}

// toolMode is what a request's tool_choice asks for.
type toolMode int

const (
	toolsAuto     toolMode = iota // a call when the user has just spoken
	toolsNone                     // never a call
	toolsRequired                 // always a call
	toolsNamed                    // always a call of the named tool
)

// toolSpec is what a request says about tools, whichever API it came by.
type toolSpec struct {
	tools    []tool
	mode     toolMode
	named    string
	parallel bool // more than one call in an answer is allowed
}

// turn is what the end of a conversation says: whether the user spoke
// last, and the tool results given since the model last spoke.
type turn struct {
	userLast bool
	results  []string
}

// requestError is a 400 for a bad parameter, in OpenAI's words.
type requestError struct{ param, code, msg string }

func invalidValue(param, msg string) *requestError {
	return &requestError{param: param, code: "invalid_value", msg: msg}
}

func missing(param string) *requestError {
	return &requestError{param: param, code: "missing_required_parameter", msg: "Missing required parameter: '" + param + "'."}
}

// readTool checks one function tool: at is its path (tools[2]); fn is
// where its name and parameters are (tools[2].function for chat, at
// itself for the Responses API).
func readTool(at, fn, typ, name string, params json.RawMessage) (tool, *requestError) {
	if typ != "function" {
		return tool{}, invalidValue(at+".type", "Invalid value: '"+clip(typ, 40)+"'. Supported values are: 'function'.")
	}
	if e := checkName(fn+".name", name); e != nil {
		return tool{}, e
	}
	t := tool{name: name}
	if len(params) == 0 || string(params) == "null" {
		return t, nil
	}
	schema, err := decodeSchema(params)
	m, isObject := schema.(map[string]any)
	if declared, ok := m["type"]; err != nil || !isObject || (ok && declared != "object") {
		got := "not an object"
		if s, ok := m["type"].(string); ok {
			got = `'type: "` + clip(s, 40) + `"'`
		}
		return tool{}, &requestError{param: fn + ".parameters", code: "invalid_function_parameters",
			msg: "Invalid schema for function '" + name + "': schema must be a JSON Schema of 'type: \"object\"', got " + got + "."}
	}
	t.params = schema
	return t, nil
}

// checkName checks a function or schema name as OpenAI does: 1 to 64 of
// a-z, A-Z, 0-9, _ and -.
func checkName(param, name string) *requestError {
	switch {
	case name == "":
		return missing(param)
	case len(name) > 64:
		return &requestError{param: param, code: "string_above_max_length",
			msg: "Invalid '" + param + "': string too long. Expected a string with maximum length 64, but got a string with length " + strconv.Itoa(len(name)) + " instead."}
	case strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) >= 0:
		return invalidValue(param, "Invalid '"+param+"': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.")
	}
	return nil
}

// tooMany is the error for more than maxTools tools.
func tooMany(n int) *requestError {
	return &requestError{param: "tools", code: "array_above_max_length",
		msg: "Invalid 'tools': array too long. Expected an array with maximum length " + strconv.Itoa(maxTools) + ", but got an array with length " + strconv.Itoa(n) + " instead."}
}

// readChoice reads tool_choice: a mode string, or an object naming a
// function (named reads the name from it, per API). It needs the tools
// read first.
func (ts *toolSpec) readChoice(raw json.RawMessage, named func(json.RawMessage) (string, bool)) *requestError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "auto":
		case "none":
			ts.mode = toolsNone
		case "required":
			ts.mode = toolsRequired
		default:
			return invalidValue("tool_choice", "Invalid value: '"+clip(mode, 40)+"'. Supported values are: 'none', 'auto', and 'required'.")
		}
	} else if name, ok := named(raw); ok {
		ts.mode, ts.named = toolsNamed, name
	} else {
		return invalidValue("tool_choice", "Invalid value for 'tool_choice': want 'none', 'auto', 'required' or a function tool by name.")
	}
	switch {
	case ts.mode == toolsNamed && !slices.ContainsFunc(ts.tools, func(t tool) bool { return t.name == ts.named }):
		return invalidValue("tool_choice", "Tool choice '"+clip(ts.named, 64)+"' not found in 'tools' parameter.")
	case len(ts.tools) == 0 && ts.mode >= toolsRequired:
		return invalidValue("tool_choice", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
	}
	return nil
}

// calls reports whether the answer to turn t is tool calls: always when
// the choice requires one, never with none, and otherwise when the user
// has just spoken rather than a tool.
func (ts *toolSpec) calls(t turn) bool {
	switch {
	case len(ts.tools) == 0 || ts.mode == toolsNone:
		return false
	case ts.mode == toolsRequired || ts.mode == toolsNamed:
		return true
	}
	return t.userLast && len(t.results) == 0
}

// toolCall is one call of a function in an answer.
type toolCall struct {
	id, name, args string
	parts          []string // args, a token each
}

// draw picks the calls of an answer: the named tool, or one tool drawn
// from the list, or, when parallel calls are allowed, on a coin flip two
// different ones; their arguments are drawn from their schemas.
func (ts *toolSpec) draw(rng *rand.Rand, anthropicIDs bool) []toolCall {
	var picks []tool
	switch n := len(ts.tools); {
	case ts.mode == toolsNamed:
		i := slices.IndexFunc(ts.tools, func(t tool) bool { return t.name == ts.named })
		picks = []tool{ts.tools[i]}
	case n > 1 && ts.parallel && rng.IntN(2) == 0:
		i := rng.IntN(n)
		picks = []tool{ts.tools[i], ts.tools[(i+1+rng.IntN(n-1))%n]}
	default:
		picks = []tool{ts.tools[rng.IntN(n)]}
	}
	calls := make([]toolCall, len(picks))
	for i, t := range picks {
		args, _ := generate(t.params, rng)
		calls[i] = toolCall{id: callID(rng, anthropicIDs), name: t.name, args: string(args), parts: splitTokens(string(args))}
	}
	return calls
}

// callID draws a tool call id: OpenAI's call_ and 24 letters and digits,
// or Anthropic's toolu_01 and 22.
func callID(rng *rand.Rand, anthropic bool) string {
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := []byte("call_")
	n := 24
	if anthropic {
		b, n = []byte("toolu_01"), 22
	}
	for range n {
		b = append(b, alnum[rng.IntN(len(alnum))])
	}
	return string(b)
}

// splitTokens cuts s into tokens of 4 bytes or a little more (never inside
// a UTF-8 sequence), as the sim counts JSON: a token per 4 bytes.
func splitTokens(s string) []string {
	out := make([]string, 0, (len(s)+3)/4)
	for len(s) > 0 {
		n := min(4, len(s))
		for n < len(s) && s[n]&0xc0 == 0x80 {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// mention returns the tokens, a word each, of a sentence quoting the tool
// results an answer follows.
func mention(results []string) []string {
	words := strings.Fields("Tool result: " + clip(strings.Join(strings.Fields(strings.Join(results, "; ")), " "), 120) + ".")
	for i := 1; i < len(words); i++ {
		words[i] = " " + words[i]
	}
	return words
}

// clip cuts s to at most n bytes, at a rune boundary, marking a cut with
// an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
