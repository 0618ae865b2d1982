package geminiapi

import "io"

// Options are how the answers to one request are written. The zero value
// writes every part the chat answer has: FromChat's and NewStream's way.
type Options struct {
	// OmitThoughts leaves the chat answer's reasoning out: Gemini returns
	// thought parts only when the request's
	// generationConfig.thinkingConfig.includeThoughts is true. The usage
	// still counts the reasoning, as thoughtsTokenCount.
	OmitThoughts bool
}

// OptionsFor returns the Options for answering the GenerateContentRequest
// body as Gemini would: OmitThoughts unless it asks for thoughts. Call it
// on a body ToChat accepted; it reads nothing else of it.
func OptionsFor(body []byte) Options {
	include := false
	eachMember(body, requestFields, func(i int, v []byte) error {
		if i != rqGeneration {
			return nil
		}
		return eachMember(v, generationFields, func(j int, w []byte) error {
			if j != gcThinking {
				return nil
			}
			return eachMember(w, thinkingFields, func(k int, x []byte) error {
				if k == 0 {
					include = string(x) == "true"
				}
				return nil
			})
		})
	})
	return Options{OmitThoughts: !include}
}

// FromChatWith is FromChat writing the answer as o says.
func FromChatWith(chat []byte, model string, o Options) ([]byte, error) {
	return fromChat(chat, model, o)
}

// NewStreamWith is NewStream writing the answer as o says.
func NewStreamWith(chatSSE io.Reader, model string, sse bool, o Options) io.Reader {
	return &stream{rd: newReader(chatSSE), model: model, sse: sse, opts: o}
}
