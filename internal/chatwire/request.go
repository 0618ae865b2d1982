package chatwire

import "encoding/json"

// Message is one OpenAI chat message, as far as the translators read it.
// C is its tool call type: ToolCall, or a type that embeds ToolCall and
// reads what one provider adds. Content is left raw: a string, an array
// of parts or null. FunctionCall and Audio are read only to be refused.
type Message[C any] struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCalls    []C             `json:"tool_calls"`
	ToolCallID   string          `json:"tool_call_id"`
	Refusal      *string         `json:"refusal"`
	FunctionCall json.RawMessage `json:"function_call"`
	Audio        json.RawMessage `json:"audio"`
}

// ToolCall is a tool call of an assistant Message.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Part is one OpenAI content part: its type and the fields of the text,
// refusal, image_url and file parts, and the cache_control an Anthropic
// translation keeps on its block. A translator that reads more embeds
// Part in its own type (at the cost of a deeper decode; the Anthropic
// translation, the gateway's hot path, embeds nothing).
type Part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
	File         File            `json:"file"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// File is a file part's file: its data (a data: URL) or an uploaded
// file's ID.
type File struct {
	FileData string `json:"file_data"`
	FileID   string `json:"file_id"`
}

// Tool is one entry of a request's tools, with the cache_control an
// Anthropic translation keeps on its tool.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
	CacheControl json.RawMessage `json:"cache_control"`
}
