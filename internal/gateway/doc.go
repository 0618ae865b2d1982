// Package gateway is Fusebox's HTTP server: an OpenAI-compatible API
// (chat completions, streamed or not, embeddings, models) in front of the
// router. Clients point their SDK's base URL at it; each request's "model"
// names an alias (or provider/model), and the router's walk finds a target
// that can answer. Streams are passed through event by event and committed
// at their first content: before that, a failing target is left for the
// next one without the client seeing it; after it, a failure ends the
// stream with an error event and no [DONE].
package gateway
