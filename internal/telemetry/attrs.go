package telemetry

import "go.opentelemetry.io/otel/attribute"

// Attribute keys of the GenAI semantic conventions and of Fusebox's own
// (fusebox.*). docs/OBSERVABILITY.md says where each one appears.
const (
	keyOperation        = attribute.Key("gen_ai.operation.name")
	keyProvider         = attribute.Key("gen_ai.provider.name")
	keyRequestModel     = attribute.Key("gen_ai.request.model")
	keyRequestStream    = attribute.Key("gen_ai.request.stream")
	keyRequestMaxTokens = attribute.Key("gen_ai.request.max_tokens")
	keyResponseModel    = attribute.Key("gen_ai.response.model")
	keyResponseID       = attribute.Key("gen_ai.response.id")
	keyFinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	keyTimeToFirstChunk = attribute.Key("gen_ai.response.time_to_first_chunk")
	keyInputTokens      = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens     = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheReadTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheWriteTokens = attribute.Key("gen_ai.usage.cache_write.input_tokens")
	keyTokenType        = attribute.Key("gen_ai.token.type")
	keyTokenModality    = attribute.Key("gen_ai.token.modality")
	keyInputMessages    = attribute.Key("gen_ai.input.messages")
	keyOutputMessages   = attribute.Key("gen_ai.output.messages")

	keyServerAddress = attribute.Key("server.address")
	keyServerPort    = attribute.Key("server.port")
	keyErrorType     = attribute.Key("error.type")
	keyHTTPMethod    = attribute.Key("http.request.method")
	keyHTTPStatus    = attribute.Key("http.response.status_code")
	keyURLPath       = attribute.Key("url.path")

	keyTarget           = attribute.Key("fusebox.target")
	keyAttempt          = attribute.Key("fusebox.attempt")
	keyAttempts         = attribute.Key("fusebox.attempts")
	keyBreakerState     = attribute.Key("fusebox.breaker.state")
	keyFailoverReason   = attribute.Key("fusebox.failover.reason")
	keyCost             = attribute.Key("fusebox.cost_usd")
	keyAlias            = attribute.Key("fusebox.alias")
	keyProviderType     = attribute.Key("fusebox.provider.type")
	keySkipReason       = attribute.Key("fusebox.skip.reason")
	keyContentTruncated = attribute.Key("fusebox.content.truncated")
)

// eventSkip is the request span's event for a target passed over.
const eventSkip = "fusebox.skip"
