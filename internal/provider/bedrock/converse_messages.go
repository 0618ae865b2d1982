package bedrock

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// chatMessage is one OpenAI chat message, as far as it is read.
type chatMessage = chatwire.Message[chatwire.ToolCall]

// chatPart is one OpenAI content part; its file also has the filename a
// Converse document is named after.
type chatPart struct {
	chatwire.Part
	File struct {
		chatwire.File
		Filename string `json:"filename"`
	} `json:"file"` // in place of Part's
}

// messages translates the conversation: system and developer messages go
// to system, tool results to user turns, and consecutive turns of one role
// are merged, as Converse alternates roles.
func (t *converseTranslator) messages(raw json.RawMessage) error {
	var msgs []chatMessage
	if err := decode("messages", raw, &msgs); err != nil {
		return err
	}
	for i := range msgs {
		m := &msgs[i]
		at := index("messages", i, "")
		if isSet(m.FunctionCall) {
			return refuse(at+".function_call", CodeUnsupportedParameter, "the legacy functions API is not translated; use tool_calls")
		}
		if isSet(m.Audio) {
			return refuse(at+".audio", CodeUnsupportedParameter, "Converse targets do not take audio")
		}
		var blocks []cvBlock
		var err error
		role := "user"
		switch m.Role {
		case "system", "developer":
			if err := t.system(at+".content", m.Content); err != nil {
				return err
			}
			continue
		case "user":
			blocks, err = userBlocks(at+".content", m.Content)
		case "assistant":
			role = "assistant"
			blocks, err = t.assistantBlocks(at, m)
		case "tool":
			blocks, err = t.toolResult(at, m)
		default:
			return refuse(at+".role", CodeUnsupportedValue, "role "+strconv.Quote(clip(m.Role))+" is not translated")
		}
		if err != nil {
			return err
		}
		t.add(role, blocks)
	}
	return nil
}

func isSet(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// add appends blocks to the last turn when it has the same role.
func (t *converseTranslator) add(role string, blocks []cvBlock) {
	if len(blocks) == 0 {
		return
	}
	if n := len(t.out.Messages); n > 0 && t.out.Messages[n-1].Role == role {
		t.out.Messages[n-1].Content = append(t.out.Messages[n-1].Content, blocks...)
		return
	}
	t.out.Messages = append(t.out.Messages, cvMessage{Role: role, Content: blocks})
}

// system adds a system or developer message's text.
func (t *converseTranslator) system(at string, raw json.RawMessage) error {
	texts, err := textOnly(at, raw)
	for _, s := range texts {
		t.out.System = append(t.out.System, cvText{Text: s})
	}
	return err
}

// textOnly reads content that may hold only text: a string or text parts.
func textOnly(at string, raw json.RawMessage) ([]string, error) {
	if !isSet(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := decode(at, raw, &s); err != nil || s == "" {
			return nil, err
		}
		return []string{s}, nil
	}
	var parts []chatPart
	if err := decode(at, raw, &parts); err != nil {
		return nil, err
	}
	var out []string
	for i, p := range parts {
		if p.Type != "text" {
			return nil, refuse(index(at, i, "type"), CodeUnsupportedValue, "only text parts are translated here")
		}
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out, nil
}

// userBlocks translates a user message's content.
func userBlocks(at string, raw json.RawMessage) ([]cvBlock, error) {
	if !isSet(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := decode(at, raw, &s); err != nil || s == "" {
			return nil, err
		}
		return []cvBlock{{Text: s}}, nil
	}
	var parts []chatPart
	if err := decode(at, raw, &parts); err != nil {
		return nil, err
	}
	blocks := make([]cvBlock, 0, len(parts))
	for i := range parts {
		b, err := partBlock(index(at, i, "")+".", &parts[i], i)
		if err != nil {
			return nil, err
		}
		if b != (cvBlock{}) {
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

// partBlock translates one content part; an empty text gives no block.
func partBlock(at string, p *chatPart, i int) (cvBlock, error) {
	switch p.Type {
	case "text":
		return cvBlock{Text: p.Text}, nil
	case "image_url":
		media, data, ok := dataURL(p.ImageURL.URL)
		if !ok {
			return cvBlock{}, refuse(at+"image_url.url", CodeUnsupportedValue,
				"Converse takes images as bytes only: send a data: URL with base64 data")
		}
		format := imageFormat(media)
		if format == "" {
			return cvBlock{}, refuse(at+"image_url.url", CodeUnsupportedValue, "Converse takes png, jpeg, gif or webp images")
		}
		return cvBlock{Image: &cvMedia{Format: format, Source: cvSource{Bytes: data}}}, nil
	case "file":
		if p.File.FileID != "" {
			return cvBlock{}, refuse(at+"file.file_id", CodeUnsupportedParameter, "uploaded files are not translated; send file_data")
		}
		media, data, ok := dataURL(p.File.FileData)
		if !ok {
			return cvBlock{}, refuse(at+"file.file_data", CodeInvalidValue, "want a data: URL with base64 data")
		}
		format := documentFormat(media)
		if format == "" {
			return cvBlock{}, refuse(at+"file.file_data", CodeUnsupportedValue, "Converse does not take documents of type "+strconv.Quote(clip(media)))
		}
		return cvBlock{Document: &cvMedia{Format: format, Name: documentName(p.File.Filename, i), Source: cvSource{Bytes: data}}}, nil
	}
	return cvBlock{}, refuse(at+"type", CodeUnsupportedValue, "content parts of type "+strconv.Quote(clip(p.Type))+" are not translated")
}

// dataURL splits a base64 data: URL into its media type and data.
func dataURL(u string) (media, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	media, ok = strings.CutSuffix(head, ";base64")
	if !ok || data == "" {
		return "", "", false
	}
	if i := strings.IndexByte(media, ';'); i >= 0 {
		media = media[:i]
	}
	return strings.ToLower(media), data, true
}

func imageFormat(media string) string {
	switch media {
	case "image/png":
		return "png"
	case "image/jpeg", "image/jpg":
		return "jpeg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	}
	return ""
}

func documentFormat(media string) string {
	switch media {
	case "application/pdf":
		return "pdf"
	case "text/csv":
		return "csv"
	case "application/msword":
		return "doc"
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return "docx"
	case "application/vnd.ms-excel":
		return "xls"
	case "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":
		return "xlsx"
	case "text/html":
		return "html"
	case "text/plain":
		return "txt"
	case "text/markdown":
		return "md"
	}
	return ""
}

// documentName is a document's name as Converse allows it: letters,
// digits, single spaces, hyphens, parentheses and square brackets; others
// become hyphens. An empty name is document-N.
func documentName(filename string, i int) string {
	var b strings.Builder
	space := false
	for _, r := range filename {
		if b.Len() >= 100 {
			break
		}
		switch {
		case r == ' ':
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-()[]", r)):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		space = false
	}
	name := strings.TrimSpace(b.String())
	if name == "" {
		return "document-" + strconv.Itoa(i+1)
	}
	return name
}

// assistantBlocks translates an assistant message: its text, then its
// tool calls.
func (t *converseTranslator) assistantBlocks(at string, m *chatMessage) ([]cvBlock, error) {
	texts, err := textOrRefusal(at+".content", m.Content)
	if err != nil {
		return nil, err
	}
	blocks := make([]cvBlock, 0, len(texts)+len(m.ToolCalls)+1)
	for _, s := range texts {
		blocks = append(blocks, cvBlock{Text: s})
	}
	if m.Refusal != nil && *m.Refusal != "" {
		blocks = append(blocks, cvBlock{Text: *m.Refusal})
	}
	for i, c := range m.ToolCalls {
		call := index(at+".tool_calls", i, "")
		if c.Type != "" && c.Type != "function" {
			return nil, refuse(call+".type", CodeUnsupportedValue, "only function tool calls are translated")
		}
		input, ok := toolInput(c.Function.Arguments)
		if !ok {
			return nil, refuse(call+".function.arguments", CodeInvalidValue, "want a JSON object")
		}
		if c.ID == "" || c.Function.Name == "" {
			return nil, refuse(call+".id", CodeInvalidValue, "a tool call needs an id and a function name")
		}
		t.toolBlocks = true
		blocks = append(blocks, cvBlock{ToolUse: &cvToolUse{ToolUseID: toolID(c.ID), Name: c.Function.Name, Input: input}})
	}
	return blocks, nil
}

// textOrRefusal reads assistant content: a string, text and refusal parts.
func textOrRefusal(at string, raw json.RawMessage) ([]string, error) {
	if !isSet(raw) || raw[0] == '"' {
		return textOnly(at, raw)
	}
	var parts []chatPart
	if err := decode(at, raw, &parts); err != nil {
		return nil, err
	}
	var out []string
	for i, p := range parts {
		switch {
		case p.Type == "text" && p.Text != "":
			out = append(out, p.Text)
		case p.Type == "refusal" && p.Refusal != "":
			out = append(out, p.Refusal)
		case p.Type != "text" && p.Type != "refusal":
			return nil, refuse(index(at, i, "type"), CodeUnsupportedValue, "only text and refusal parts are translated here")
		}
	}
	return out, nil
}

// toolInput parses tool call arguments, which must be a JSON object; ""
// means {}.
func toolInput(args string) (json.RawMessage, bool) {
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`), true
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, false
	}
	var b bytes.Buffer
	if json.Compact(&b, trimmed) != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// toolResult translates a tool message into a user turn's toolResult.
func (t *converseTranslator) toolResult(at string, m *chatMessage) ([]cvBlock, error) {
	if m.ToolCallID == "" {
		return nil, refuse(at+".tool_call_id", CodeInvalidValue, "is required")
	}
	texts, err := textOnly(at+".content", m.Content)
	if err != nil {
		return nil, err
	}
	content := make([]cvText, 0, len(texts))
	for _, s := range texts {
		content = append(content, cvText{Text: s})
	}
	if len(content) == 0 {
		content = append(content, cvText{Text: " "}) // Converse refuses an empty result
	}
	t.toolBlocks = true
	return []cvBlock{{ToolResult: &cvToolResult{ToolUseID: toolID(m.ToolCallID), Content: content}}}, nil
}

// toolID makes a tool call ID fit Converse's [a-zA-Z0-9_-]+: other bytes
// become "_", in calls and results alike, so they still pair.
func toolID(id string) string {
	ok := true
	for i := 0; i < len(id) && ok; i++ {
		ok = idByte(id[i])
	}
	if ok && len(id) <= 64 {
		return id
	}
	b := []byte(id)
	if len(b) > 64 {
		b = b[:64]
	}
	for i, c := range b {
		if !idByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
