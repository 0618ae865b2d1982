package responses

import "strings"

// The state of the last message written, which a function call may join.
const (
	closed        = iota
	openAssistant // an assistant message without tool_calls, its "}" not written
	openCalls     // an assistant message's tool_calls, its "]}" not written
)

// messageWriter writes the chat messages.
type messageWriter struct {
	b     []byte
	state int
	calls map[string]struct{} // the call ids of the function calls so far
}

// appendMessages writes the instructions as a system message, then the
// input items as chat messages: consecutive function calls, and the calls
// right after an assistant message, form one assistant message with
// tool_calls; each function call output is a tool message.
func (c *chatRequest) appendMessages(b []byte, req *Request) ([]byte, error) {
	w := messageWriter{b: b}
	if c.instructions != "" {
		w.b = append(w.b, `{"role":"system","content":`...)
		w.b = append(appendString(w.b, c.instructions), '}')
	}
	for i := range req.Input {
		it := &req.Input[i]
		switch it.Type {
		case typeMessage:
			w.message(it)
		case typeCall:
			w.call(it)
		case typeCallOutput:
			if _, ok := w.calls[it.CallID]; !ok && i >= req.own {
				return nil, invalid(index("input", i-req.own, "call_id"), "no function call with call_id "+quote(it.CallID)+" comes before this output")
			}
			w.output(it)
		}
	}
	w.close()
	return w.b, nil
}

// start begins a message, closing the one before.
func (w *messageWriter) start(role string) {
	w.close()
	if n := len(w.b); n > 0 && w.b[n-1] != '[' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, `{"role":`...)
	w.b = appendString(w.b, role)
}

func (w *messageWriter) close() {
	switch w.state {
	case openAssistant:
		w.b = append(w.b, '}')
	case openCalls:
		w.b = append(w.b, ']', '}')
	}
	w.state = closed
}

func (w *messageWriter) message(it *Item) {
	role := it.Role
	if role == "developer" {
		// The same for OpenAI (its chat API reads system messages to
		// reasoning models as developer messages), and known to every
		// chat target, which "developer" is not.
		role = "system"
	}
	w.start(role)
	if it.Role == "assistant" {
		text, refusal := assistantText(it.Content)
		w.b = appendString(appendKey(w.b, "content"), text)
		if refusal != "" {
			w.b = appendStringMember(w.b, "refusal", refusal)
		}
		w.state = openAssistant
		return
	}
	w.b = appendKey(w.b, "content")
	w.b = appendContent(w.b, it.Content)
	w.b = append(w.b, '}')
}

// assistantText joins an assistant message's text parts, and its refusal
// parts.
func assistantText(parts []Part) (text, refusal string) {
	if len(parts) == 1 { // the common case, without a copy
		if parts[0].Type == partRefusal {
			return "", parts[0].Text
		}
		return parts[0].Text, ""
	}
	var t, r strings.Builder
	for _, p := range parts {
		if p.Type == partRefusal {
			r.WriteString(p.Text)
		} else {
			t.WriteString(p.Text)
		}
	}
	return t.String(), r.String()
}

// appendContent appends a user, system or developer message's content, or
// a tool message's: one text part as a string, otherwise chat parts.
func appendContent(b []byte, parts []Part) []byte {
	if len(parts) == 1 && parts[0].Type == partInputText {
		return appendString(b, parts[0].Text)
	}
	if len(parts) == 0 {
		return append(b, `""`...)
	}
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		switch p.Type {
		case partInputImage:
			b = append(b, `{"type":"image_url","image_url":{"url":`...)
			b = appendString(b, p.ImageURL)
			if p.Detail != "" {
				b = appendStringMember(b, "detail", p.Detail)
			}
			b = append(b, '}', '}')
		case partInputFile:
			b = append(b, `{"type":"file","file":{"file_data":`...)
			b = appendString(b, p.FileData)
			if p.Filename != "" {
				b = appendStringMember(b, "filename", p.Filename)
			}
			b = append(b, '}', '}')
		default:
			b = append(b, `{"type":"text","text":`...)
			b = append(appendString(b, p.Text), '}')
		}
	}
	return append(b, ']')
}

// call adds a function call to the open assistant message, or to a new
// one.
func (w *messageWriter) call(it *Item) {
	switch w.state {
	case openAssistant:
		w.b = append(appendKey(w.b, "tool_calls"), '[')
	case openCalls:
		w.b = append(w.b, ',')
	default:
		w.start("assistant")
		w.b = append(w.b, `,"content":null,"tool_calls":[`...)
	}
	w.state = openCalls
	w.b = append(w.b, `{"id":`...)
	w.b = appendString(w.b, it.CallID)
	w.b = append(w.b, `,"type":"function","function":{"name":`...)
	w.b = appendString(w.b, it.Name)
	w.b = appendStringMember(w.b, "arguments", it.Arguments)
	w.b = append(w.b, '}', '}')
	if w.calls == nil {
		w.calls = make(map[string]struct{})
	}
	w.calls[it.CallID] = struct{}{}
}

// output writes a function call's output as a tool message.
func (w *messageWriter) output(it *Item) {
	w.start("tool")
	w.b = appendStringMember(w.b, "tool_call_id", it.CallID)
	w.b = appendKey(w.b, "content")
	if it.Content != nil {
		w.b = appendContent(w.b, it.Content)
	} else {
		w.b = appendString(w.b, it.Output)
	}
	w.b = append(w.b, '}')
}
