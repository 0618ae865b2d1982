package sim

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
)

// maxChoices bounds n, the choices a chat completion asks for.
const maxChoices = 8

// Reply formats: what a text answer is written in.
const (
	formatText       = "text"
	formatJSONObject = "json_object"
	formatJSONSchema = "json_schema"
)

// ask is what shapes a call's answers, whichever API it came by.
type ask struct {
	tools        toolSpec
	format       string
	schema       any // of formatJSONSchema, decoded
	turn         turn
	limit        int // the most tokens an answer may have; 0: no limit
	n            int // answers (choices), at least 1
	anthropicIDs bool
}

// answer is one choice of a reply: content, or tool calls.
type answer struct {
	tokens []string // the content, a token each
	calls  []toolCall
	finish string // stop, length or tool_calls
}

// content returns the answer's text.
func (a *answer) content() string { return concat(a.tokens) }

// completionTokens counts the answer's tokens: content, or the arguments
// of its tool calls.
func (a *answer) completionTokens() int {
	n := len(a.tokens)
	for _, c := range a.calls {
		n += len(c.parts)
	}
	return n
}

// budget is what a call's answers are expected to take from the TPM limit,
// before they are drawn: n replies of Output.Tokens, cut at the limit.
func (s *Server) budget(k *ask) int {
	n := s.cfg.Output.tokens()
	if k.limit > 0 {
		n = min(n, k.limit)
	}
	return k.n * n
}

// answers draws a call's answers from its seed: the first from the seed
// itself (so that a plain reply reads as it always has), the others from
// seeds derived from it.
func (s *Server) answers(k *ask, seed uint64) []answer {
	out := make([]answer, k.n)
	for i := range out {
		out[i] = s.answer(k, seed+uint64(i)*0x9e3779b97f4a7c15)
	}
	return out
}

// answer draws one answer: tool calls when the request's tools and the
// turn call for them, else text (quoting any tool results first) or JSON
// in the requested format.
func (s *Server) answer(k *ask, seed uint64) answer {
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7001)) } // plain text draws none
	if k.tools.calls(k.turn) {
		return answer{calls: k.tools.draw(rng(), k.anthropicIDs), finish: "tool_calls"}
	}
	var pre []string
	if len(k.turn.results) > 0 {
		pre = mention(k.turn.results)
	}
	switch k.format {
	case formatJSONObject:
		text := concat(pre) + concat(after(pre, replyTokens(seed, s.cfg.Output.tokens())))
		doc, _ := json.Marshal(struct {
			Reply string `json:"reply"`
		}{text})
		return cut(splitTokens(string(doc)), k.limit)
	case formatJSONSchema:
		doc, _ := generate(k.schema, rng())
		return cut(splitTokens(string(doc)), k.limit)
	}
	n, finish := s.cfg.Output.tokens(), "stop"
	if k.limit > 0 && k.limit < len(pre)+n {
		n, finish = max(0, k.limit-len(pre)), "length"
		pre = pre[:min(len(pre), k.limit)]
	}
	words := replyTokens(seed, n)
	if len(pre) == 0 {
		return answer{tokens: words, finish: finish}
	}
	return answer{tokens: append(pre, after(pre, words)...), finish: finish}
}

// after returns reply words to follow pre: the first spaced when pre is
// not empty.
func after(pre, words []string) []string {
	if len(pre) > 0 && len(words) > 0 {
		words[0] = " " + words[0]
	}
	return words
}

// cut makes an answer of tokens, cut at limit with finish_reason length;
// cut JSON is left broken, as a provider leaves it.
func cut(tokens []string, limit int) answer {
	if limit > 0 && len(tokens) > limit {
		return answer{tokens: tokens[:limit], finish: "length"}
	}
	return answer{tokens: tokens, finish: "stop"}
}

// formatSpec is a response format as a request gives it: chat's
// response_format, the Responses API's text.format.
type formatSpec struct {
	at       string // its path
	typ      string
	schemaAt string // the path of its json_schema's fields; "" when it has none
	name     string
	schema   json.RawMessage
}

// readFormat checks a response format and sets k's.
func readFormat(k *ask, f formatSpec) *requestError {
	switch f.typ {
	case "", formatText:
		k.format = formatText
		return nil
	case formatJSONObject:
		k.format = formatJSONObject
		return nil
	case formatJSONSchema:
	default:
		return invalidValue(f.at+".type", "Invalid value: '"+clip(f.typ, 40)+"'. Supported values are: 'text', 'json_object', and 'json_schema'.")
	}
	if f.schemaAt == "" {
		return missing(f.at + ".json_schema")
	}
	k.format = formatJSONSchema
	if e := checkName(f.schemaAt+".name", f.name); e != nil {
		return e
	}
	if len(f.schema) == 0 || string(f.schema) == "null" {
		return nil // generate gives {}
	}
	v, err := decodeSchema(f.schema)
	if _, ok := v.(map[string]any); err != nil || !ok {
		return invalidValue(f.schemaAt+".schema", "Invalid schema for response_format '"+f.name+"': the schema must be a JSON object.")
	}
	k.schema = v
	return nil
}

// readN checks a chat completion's n: 1 to maxChoices; nil means 1.
func readN(n *int) (int, *requestError) {
	switch {
	case n == nil:
		return 1, nil
	case *n < 1:
		return 0, &requestError{param: "n", code: "integer_below_min_value",
			msg: "Invalid 'n': integer below minimum value. Expected a value >= 1, but got " + strconv.Itoa(*n) + " instead."}
	case *n > maxChoices:
		return 0, &requestError{param: "n", code: "integer_above_max_value",
			msg: "Invalid 'n': integer above maximum value. Expected a value <= " + strconv.Itoa(maxChoices) + ", but got " + strconv.Itoa(*n) + " instead."}
	}
	return *n, nil
}
