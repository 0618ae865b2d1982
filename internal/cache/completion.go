package cache

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
)

// completion is a chat completion held field by field: what Assembler
// builds from stream chunks and Replay takes apart again. Raw values are
// JSON text (nil when absent).
type completion struct {
	id, created, model json.RawMessage
	fingerprint, tier  json.RawMessage // system_fingerprint, service_tier
	usage              json.RawMessage
	choices            map[int]*choice
}

// choice is one choice's message as it accumulates.
type choice struct {
	index    int
	role     string
	texts    []textField // content and refusal first, then other string fields in order met
	tools    map[int]*toolCall
	fn       *toolCall // the legacy function_call
	raws     []rawField
	logprobs *logprobs
	finish   json.RawMessage
}

// textField is a string field of a message, joined from deltas.
type textField struct {
	name string
	val  []byte
	set  bool // a string was seen (content "" differs from content null)
}

// rawField is a non-string message field (audio, annotations…): the last
// value seen wins.
type rawField struct {
	name string
	val  json.RawMessage
}

// toolCall is a tool call assembled by index.
type toolCall struct {
	index         int
	id, typ, name string
	args          []byte
}

// logprobs joins the token lists of the choice's logprobs.
type logprobs struct {
	content, refusal       []json.RawMessage
	contentSet, refusalSet bool
}

func newChoice(index int) *choice {
	return &choice{index: index, texts: []textField{{name: "content"}, {name: "refusal"}}}
}

func (c *choice) text(name string) *textField {
	for i := range c.texts {
		if c.texts[i].name == name {
			return &c.texts[i]
		}
	}
	c.texts = append(c.texts, textField{name: name})
	return &c.texts[len(c.texts)-1]
}

// hasText reports whether the choice has the string field name.
func (c *choice) hasText(name string) bool {
	for i := range c.texts {
		if c.texts[i].name == name {
			return c.texts[i].set
		}
	}
	return false
}

// raw reports whether the choice has the non-string field name.
func (c *choice) raw(name string) bool {
	for i := range c.raws {
		if c.raws[i].name == name {
			return true
		}
	}
	return false
}

func (c *choice) setRaw(name string, val json.RawMessage) {
	for i := range c.raws {
		if c.raws[i].name == name {
			c.raws[i].val = val
			return
		}
	}
	c.raws = append(c.raws, rawField{name, val})
}

func (c *choice) tool(index int) *toolCall {
	if c.tools == nil {
		c.tools = make(map[int]*toolCall)
	}
	t := c.tools[index]
	if t == nil {
		t = &toolCall{index: index}
		c.tools[index] = t
	}
	return t
}

// toolList returns the tool calls in index order.
func (c *choice) toolList() []*toolCall {
	ts := make([]*toolCall, 0, len(c.tools))
	for _, t := range c.tools {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *toolCall) int { return cmp.Compare(a.index, b.index) })
	return ts
}

func (c *completion) choice(index int) *choice {
	if c.choices == nil {
		c.choices = make(map[int]*choice)
	}
	ch := c.choices[index]
	if ch == nil {
		ch = newChoice(index)
		c.choices[index] = ch
	}
	return ch
}

// choiceList returns the choices in index order.
func (c *completion) choiceList() []*choice {
	cs := make([]*choice, 0, len(c.choices))
	for _, ch := range c.choices {
		cs = append(cs, ch)
	}
	slices.SortFunc(cs, func(a, b *choice) int { return cmp.Compare(a.index, b.index) })
	return cs
}

// render writes c as a chat.completion JSON body.
func (c *completion) render() []byte {
	b := make([]byte, 0, 512)
	b = append(b, `{"id":`...)
	b = appendRawOr(b, c.id, `""`)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = appendRawOr(b, c.created, `0`)
	b = append(b, `,"model":`...)
	b = appendRawOr(b, c.model, `""`)
	b = append(b, `,"choices":[`...)
	for i, ch := range c.choiceList() {
		if i > 0 {
			b = append(b, ',')
		}
		b = ch.render(b)
	}
	b = append(b, ']')
	b = appendField(b, "usage", c.usage)
	b = appendField(b, "system_fingerprint", c.fingerprint)
	b = appendField(b, "service_tier", c.tier)
	return append(b, '}')
}

func (ch *choice) render(b []byte) []byte {
	b = append(b, `{"index":`...)
	b = appendInt(b, ch.index)
	b = append(b, `,"message":{"role":`...)
	role := ch.role
	if role == "" {
		role = "assistant"
	}
	b = appendString(b, role)
	for _, t := range ch.texts {
		if !t.set && t.name != "content" && t.name != "refusal" {
			continue
		}
		b = append(b, ',')
		b = appendString(b, t.name)
		b = append(b, ':')
		if t.set {
			b = appendString(b, t.val)
		} else {
			b = append(b, "null"...)
		}
	}
	if len(ch.tools) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, t := range ch.toolList() {
			if i > 0 {
				b = append(b, ',')
			}
			typ := t.typ
			if typ == "" {
				typ = "function"
			}
			b = append(b, `{"id":`...)
			b = appendString(b, t.id)
			b = append(b, `,"type":`...)
			b = appendString(b, typ)
			b = append(b, `,"function":`...)
			b = appendFunction(b, t.name, t.args)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if ch.fn != nil {
		b = append(b, `,"function_call":`...)
		b = appendFunction(b, ch.fn.name, ch.fn.args)
	}
	for _, r := range ch.raws {
		b = appendField(b, r.name, r.val)
	}
	b = append(b, `},"logprobs":`...)
	if lp := ch.logprobs; lp != nil {
		b = append(b, `{"content":`...)
		b = appendRawList(b, lp.content, lp.contentSet)
		b = append(b, `,"refusal":`...)
		b = appendRawList(b, lp.refusal, lp.refusalSet)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"finish_reason":`...)
	b = appendRawOr(b, ch.finish, "null")
	return append(b, '}')
}

func appendFunction(b []byte, name string, args []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, name)
	b = append(b, `,"arguments":`...)
	b = appendString(b, args)
	return append(b, '}')
}

func appendRawList(b []byte, list []json.RawMessage, set bool) []byte {
	if !set {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return append(b, ']')
}

// appendField appends ,"name":val when val is present.
func appendField(b []byte, name string, val json.RawMessage) []byte {
	if val == nil {
		return b
	}
	b = append(b, ',')
	b = appendString(b, name)
	b = append(b, ':')
	return append(b, val...)
}

func appendRawOr(b []byte, val json.RawMessage, def string) []byte {
	if val == nil {
		return append(b, def...)
	}
	return append(b, val...)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// isNull reports whether raw is absent or the JSON null.
func isNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// compact returns raw without insignificant whitespace, or nil when it is
// absent or null, so that it can go into an SSE data line.
func compact(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// stringValue returns the string a JSON string literal holds; ok is false
// when raw is not a string.
func stringValue(raw []byte) (s []byte, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	return unescape(raw), true
}

// members calls fn for each member of the JSON object obj, in order; obj
// must be valid JSON (as from json.Unmarshal). Non-objects call nothing.
func members(obj []byte, fn func(key string, val []byte)) {
	i := skipSpace(obj, 0)
	if i == len(obj) || obj[i] != '{' {
		return
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		kend := skipString(obj, i)
		key, _ := stringValue(obj[i:kend])
		vstart := skipSpace(obj, skipSpace(obj, kend)+1)
		vend := skipValue(obj, vstart)
		fn(string(key), obj[vstart:vend])
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
}
