package responses

import (
	"github.com/fuseboxhq/fusebox/aireq"
)

// The item types that translate to chat messages.
const (
	typeMessage    = "message"
	typeCall       = "function_call"
	typeCallOutput = "function_call_output"
	typeReasoning  = "reasoning"
)

// The content part types.
const (
	partInputText  = "input_text"
	partInputImage = "input_image"
	partInputFile  = "input_file"
	partOutputText = "output_text"
	partRefusal    = "refusal"
)

// An Item is one item of a conversation, in the Responses API's terms: a
// message, a function call, or a function call's output. The input a
// request was answered from and the output of its answer are lists of
// Items (Request.Input, Stored.Input and Stored.Output), and an earlier
// turn's Items are the history that ToChat puts in front of a request's
// input.
type Item struct {
	// Type is "message", "function_call" or "function_call_output".
	Type string
	// ID is the item's id: "msg_…", "fc_…"; it may be empty in a client's
	// input until the item is stored (NewStored gives one).
	ID string
	// Status is "completed", "incomplete", "in_progress", or "" when not
	// given.
	Status string

	// Role is a message's role: "user", "system", "developer" or "assistant".
	Role string
	// Content is a message's content (a string content is one text part),
	// or a function_call_output's output when given as content parts.
	Content []Part

	// CallID pairs a function call with its output.
	CallID string
	// Name is the function a function_call calls.
	Name string
	// Arguments are a function_call's arguments, a JSON text as the model
	// wrote it.
	Arguments string
	// Output is a function_call_output's output when given as a string.
	Output string
}

// A Part is one content part of an Item.
type Part struct {
	// Type is "input_text", "input_image" or "input_file" in user, system
	// and developer messages (only text in the latter two), "output_text"
	// or "refusal" in assistant messages, "input_text" in a function call
	// output.
	Type string
	// Text is the text of input_text and output_text, the refusal of a
	// refusal.
	Text string
	// ImageURL is an input_image's http(s) or data: URL.
	ImageURL string
	// Detail is an input_image's detail: "low", "high", "auto" or "".
	Detail string
	// FileData is an input_file's content, a base64 data: URL; Filename
	// its name.
	FileData string
	Filename string
}

// parseInput reads a request's input: a string (one user message) or a
// list of items. Reasoning items are left out: chat targets take no
// reasoning back.
func parseInput(raw []byte) ([]Item, error) {
	if raw[0] == '"' {
		return []Item{{Type: typeMessage, Role: "user", Content: []Part{{Type: partInputText, Text: decodeString(raw)}}}}, nil
	}
	if raw[0] != '[' {
		return nil, wrongType("", "a string or an array of items", raw)
	}
	items := make([]Item, 0, count(raw))
	err := elements(raw, func(_ int, el []byte) error {
		it, keep, err := parseItem(el)
		if keep {
			items = append(items, it)
		}
		return err
	})
	return items, err
}

// itemFields are the raw members of an item, the last of each name.
type itemFields struct {
	typ, id, status, role, content, callID, name, arguments, output []byte
	twice                                                           bool // "type" came more than once
}

func (f *itemFields) read(raw []byte) bool {
	return members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "type":
			f.twice = f.twice || f.typ != nil
			f.typ = v
		case "id":
			f.id = v
		case "status":
			f.status = v
		case "role":
			f.role = v
		case "content":
			f.content = v
		case "call_id":
			f.callID = v
		case "name":
			f.name = v
		case "arguments":
			f.arguments = v
		case "output":
			f.output = v
		}
	})
}

// parseItem reads one input item; keep is false for an item that
// translates to nothing (reasoning).
func parseItem(raw []byte) (it Item, keep bool, err error) {
	var f itemFields
	if raw[0] != '{' || !f.read(raw) {
		return it, false, wrongType("", "an object", raw)
	}
	if f.twice {
		return it, false, invalid("type", `an input item's "type" appears more than once (after unescaping its name): send it once`)
	}
	typ, err := readString("type", f.typ)
	if err != nil {
		return it, false, err
	}
	if typ == "" {
		if absent(f.role) {
			return it, false, missing("type")
		}
		typ = typeMessage // an "easy" input message: role and content only
	}
	if it.ID, err = readString("id", f.id); err != nil {
		return it, false, err
	}
	if it.Status, err = readString("status", f.status); err != nil {
		return it, false, err
	}
	it.Type = typ
	switch typ {
	case typeMessage:
		err = f.message(&it)
	case typeCall:
		err = f.call(&it)
	case typeCallOutput:
		err = f.callOutput(&it)
	case typeReasoning:
		return it, false, nil
	case "item_reference":
		err = refused("type", codeUnsupportedValue, "item references are not resolved by the gateway; send the item itself, or previous_response_id")
	default:
		err = unsupported("type", "input items of type "+quote(typ)+" cannot be served through chat completions targets")
	}
	return it, err == nil, err
}

func (f *itemFields) message(it *Item) error {
	role, err := needString("role", f.role)
	if err != nil {
		return err
	}
	switch role {
	case "user", "system", "developer", "assistant":
	default:
		return invalid("role", "want user, system, developer or assistant, got "+quote(role))
	}
	it.Role = role
	if absent(f.content) {
		return missing("content")
	}
	it.Content, err = parseContent("content", f.content, role)
	return err
}

func (f *itemFields) call(it *Item) error {
	var err error
	if it.CallID, err = needString("call_id", f.callID); err != nil {
		return err
	}
	if it.Name, err = needString("name", f.name); err != nil {
		return err
	}
	it.Arguments, err = readString("arguments", f.arguments)
	return err
}

func (f *itemFields) callOutput(it *Item) error {
	var err error
	if it.CallID, err = needString("call_id", f.callID); err != nil {
		return err
	}
	switch {
	case absent(f.output):
		return missing("output")
	case f.output[0] == '"':
		it.Output = decodeString(f.output)
		return nil
	}
	it.Content, err = parseContent("output", f.output, "tool")
	return err
}

// parseContent reads message content at param: a string, or a list of
// parts of the types role may send ("tool": a function call's output).
func parseContent(param string, raw []byte, role string) ([]Part, error) {
	if raw[0] == '"' {
		t := partInputText
		if role == "assistant" {
			t = partOutputText
		}
		return []Part{{Type: t, Text: decodeString(raw)}}, nil
	}
	if raw[0] != '[' {
		return nil, wrongType(param, "a string or an array of content parts", raw)
	}
	var parts []Part
	err := elements(raw, func(_ int, el []byte) error {
		p, err := parsePart(el, role)
		parts = append(parts, p)
		return err
	})
	if err != nil {
		return nil, errorUnder(err, param)
	}
	return parts, nil
}

// partFields are the raw members of a content part.
type partFields struct {
	typ, text, refusal, imageURL, fileID, detail, fileData, fileURL, filename []byte
}

func (f *partFields) read(raw []byte) bool {
	return members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "type":
			f.typ = v
		case "text":
			f.text = v
		case "refusal":
			f.refusal = v
		case "image_url":
			f.imageURL = v
		case "file_id":
			f.fileID = v
		case "detail":
			f.detail = v
		case "file_data":
			f.fileData = v
		case "file_url":
			f.fileURL = v
		case "filename":
			f.filename = v
		}
	})
}

// parsePart reads one content part of a message of role.
func parsePart(raw []byte, role string) (Part, error) {
	var f partFields
	var p Part
	if raw[0] != '{' || !f.read(raw) {
		return p, wrongType("", "an object", raw)
	}
	typ, err := needString("type", f.typ)
	if err != nil {
		return p, err
	}
	p.Type = typ
	if !partAllowed(typ, role) {
		return p, partRefused(typ, role)
	}
	switch typ {
	case partInputText, partOutputText:
		if absent(f.text) {
			return p, missing("text")
		}
		p.Text, err = readString("text", f.text)
	case partRefusal:
		if absent(f.refusal) {
			return p, missing("refusal")
		}
		p.Text, err = readString("refusal", f.refusal)
	case partInputImage:
		err = f.image(&p)
	case partInputFile:
		err = f.file(&p)
	}
	return p, err
}

// partAllowed reports whether a part of type typ may appear in a message
// of role, and be carried by a chat message.
func partAllowed(typ, role string) bool {
	switch typ {
	case partInputText:
		return role != "assistant"
	case partOutputText, partRefusal:
		return role == "assistant"
	case partInputImage, partInputFile:
		return role == "user"
	}
	return false
}

func partRefused(typ, role string) error {
	media := typ == partInputImage || typ == partInputFile
	switch {
	case media && role == "tool":
		// Valid for the Responses API, but chat tool messages carry text.
		return unsupported("type", "chat completions tool messages carry text only, not "+typ)
	case media && role != "assistant":
		return unsupported("type", "chat completions targets take "+typ+" parts only in user messages")
	case typ == partOutputText || typ == partRefusal:
		return invalid("type", quote(typ)+` parts belong in assistant messages; use "input_text"`)
	case role == "assistant":
		return invalid("type", `assistant messages take "output_text" and "refusal" parts, got `+quote(typ))
	}
	return invalid("type", `want "input_text", "input_image" or "input_file", got `+quote(typ))
}

func (f *partFields) image(p *Part) error {
	var err error
	if !absent(f.fileID) {
		return unsupported("file_id", "uploaded files cannot be read by chat completions targets; send image_url (an http(s) or data: URL)")
	}
	if p.ImageURL, err = needString("image_url", f.imageURL); err != nil {
		return err
	}
	p.Detail, err = readString("detail", f.detail)
	return err
}

func (f *partFields) file(p *Part) error {
	var err error
	switch {
	case !absent(f.fileID):
		return unsupported("file_id", "uploaded files cannot be read by chat completions targets; send file_data")
	case !absent(f.fileURL):
		return unsupported("file_url", "chat completions targets do not fetch files; send file_data")
	}
	if p.FileData, err = needString("file_data", f.fileData); err != nil {
		return err
	}
	p.Filename, err = readString("filename", f.filename)
	return err
}
