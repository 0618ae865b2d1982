// Package chatwire is OpenAI's chat completions wire format as the
// provider translators (internal/provider/anthropic, bedrock, gemini and
// the clouds built on them) read and write it: one definition of the
// request's messages, tool calls and content parts they read, and of the
// chat.completion answer they write; and Refill, the output buffer and
// read loop every stream translator of theirs shares.
//
// Wire formats: the request types decode a client's OpenAI chat request
// (encoding/json rules: unknown fields are ignored, a repeated key's last
// value wins, a value of the wrong JSON kind fails the decode, and the
// caller names the field). The answer types encode in the order OpenAI
// writes its fields: content and refusal as null when absent,
// reasoning_content, tool_calls and extra_content left out when empty.
//
// Errors: the package has none of its own; each translator maps what it
// cannot read to its own refusal, naming the field.
package chatwire
