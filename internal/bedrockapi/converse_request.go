package bedrockapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"
)

// chatRequest is the OpenAI chat body a Converse request becomes.
type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []chatMessage  `json:"messages"`
	MaxTokens     *int64         `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	TopK          *int64         `json:"top_k,omitempty"`
	Stop          []string       `json:"stop,omitempty"`
	Tools         []chatTool     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"` // a string, []chatPart, or nil for null
	ToolCalls  []chatCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type chatPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *chatURL  `json:"image_url,omitempty"`
	File     *chatFile `json:"file,omitempty"`
}

type chatURL struct {
	URL string `json:"url"`
}

type chatFile struct {
	Filename string `json:"filename"`
	FileData string `json:"file_data"`
}

type chatCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function chatFunc `json:"function"`
}

type chatFunc struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function chatToolDef `json:"function"`
}

type chatToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// converter holds a Converse request's translation in progress.
type converter struct {
	req      obj
	out      chatRequest
	toolUses map[string]bool // the toolUseIds of the last assistant turn
	usesTool string          // the path of a toolUse or toolResult block, if any
	tools    map[string]bool // the tools toolConfig declares
}

// ConverseToChat turns a Converse or ConverseStream request body (the
// model id is from the URL path) into an OpenAI chat completion body for
// that model; stream marks ConverseStream, which asks for a stream with
// stream_options.include_usage so its usage comes back. A request Bedrock
// would refuse, or one the translation cannot carry faithfully, is refused
// with an *Error, a ValidationException naming the field. See the package
// documentation for the mapping.
func ConverseToChat(modelID string, body []byte, stream bool) ([]byte, error) {
	if modelID == "" {
		return nil, invalid("modelId", "is required")
	}
	req, err := readBody(body)
	if err != nil {
		return nil, err
	}
	c := converter{req: req, out: chatRequest{Model: modelID}}
	if err := c.convert(); err != nil {
		return nil, err
	}
	if stream {
		c.out.Stream, c.out.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	return marshal(&c.out)
}

// convert translates the request's fields; toolConfig first, so that the
// messages can be checked against its tools.
func (c *converter) convert() error {
	err := c.req.only("messages", "system", "inferenceConfig", "toolConfig",
		"additionalModelRequestFields", "additionalModelResponseFieldPaths",
		"requestMetadata", "performanceConfig", "serviceTier",
		"guardrailConfig", "promptVariables", "outputConfig")
	if err != nil {
		return err
	}
	for _, key := range []string{"guardrailConfig", "promptVariables", "outputConfig"} {
		if c.req.get(key) != nil {
			return invalid(key, "is not supported by this endpoint")
		}
	}
	steps := []func() error{c.toolConfig, c.system, c.messages, c.inference, c.additional, c.ignored}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if c.usesTool != "" && c.tools == nil {
		return invalid("toolConfig", "must be defined when using toolUse and toolResult content blocks (at "+c.usesTool+")")
	}
	return nil
}

func (c *converter) system() error {
	blocks, err := c.req.array("system")
	if err != nil {
		return err
	}
	var parts []chatPart
	for i, raw := range blocks {
		at := index("system", i)
		b, err := readObj(at, raw)
		if err != nil {
			return err
		}
		name, val, err := b.union()
		if err != nil {
			return err
		}
		switch name {
		case "text":
			text, err := b.needStr("text")
			if err != nil {
				return err
			}
			parts = append(parts, chatPart{Type: "text", Text: text})
		case "cachePoint":
			if err := cachePoint(b.path(name), val); err != nil {
				return err
			}
		case "guardContent":
			return invalid(b.path(name), "is not supported by this endpoint")
		default:
			return invalid(b.path(name), "unknown field")
		}
	}
	if len(parts) > 0 {
		c.out.Messages = append(c.out.Messages, chatMessage{Role: "system", Content: parts})
	}
	return nil
}

func (c *converter) messages() error {
	list, err := c.req.array("messages")
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return c.req.required("messages")
	}
	prev := ""
	for i, raw := range list {
		m, err := readObj(index("messages", i), raw)
		if err != nil {
			return err
		}
		if err := m.only("role", "content"); err != nil {
			return err
		}
		role, err := m.oneOf("role", "user", "assistant")
		if err == nil && role == "" {
			err = m.required("role")
		}
		if err != nil {
			return err
		}
		switch {
		case i == 0 && role != "user":
			return invalid(m.path("role"), "a conversation must start with a user message")
		case role == prev:
			return invalid(m.path("role"), "a conversation must alternate between user and assistant roles")
		}
		prev = role
		blocks, err := m.array("content")
		if err == nil && len(blocks) == 0 {
			err = m.required("content")
		}
		if err != nil {
			return err
		}
		if role == "user" {
			err = c.user(m.path("content"), blocks)
		} else {
			err = c.assistant(m.path("content"), blocks)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// block reads a content block: an object with one member.
func block(at string, raw json.RawMessage) (obj, string, json.RawMessage, error) {
	b, err := readObj(at, raw)
	if err != nil {
		return obj{}, "", nil, err
	}
	name, val, err := b.union()
	return b, name, val, err
}

// user translates a user turn: its tool results become tool messages,
// placed first as chat wants them right after the assistant's calls, and
// the rest one user message.
func (c *converter) user(at string, blocks []json.RawMessage) error {
	var parts []chatPart
	answered := map[string]bool{}
	for i, raw := range blocks {
		b, name, val, err := block(index(at, i), raw)
		if err != nil {
			return err
		}
		var p chatPart
		switch name {
		case "text":
			p.Type = "text"
			p.Text, err = b.needStr(name)
		case "image":
			p, err = image(b.path(name), val)
		case "document":
			p, err = documentBlock(b.path(name), val)
		case "toolResult":
			err = c.toolResult(b.path(name), val, answered)
		case "cachePoint":
			err = cachePoint(b.path(name), val)
		default:
			err = unsupportedBlock(b.path(name), name, "user")
		}
		if err != nil {
			return err
		}
		if p.Type != "" {
			parts = append(parts, p)
		}
	}
	if len(answered) < len(c.toolUses) {
		for id := range c.toolUses {
			if !answered[id] {
				return invalid(at, "expected a toolResult block for toolUseId "+quote(id)+" of the previous assistant message")
			}
		}
	}
	c.toolUses = nil
	if len(parts) > 0 {
		c.out.Messages = append(c.out.Messages, chatMessage{Role: "user", Content: parts})
	}
	return nil
}

// unsupportedBlock refuses a content block the translation does not carry,
// or one that is not allowed in the role's turn.
func unsupportedBlock(at, name, role string) error {
	switch name {
	case "text", "image", "document", "toolUse", "toolResult", "reasoningContent":
		return invalid(at, name+" blocks are not allowed in "+role+" messages")
	case "video", "audio", "guardContent", "citationsContent", "searchResult", "toolAddition", "toolRemoval":
		return invalid(at, "is not supported by this endpoint")
	}
	return invalid(at, "unknown field")
}

// assistant translates an assistant turn into one assistant message: its
// text blocks joined, its toolUse blocks as tool_calls. Reasoning blocks
// are left out: a model reads no earlier turn's reasoning.
func (c *converter) assistant(at string, blocks []json.RawMessage) error {
	var text strings.Builder
	var calls []chatCall
	c.toolUses = map[string]bool{}
	for i, raw := range blocks {
		b, name, val, err := block(index(at, i), raw)
		if err != nil {
			return err
		}
		switch name {
		case "text":
			var s string
			s, err = b.needStr(name)
			text.WriteString(s)
		case "toolUse":
			var call chatCall
			call, err = c.toolUse(b.path(name), val)
			calls = append(calls, call)
		case "reasoningContent":
			err = reasoning(b.path(name), val)
		case "cachePoint":
			err = cachePoint(b.path(name), val)
		default:
			err = unsupportedBlock(b.path(name), name, "assistant")
		}
		if err != nil {
			return err
		}
	}
	m := chatMessage{Role: "assistant", ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		m.Content = text.String()
	}
	c.out.Messages = append(c.out.Messages, m)
	return nil
}

func (c *converter) toolUse(at string, raw json.RawMessage) (chatCall, error) {
	u, err := readObj(at, raw)
	if err == nil {
		err = u.only("toolUseId", "name", "input")
	}
	if err != nil {
		return chatCall{}, err
	}
	id, err := toolID(u)
	if err != nil {
		return chatCall{}, err
	}
	name, err := toolName(u)
	if err != nil {
		return chatCall{}, err
	}
	input := u.get("input")
	if input == nil {
		return chatCall{}, u.required("input")
	}
	if c.toolUses[id] {
		return chatCall{}, invalid(u.path("toolUseId"), "duplicate toolUseId "+quote(id))
	}
	c.toolUses[id] = true
	if c.usesTool == "" {
		c.usesTool = at
	}
	args, err := compact(input)
	return chatCall{ID: id, Type: "function", Function: chatFunc{Name: name, Arguments: args}}, err
}

func (c *converter) toolResult(at string, raw json.RawMessage, answered map[string]bool) error {
	r, err := readObj(at, raw)
	if err == nil {
		err = r.only("toolUseId", "content", "status")
	}
	if err != nil {
		return err
	}
	id, err := toolID(r)
	if err != nil {
		return err
	}
	switch {
	case !c.toolUses[id]:
		return invalid(r.path("toolUseId"), quote(id)+" answers no toolUse block of the previous assistant message")
	case answered[id]:
		return invalid(r.path("toolUseId"), "duplicate toolResult for "+quote(id))
	}
	answered[id] = true
	if c.usesTool == "" {
		c.usesTool = at
	}
	if _, err := r.oneOf("status", "success", "error"); err != nil {
		return err
	}
	blocks, err := r.array("content")
	if err == nil && blocks == nil {
		err = r.required("content")
	}
	if err != nil {
		return err
	}
	parts := make([]chatPart, 0, len(blocks))
	for i, raw := range blocks {
		b, name, val, err := block(index(r.path("content"), i), raw)
		if err != nil {
			return err
		}
		var text string
		switch name {
		case "text":
			text, err = b.str(name)
		case "json":
			text, err = compact(val)
		case "image", "document", "video", "searchResult":
			err = invalid(b.path(name), "is not supported in tool results by this endpoint")
		default:
			err = invalid(b.path(name), "unknown field")
		}
		if err != nil {
			return err
		}
		if text != "" {
			parts = append(parts, chatPart{Type: "text", Text: text})
		}
	}
	m := chatMessage{Role: "tool", ToolCallID: id, Content: parts}
	if len(parts) == 0 {
		m.Content = ""
	}
	c.out.Messages = append(c.out.Messages, m)
	return nil
}

func toolID(o obj) (string, error) {
	id, err := o.needStr("toolUseId")
	if err == nil && !validName(id) {
		err = invalid(o.path("toolUseId"), "must match [a-zA-Z0-9_-]{1,64}")
	}
	return id, err
}

func toolName(o obj) (string, error) {
	name, err := o.needStr("name")
	if err == nil && !validName(name) {
		err = invalid(o.path("name"), "must match [a-zA-Z0-9_-]{1,64}")
	}
	return name, err
}

// validName reports whether s matches [a-zA-Z0-9_-]{1,64}, the pattern of
// Bedrock's tool names and tool use ids.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func reasoning(at string, raw json.RawMessage) error {
	r, err := readObj(at, raw)
	if err != nil {
		return err
	}
	name, val, err := r.union()
	switch {
	case err != nil:
		return err
	case name == "reasoningText":
		t, err := readObj(r.path(name), val)
		if err == nil {
			err = t.only("text", "signature")
		}
		if err == nil {
			_, err = t.str("text")
		}
		if err == nil {
			_, err = t.str("signature")
		}
		return err
	case name == "redactedContent":
		return base64Blob(r.path(name), val)
	}
	return invalid(r.path(name), "unknown field")
}

func cachePoint(at string, raw json.RawMessage) error {
	p, err := readObj(at, raw)
	if err == nil {
		err = p.only("type", "ttl")
	}
	if err != nil {
		return err
	}
	typ, err := p.oneOf("type", "default")
	if err == nil && typ == "" {
		err = p.required("type")
	}
	if err == nil {
		_, err = p.oneOf("ttl", "5m", "1h")
	}
	return err
}

var imageFormats = []string{"png", "jpeg", "gif", "webp"}

// image translates an image block to an image_url part with a data: URL.
func image(at string, raw json.RawMessage) (chatPart, error) {
	img, err := readObj(at, raw)
	if err == nil {
		err = img.only("format", "source")
	}
	if err != nil {
		return chatPart{}, err
	}
	format, err := img.oneOf("format", imageFormats...)
	if err == nil && format == "" {
		err = img.required("format")
	}
	if err != nil {
		return chatPart{}, err
	}
	data, err := bytesSource(img)
	if err != nil {
		return chatPart{}, err
	}
	return chatPart{Type: "image_url", ImageURL: &chatURL{URL: "data:image/" + format + ";base64," + data}}, nil
}

var documentTypes = map[string]string{
	"pdf":  "application/pdf",
	"csv":  "text/csv",
	"doc":  "application/msword",
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xls":  "application/vnd.ms-excel",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"html": "text/html",
	"txt":  "text/plain",
	"md":   "text/markdown",
}

// documentBlock translates a document block: bytes to a file part with a
// data: URL, text to a text part.
func documentBlock(at string, raw json.RawMessage) (chatPart, error) {
	doc, err := readObj(at, raw)
	if err == nil {
		err = doc.only("format", "name", "source")
	}
	if err != nil {
		return chatPart{}, err
	}
	format, err := doc.oneOf("format", "pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md")
	if err == nil && format == "" {
		err = doc.required("format")
	}
	if err != nil {
		return chatPart{}, err
	}
	name, err := doc.needStr("name")
	if err != nil {
		return chatPart{}, err
	}
	src, err := doc.object("source")
	if err != nil {
		return chatPart{}, err
	}
	kind, val, err := src.union()
	switch {
	case err != nil:
		return chatPart{}, err
	case kind == "text":
		text, err := src.needStr("text")
		return chatPart{Type: "text", Text: text}, err
	case kind == "content":
		text, err := documentContent(src.path(kind), val)
		return chatPart{Type: "text", Text: text}, err
	}
	data, err := bytesSource(doc)
	if err != nil {
		return chatPart{}, err
	}
	return chatPart{Type: "file", File: &chatFile{Filename: name + "." + format, FileData: "data:" + documentTypes[format] + ";base64," + data}}, nil
}

// documentContent returns the text of a document's source.content: text
// blocks, joined.
func documentContent(at string, raw json.RawMessage) (string, error) {
	list, err := readArr(at, raw)
	if err == nil && len(list) == 0 {
		err = invalid(at, "is required")
	}
	var b strings.Builder
	for i, el := range list {
		blk, name, _, err := block(index(at, i), el)
		if err != nil {
			return "", err
		}
		if name != "text" {
			return "", invalid(blk.path(name), "unknown field")
		}
		text, err := blk.needStr(name)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	return b.String(), err
}

// bytesSource returns the base64 text of the block's source.bytes.
func bytesSource(o obj) (string, error) {
	src, err := o.object("source")
	if err != nil {
		return "", err
	}
	name, val, err := src.union()
	switch {
	case err != nil:
		return "", err
	case name == "s3Location":
		return "", invalid(src.path(name), "is not supported by this endpoint")
	case name != "bytes":
		return "", invalid(src.path(name), "unknown field")
	}
	if err := base64Blob(src.path(name), val); err != nil {
		return "", err
	}
	data, _ := src.str(name)
	return data, nil
}

// base64Blob checks a blob member: a non-empty string of standard base64.
func base64Blob(at string, raw json.RawMessage) error {
	var s string
	if kind(raw) != "a string" || json.Unmarshal(raw, &s) != nil {
		return wantType(at, "a string", raw)
	}
	if s == "" {
		return invalid(at, "is required")
	}
	if _, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(s))); err != nil {
		return invalid(at, "is not valid base64")
	}
	return nil
}

func (c *converter) toolConfig() error {
	raw := c.req.get("toolConfig")
	if raw == nil {
		return nil
	}
	cfg, err := readObj("toolConfig", raw)
	if err == nil {
		err = cfg.only("tools", "toolChoice")
	}
	if err != nil {
		return err
	}
	list, err := cfg.array("tools")
	if err == nil && len(list) == 0 {
		err = cfg.required("tools")
	}
	if err != nil {
		return err
	}
	c.tools = map[string]bool{}
	for i, raw := range list {
		t, name, val, err := block(index(cfg.path("tools"), i), raw)
		if err != nil {
			return err
		}
		switch name {
		case "toolSpec":
			err = c.toolSpec(t.path(name), val)
		case "cachePoint":
			err = cachePoint(t.path(name), val)
		case "systemTool":
			err = invalid(t.path(name), "is not supported by this endpoint")
		default:
			err = invalid(t.path(name), "unknown field")
		}
		if err != nil {
			return err
		}
	}
	if len(c.out.Tools) == 0 {
		return invalid(cfg.path("tools"), "must declare at least one toolSpec")
	}
	return c.toolChoice(cfg)
}

func (c *converter) toolSpec(at string, raw json.RawMessage) error {
	s, err := readObj(at, raw)
	if err == nil {
		err = s.only("name", "description", "inputSchema", "strict")
	}
	if err != nil {
		return err
	}
	name, err := toolName(s)
	if err != nil {
		return err
	}
	if c.tools[name] {
		return invalid(s.path("name"), "duplicate tool name "+quote(name))
	}
	c.tools[name] = true
	desc, err := s.str("description")
	if err != nil {
		return err
	}
	strict, err := s.boolean("strict")
	if err != nil {
		return err
	}
	in, err := s.object("inputSchema")
	if err != nil {
		return err
	}
	kind, schema, err := in.union()
	switch {
	case err != nil:
		return err
	case kind != "json":
		return invalid(in.path(kind), "unknown field")
	}
	if _, err := readObj(in.path(kind), schema); err != nil {
		return err
	}
	c.out.Tools = append(c.out.Tools, chatTool{Type: "function", Function: chatToolDef{
		Name: name, Description: desc, Parameters: validUTF8(schema), Strict: strict,
	}})
	return nil
}

func (c *converter) toolChoice(cfg obj) error {
	raw := cfg.get("toolChoice")
	if raw == nil {
		return nil
	}
	choice, name, val, err := block(cfg.path("toolChoice"), raw)
	if err != nil {
		return err
	}
	v, err := readObj(choice.path(name), val)
	if err != nil {
		return err
	}
	switch name {
	case "auto", "any":
		if err := v.only(); err != nil {
			return err
		}
		c.out.ToolChoice = map[string]string{"auto": "auto", "any": "required"}[name]
	case "tool":
		if err := v.only("name"); err != nil {
			return err
		}
		tool, err := toolName(v)
		if err != nil {
			return err
		}
		if !c.tools[tool] {
			return invalid(v.path("name"), quote(tool)+" is not one of the tools")
		}
		c.out.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tool}}
	default:
		return invalid(choice.path(name), "unknown field")
	}
	return nil
}

func (c *converter) inference() error {
	raw := c.req.get("inferenceConfig")
	if raw == nil {
		return nil
	}
	cfg, err := readObj("inferenceConfig", raw)
	if err == nil {
		err = cfg.only("maxTokens", "temperature", "topP", "stopSequences")
	}
	if err != nil {
		return err
	}
	if n, ok, err := cfg.integer("maxTokens", 1); err != nil {
		return err
	} else if ok {
		c.out.MaxTokens = &n
	}
	if v, ok, err := cfg.number("temperature", 0, 1); err != nil {
		return err
	} else if ok {
		c.out.Temperature = &v
	}
	if v, ok, err := cfg.number("topP", 0, 1); err != nil {
		return err
	} else if ok {
		c.out.TopP = &v
	}
	c.out.Stop, err = cfg.strs("stopSequences")
	return err
}

// additional reads additionalModelRequestFields: the model's own fields.
// Only top_k is carried (as chat's top_k extension); any other field is
// refused, since dropping it could change the answer.
func (c *converter) additional() error {
	raw := c.req.get("additionalModelRequestFields")
	if raw == nil {
		return nil
	}
	f, err := readObj("additionalModelRequestFields", raw)
	if err == nil {
		err = f.only("top_k")
	}
	if err != nil {
		return err
	}
	if n, ok, err := f.integer("top_k", 0); err != nil {
		return err
	} else if ok {
		c.out.TopK = &n
	}
	return nil
}

// ignored checks the fields that do not change the answer: they must be
// of their documented shape, and are not carried.
func (c *converter) ignored() error {
	if _, err := c.req.strs("additionalModelResponseFieldPaths"); err != nil {
		return err
	}
	if raw := c.req.get("requestMetadata"); raw != nil {
		md, err := readObj("requestMetadata", raw)
		if err != nil {
			return err
		}
		for k := range md.m {
			if _, err := md.str(k); err != nil {
				return err
			}
		}
	}
	if raw := c.req.get("performanceConfig"); raw != nil {
		p, err := readObj("performanceConfig", raw)
		if err == nil {
			err = p.only("latency")
		}
		if err == nil {
			_, err = p.oneOf("latency", "standard", "optimized")
		}
		if err != nil {
			return err
		}
	}
	if raw := c.req.get("serviceTier"); raw != nil {
		t, err := readObj("serviceTier", raw)
		if err == nil {
			err = t.only("type")
		}
		if err == nil {
			_, err = t.oneOf("type", "priority", "default", "flex", "reserved")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compact returns a JSON value as compact text, with invalid UTF-8 (which
// valid JSON has only inside strings) replaced.
func compact(raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, validUTF8(raw)); err != nil {
		return "", invalid("", "invalid JSON value")
	}
	return b.String(), nil
}

// validUTF8 returns raw less any invalid UTF-8.
func validUTF8(raw json.RawMessage) json.RawMessage {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}

// marshal encodes v as JSON without HTML escaping and without the final
// newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, internal("cannot encode the translation: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
