// Package bedrockapi is Amazon Bedrock's runtime wire format from the
// server's side: what a simulated Bedrock needs so that the official AWS
// client (github.com/aws/aws-sdk-go-v2/service/bedrockruntime) can drive
// it. It translates Bedrock's requests into the OpenAI chat (or Anthropic
// Messages) requests a simulator's engine answers, translates the answers
// back, encodes response streams as AWS event-stream frames with the SDK's
// own encoder, and checks SigV4 signatures with the SDK's own signer.
//
// # Operations
//
//	POST /model/{modelId}/converse          ConverseToChat, then ChatToConverse
//	POST /model/{modelId}/converse-stream   ConverseToChat(stream), then NewConverseStream
//	POST /model/{modelId}/invoke            InvokeToMessages; the Messages answer as it is
//	POST /model/{modelId}/invoke-with-response-stream
//	                                        InvokeToMessages(stream), then NewInvokeStream
//
// Streams are served with Content-Type application/vnd.amazon.eventstream
// (ContentTypeEventStream); JSON answers with application/json.
//
// # Converse request → chat request
//
//	modelId (URL)                         model
//	system [{text}]                       one system message, its text parts in order
//	system [{cachePoint}]                 left out
//	messages[].role user/assistant        the same; the first must be user, roles alternate
//	content {text}                        text part (user) or content text (assistant, joined)
//	content {image:{format, source.bytes}}  image_url part, data:image/{format};base64,…
//	content {document:{format, name, source.bytes}}
//	                                      file part {filename name.format, file_data data: URL}
//	content {document:{source.text or source.content}}  text part
//	content {toolUse:{toolUseId, name, input}}  assistant tool_calls[] {id, function
//	                                      {name, arguments: input as compact JSON}}
//	content {toolResult:{toolUseId, content, status}}  a tool message {tool_call_id,
//	                                      content: text parts; json blocks as compact JSON},
//	                                      placed before the rest of its user turn; status is
//	                                      checked, not carried
//	content {reasoningContent}            left out (no model reads earlier reasoning)
//	content {cachePoint}                  left out
//	inferenceConfig.maxTokens             max_tokens
//	inferenceConfig.temperature, topP     temperature, top_p (each 0 to 1)
//	inferenceConfig.stopSequences         stop
//	toolConfig.tools[].toolSpec           tools[] {type function, function {name,
//	                                      description, parameters: inputSchema.json, strict}}
//	toolConfig.toolChoice auto/any/tool   tool_choice "auto" / "required" / {function {name}}
//	additionalModelRequestFields.top_k    top_k
//	ConverseStream                        stream true, stream_options.include_usage true
//
// Checked and not carried, since the answer means the same without them:
// additionalModelResponseFieldPaths, requestMetadata, performanceConfig,
// serviceTier. Refused: guardrailConfig, promptVariables, outputConfig,
// any other additionalModelRequestFields member, s3Location sources,
// video, audio, guardContent, citationsContent, searchResult, systemTool,
// and images or documents in tool results.
//
// Requests are read as Bedrock reads them, and what is not Bedrock's is
// refused rather than guessed at: keys exactly ("Messages" is an unknown
// field, "m\u0065ssages" is messages); a key twice in any object; unknown
// fields; a union (content block, source, tool, toolChoice) with other
// than one member; values of the wrong type; blobs that are not base64;
// tool names and ids outside [a-zA-Z0-9_-]{1,64}; a toolResult that
// answers no toolUse of the assistant turn before it, or a user turn that
// leaves one of them unanswered; toolUse or
// toolResult blocks without a toolConfig; a body over MaxRequestSize.
//
// # Chat answer → Converse response
//
//	message.reasoning_content            content {reasoningContent:{reasoningText:{text}}}, first
//	message.content (or refusal)         content {text}
//	message.tool_calls[]                 content {toolUse:{toolUseId (bytes outside
//	                                     [a-zA-Z0-9_-] as "_"), name, input: arguments}}
//	finish_reason stop                   stopReason end_turn (tool_use when there are calls)
//	finish_reason length                 max_tokens
//	finish_reason tool_calls             tool_use
//	finish_reason content_filter         content_filtered
//	finish_reason stop_sequence          stop_sequence
//	usage.prompt_tokens − cached_tokens  usage.inputTokens
//	prompt_tokens_details.cached_tokens  usage.cacheReadInputTokens
//	usage.completion_tokens              usage.outputTokens; totalTokens all tokens
//
// A stream carries the same as events: messageStart {role}; per content
// block a contentBlockStart (tool uses only: toolUseId, name),
// contentBlockDelta events (text, toolUse.input fragments,
// reasoningContent.text) and a contentBlockStop, blocks numbered from 0 by
// contentBlockIndex; messageStop {stopReason}; metadata {usage, metrics
// {latencyMs}}.
//
// # InvokeModel
//
// A Claude InvokeModel body is Anthropic's Messages body less model and
// stream, with anthropic_version "bedrock-2023-05-31" (and max_tokens and
// messages) required and an optional anthropic_beta list. InvokeToMessages
// checks those rules and gives the Messages body for the URL's model; the
// answer is the Messages answer unchanged. Its stream (NewInvokeStream) is
// one "chunk" event per Anthropic event, payload {"bytes": base64 of the
// event's JSON}, message_stop gaining "amazon-bedrock-invocationMetrics".
//
// # Errors
//
// A refused request is an *Error: Status, Type (sent as x-amzn-ErrorType)
// and Message (the body {"message": …}), written by WriteError; the SDKs
// turn the type into their typed errors (*types.ValidationException, …).
// Translation refusals are 400 ValidationExceptions naming the field by
// its path ("messages[1].content[0].image.format"); an engine answer that
// cannot be read is a 500 InternalServerException. VerifySigV4's
// refusals are listed on it.
//
// Inside a stream, a failure is an exception frame (ExceptionFrame) that
// ends it, which the SDKs return from the stream's Err as their typed
// exception. An OpenAI or Anthropic error event maps by its type: rate
// limits (rate_limit_exceeded, rate_limit_error) → throttlingException;
// overloaded_error, service_unavailable → serviceUnavailableException;
// invalid_request_error → validationException; server_error, api_error →
// internalServerException; anything else → modelStreamErrorException. A
// stream that ends or breaks before its answer finished (no finish_reason,
// no message_stop), or sends an event that is not JSON, ends with a
// modelStreamErrorException, so a cut answer is never mistaken for a
// complete one.
package bedrockapi
