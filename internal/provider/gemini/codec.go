package gemini

// Translated is an OpenAI chat body as a Gemini GenerateContentRequest.
type Translated struct {
	// Body is the GenerateContentRequest JSON. It names no model: Gemini
	// takes the model in the URL.
	Body []byte
	// Model is the chat body's model.
	Model string
	// Stream is true for a streamed answer: the chat body asked for one,
	// or the caller did.
	Stream bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
}
