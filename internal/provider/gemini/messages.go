package gemini

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	pathpkg "path"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// chatMessage is one OpenAI chat message, as far as it is read.
type chatMessage = chatwire.Message[chatToolCall]

// chatToolCall is a tool call with the thought signature this package
// (and Gemini's own OpenAI endpoint) writes in answers' extra_content.
type chatToolCall struct {
	chatwire.ToolCall
	ExtraContent chatwire.ExtraContent `json:"extra_content"`
}

// chatPart is one OpenAI content part, with input_audio.
type chatPart struct {
	chatwire.Part
	InputAudio struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
}

// messages translates the conversation: system and developer messages go
// to systemInstruction, user turns to role user, assistant turns to role
// model, tool results to functionResponse parts in user turns; consecutive
// turns of one role are merged.
func (t *translator) messages(raw json.RawMessage) error {
	var msgs []chatMessage
	if err := decode("messages", raw, &msgs); err != nil {
		return err
	}
	calls := map[string]string{} // tool call ID → function name
	for i := range msgs {
		if err := t.message(i, &msgs[i], calls); err != nil {
			return err
		}
	}
	return nil
}

func (t *translator) message(i int, m *chatMessage, calls map[string]string) error {
	at := path("messages", i, "")
	if m.FunctionCall != nil && !isNull(m.FunctionCall) {
		return unsupported(at+".function_call", "the legacy functions API is not translated; use tool_calls")
	}
	if m.Audio != nil && !isNull(m.Audio) {
		return unsupported(at+".audio", "audio replies are not translated")
	}
	switch m.Role {
	case "system", "developer":
		parts, err := contentParts(at+".content", m.Content, false)
		if err != nil {
			return err
		}
		if len(parts) > 0 {
			if t.out.SystemInstruction == nil {
				t.out.SystemInstruction = &content{Role: "user"} // as Google's client writes it
			}
			t.out.SystemInstruction.Parts = append(t.out.SystemInstruction.Parts, parts...)
		}
	case "user":
		parts, err := contentParts(at+".content", m.Content, true)
		if err != nil {
			return err
		}
		t.add("user", parts)
	case "assistant":
		parts, err := assistantParts(at, m, calls)
		if err != nil {
			return err
		}
		t.add("model", parts)
	case "tool":
		p, err := toolResult(at, m, calls)
		if err != nil {
			return err
		}
		t.add("user", []part{p})
	case "function":
		return unsupported(at+".role", `the legacy "function" role is not translated; use "tool"`)
	default:
		return badValue(at+".role", CodeInvalidValue, "unknown role "+shown(m.Role))
	}
	return nil
}

// add appends parts as a turn of role, merged into the last turn when it
// has the same role. A turn with no parts is left out.
func (t *translator) add(role string, parts []part) {
	if len(parts) == 0 {
		return
	}
	if n := len(t.out.Contents); n > 0 && t.out.Contents[n-1].Role == role {
		last := &t.out.Contents[n-1]
		last.Parts = append(last.Parts, parts...)
		return
	}
	t.out.Contents = append(t.out.Contents, content{Role: role, Parts: parts})
}

func assistantParts(at string, m *chatMessage, calls map[string]string) ([]part, error) {
	parts, err := contentParts(at+".content", m.Content, false)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 && m.Refusal != nil && *m.Refusal != "" {
		parts = append(parts, part{Text: *m.Refusal})
	}
	for j := range m.ToolCalls {
		c := &m.ToolCalls[j]
		f := path(at+".tool_calls", j, "")
		if c.Type != "" && c.Type != "function" {
			return nil, badValue(f+".type", CodeUnsupportedValue, "only function tool calls are translated")
		}
		if c.ID == "" {
			return nil, badValue(f+".id", CodeInvalidValue, "is required")
		}
		if c.Function.Name == "" {
			return nil, badValue(f+".function.name", CodeInvalidValue, "is required")
		}
		args, err := toolArgs(c.Function.Arguments)
		if err != nil {
			return nil, badValue(f+".function.arguments", CodeInvalidValue, "must be a JSON object in a string")
		}
		calls[c.ID] = c.Function.Name
		parts = append(parts, part{
			FunctionCall:     &functionCall{Name: c.Function.Name, Args: args},
			ThoughtSignature: c.ExtraContent.Google.ThoughtSignature,
		})
	}
	return parts, nil
}

// toolArgs parses tool call arguments, a JSON object in a string.
func toolArgs(args string) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid([]byte(trimmed)) {
		return nil, errNotObject
	}
	return json.RawMessage(trimmed), nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errNotObject = constError("not a JSON object")

// toolResult turns a tool message into a functionResponse part named for
// the call it answers.
func toolResult(at string, m *chatMessage, calls map[string]string) (part, error) {
	if m.ToolCallID == "" {
		return part{}, badValue(at+".tool_call_id", CodeInvalidValue, "is required")
	}
	name, ok := calls[m.ToolCallID]
	if !ok {
		return part{}, badValue(at+".tool_call_id", CodeInvalidValue, "answers no tool call of an earlier assistant message")
	}
	parts, err := contentParts(at+".content", m.Content, false)
	if err != nil {
		return part{}, err
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return part{FunctionResponse: &functionResponse{Name: name, Response: toolOutputWrap{Output: b.String()}}}, nil
}

// contentParts translates message content: a string, or an array of parts
// (text and refusal always; images, audio and files where media is
// allowed). Empty text is left out.
func contentParts(at string, raw json.RawMessage, media bool) ([]part, error) {
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
		return []part{{Text: s}}, nil
	}
	var in []chatPart
	if err := decode(at, raw, &in); err != nil {
		return nil, err
	}
	parts := make([]part, 0, len(in))
	for i := range in {
		p, err := contentPart(path(at, i, ""), &in[i], media)
		if err != nil {
			return nil, err
		}
		if p != (part{}) {
			parts = append(parts, p)
		}
	}
	return parts, nil
}

func contentPart(pt string, p *chatPart, media bool) (part, error) {
	switch {
	case p.Type == "text":
		return part{Text: p.Text}, nil
	case p.Type == "refusal":
		return part{Text: p.Refusal}, nil
	case p.Type == "image_url" && media:
		return mediaPart(pt+".image_url.url", p.ImageURL.URL)
	case p.Type == "input_audio" && media:
		return audioPart(pt+".input_audio", p.InputAudio.Data, p.InputAudio.Format)
	case p.Type == "file" && media:
		if p.File.FileData == "" {
			return part{}, badValue(pt+".file.file_id", CodeUnsupportedValue, "uploaded files are not translated; send file_data")
		}
		mt, data, err := dataURL(pt+".file.file_data", p.File.FileData)
		if err != nil {
			return part{}, err
		}
		return part{InlineData: &blob{MimeType: mt, Data: data}}, nil
	}
	return part{}, badValue(pt+".type", CodeUnsupportedValue, "content part "+shown(p.Type)+" is not translated here")
}

// mediaPart turns an image URL into inline data (a data: URL) or a file
// reference (an https URL whose media type its name tells).
func mediaPart(at, u string) (part, error) {
	if strings.HasPrefix(u, "data:") {
		mt, data, err := dataURL(at, u)
		if err != nil {
			return part{}, err
		}
		return part{InlineData: &blob{MimeType: mt, Data: data}}, nil
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "https" || parsed.Host == "" {
		return part{}, badValue(at, CodeInvalidValue, "want an https URL or a base64 data: URL")
	}
	mt := mediaTypes[strings.ToLower(pathpkg.Ext(parsed.Path))]
	if mt == "" {
		return part{}, badValue(at, CodeUnsupportedValue, "Gemini needs the media type of a URL, and this URL's name does not tell it; send a data: URL")
	}
	return part{FileData: &fileData{MimeType: mt, FileURI: u}}, nil
}

// mediaTypes are the media types of the file name extensions Gemini takes
// by URL.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
	".gif": "image/gif", ".heic": "image/heic", ".heif": "image/heif", ".pdf": "application/pdf",
}

func audioPart(at, data, format string) (part, error) {
	var mt string
	switch format {
	case "wav":
		mt = "audio/wav"
	case "mp3":
		mt = "audio/mp3"
	default:
		return part{}, badValue(at+".format", CodeUnsupportedValue, "want wav or mp3, got "+shown(format))
	}
	if data == "" {
		return part{}, badValue(at+".data", CodeInvalidValue, "is required")
	}
	return part{InlineData: &blob{MimeType: mt, Data: data}}, nil
}

// dataURL splits data:<media type>;base64,<data>.
func dataURL(at, u string) (mediaType, data string, err error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", badValue(at, CodeInvalidValue, "want a base64 data: URL")
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", badValue(at, CodeInvalidValue, "a data: URL without a comma")
	}
	mediaType, enc, _ := strings.Cut(meta, ";")
	if !strings.EqualFold(enc, "base64") {
		return "", "", badValue(at, CodeUnsupportedValue, "only base64 data: URLs are translated")
	}
	if mediaType == "" || base64.StdEncoding.DecodedLen(len(data)) == 0 {
		return "", "", badValue(at, CodeInvalidValue, "a data: URL needs a media type and data")
	}
	return strings.ToLower(mediaType), data, nil
}
