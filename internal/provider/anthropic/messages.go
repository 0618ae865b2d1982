package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// chatMessage is one OpenAI chat message, as far as it is read.
type chatMessage = chatwire.Message[chatwire.ToolCall]

// chatPart is one OpenAI content part.
type chatPart = chatwire.Part

// messages translates the conversation: system and developer messages go
// to system, tool results to user turns, and consecutive turns of the same
// role are merged, as Anthropic requires alternating turns.
func (t *translator) messages(raw json.RawMessage) error {
	var msgs []chatMessage
	if err := decode("messages", raw, &msgs); err != nil {
		return err
	}
	var system []string
	for i := range msgs {
		m := &msgs[i]
		at := path("messages", i, "")
		if m.FunctionCall != nil && !isNull(m.FunctionCall) {
			return unsupported(at+".function_call", "the legacy functions API is not translated; use tool_calls")
		}
		if m.Audio != nil && !isNull(m.Audio) {
			return unsupported(at+".audio", "Anthropic targets do not take audio")
		}
		switch m.Role {
		case "system", "developer":
			text, err := systemText(at+".content", m.Content)
			if err != nil {
				return err
			}
			if text != "" {
				system = append(system, text)
			}
		case "user":
			blocks, err := contentBlocks(at+".content", m.Content, true)
			if err != nil {
				return err
			}
			t.add("user", blocks)
		case "assistant":
			blocks, err := assistantBlocks(at, m)
			if err != nil {
				return err
			}
			t.add("assistant", blocks)
		case "tool":
			blocks, err := contentBlocks(at+".content", m.Content, false)
			if err != nil {
				return err
			}
			if m.ToolCallID == "" {
				return badValue(at+".tool_call_id", CodeInvalidValue, "is required")
			}
			t.add("user", []block{{Type: "tool_result", ToolUseID: toolID(m.ToolCallID), Content: blocks}})
		case "function":
			return unsupported(at+".role", `the legacy "function" role is not translated; use "tool"`)
		default:
			return badValue(at+".role", CodeInvalidValue, "unknown role "+strconv.Quote(m.Role))
		}
	}
	t.out.System = strings.Join(system, "\n\n")
	return nil
}

// add appends blocks as a turn of role, merged into the last turn when it
// has the same role. A turn with no blocks carries nothing and is left out.
func (t *translator) add(role string, blocks []block) {
	if len(blocks) == 0 {
		return
	}
	if n := len(t.out.Messages); n > 0 && t.out.Messages[n-1].Role == role {
		last := &t.out.Messages[n-1]
		last.Content = append(last.Content, blocks...)
		return
	}
	t.out.Messages = append(t.out.Messages, message{Role: role, Content: blocks})
}

func assistantBlocks(at string, m *chatMessage) ([]block, error) {
	blocks, err := contentBlocks(at+".content", m.Content, false)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 && m.Refusal != nil && *m.Refusal != "" {
		blocks = append(blocks, block{Type: "text", Text: *m.Refusal})
	}
	for j, c := range m.ToolCalls {
		f := path(at+".tool_calls", j, "")
		if c.Type != "" && c.Type != "function" {
			return nil, badValue(f+".type", CodeUnsupportedValue, "only function tool calls are translated")
		}
		if c.ID == "" {
			return nil, badValue(f+".id", CodeInvalidValue, "is required")
		}
		input, err := toolInput(c.Function.Arguments)
		if err != nil {
			return nil, badValue(f+".function.arguments", CodeInvalidValue, err.Error())
		}
		blocks = append(blocks, block{Type: "tool_use", ID: toolID(c.ID), Name: c.Function.Name, Input: input})
	}
	return blocks, nil
}

// toolInput parses tool call arguments, a JSON object in a string.
func toolInput(args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}"), nil
	}
	trimmed := strings.TrimSpace(args)
	if trimmed[0] != '{' || !json.Valid([]byte(trimmed)) {
		return nil, errNotObject
	}
	return json.RawMessage(trimmed), nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errNotObject = constError("must be a JSON object in a string")

// systemText joins the text of a system or developer message.
func systemText(at string, raw json.RawMessage) (string, error) {
	blocks, err := contentBlocks(at, raw, false)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String(), nil
}

// contentBlocks translates message content: a string, or an array of
// parts (text and refusal always; image_url and file where media is
// allowed). Empty text is left out, as Anthropic refuses empty blocks.
func contentBlocks(at string, raw json.RawMessage, media bool) ([]block, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := decode(at, raw, &s); err != nil {
			return nil, err
		}
		if s == "" {
			return nil, nil
		}
		return []block{{Type: "text", Text: s}}, nil
	}
	var parts []chatPart
	if err := decode(at, raw, &parts); err != nil {
		return nil, err
	}
	blocks := make([]block, 0, len(parts))
	for i := range parts {
		p := &parts[i]
		pt := path(at, i, "")
		var b block
		switch {
		case p.Type == "text":
			b = block{Type: "text", Text: p.Text}
		case p.Type == "refusal":
			b = block{Type: "text", Text: p.Refusal}
		case p.Type == "image_url" && media:
			src, err := imageSource(pt+".image_url.url", p.ImageURL.URL)
			if err != nil {
				return nil, err
			}
			b = block{Type: "image", Source: src}
		case p.Type == "file" && media:
			src, err := fileSource(pt+".file", p)
			if err != nil {
				return nil, err
			}
			b = block{Type: "document", Source: src}
		default:
			return nil, badValue(pt+".type", CodeUnsupportedValue, "content part "+strconv.Quote(p.Type)+" is not translated here")
		}
		if b.Type == "text" && b.Text == "" {
			continue
		}
		b.CacheControl = p.CacheControl
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// imageMediaTypes are the image types Anthropic accepts.
var imageMediaTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// imageSource turns an image URL into a source: an http(s) URL as is, a
// base64 data URL into its media type and data.
func imageSource(at, u string) (*source, error) {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return &source{Type: "url", URL: u}, nil
	}
	mt, data, err := dataURL(at, u)
	if err != nil {
		return nil, err
	}
	for _, ok := range imageMediaTypes {
		if mt == ok {
			return &source{Type: "base64", MediaType: mt, Data: data}, nil
		}
	}
	return nil, badValue(at, CodeUnsupportedValue, "Anthropic accepts images of type "+strings.Join(imageMediaTypes, ", ")+", got "+strconv.Quote(mt))
}

// fileSource turns a file part holding a PDF data URL into a document
// source.
func fileSource(at string, p *chatPart) (*source, error) {
	if p.File.FileData == "" {
		return nil, badValue(at+".file_id", CodeUnsupportedValue, "uploaded files are not translated; send file_data")
	}
	mt, data, err := dataURL(at+".file_data", p.File.FileData)
	if err != nil {
		return nil, err
	}
	if mt != "application/pdf" {
		return nil, badValue(at+".file_data", CodeUnsupportedValue, "Anthropic targets take PDF documents, got "+strconv.Quote(mt))
	}
	return &source{Type: "base64", MediaType: mt, Data: data}, nil
}

// dataURL splits data:<media type>;base64,<data>.
func dataURL(at, u string) (mediaType, data string, err error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", badValue(at, CodeInvalidValue, "want an http(s) URL or a base64 data: URL")
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", badValue(at, CodeInvalidValue, "a data: URL without a comma")
	}
	mediaType, enc, _ := strings.Cut(meta, ";")
	if !strings.EqualFold(enc, "base64") {
		return "", "", badValue(at, CodeUnsupportedValue, "only base64 data: URLs are translated")
	}
	if base64.StdEncoding.DecodedLen(len(data)) == 0 {
		return "", "", badValue(at, CodeInvalidValue, "empty data")
	}
	return strings.ToLower(mediaType), data, nil
}

// toolID makes a tool call ID acceptable to Anthropic, whose IDs match
// ^[a-zA-Z0-9_-]+$: other bytes become "_". The mapping is the same for a
// tool call and its result, so they still pair.
func toolID(id string) string {
	ok := true
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	b := []byte(id)
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
