// Package bedrock is the gateway's adapter for Amazon Bedrock's runtime
// API. An Upstream takes calls in OpenAI's chat format (router.Call) and
// answers as an OpenAI-compatible host would; for Claude it also takes a
// client's own Anthropic Messages body (router.Call.Native) and answers as
// Anthropic would, so a ladder "Claude on Anthropic → Claude on Bedrock"
// needs no translation at all.
//
// # Operations
//
//	Claude (a model id, inference profile   POST /model/{id}/invoke
//	  or ARN naming anthropic.claude)       POST /model/{id}/invoke-with-response-stream
//	any other model                         POST /model/{id}/converse
//	                                        POST /model/{id}/converse-stream
//	any path but /chat/completions          refused, code unsupported_operation
//	Native count_tokens, Native non-Claude  refused, code unsupported_operation
//
// The model id is one path segment, escaped as the AWS SDK escapes it
// (every byte but A–Z a–z 0–9 - . _ ~), so ARNs and "us."/"eu."/"apac."/
// "global." inference profiles work as they are. An application inference
// profile's ARN does not say what it runs, so it goes to Converse, which
// serves Claude too.
//
// # Authentication
//
// A call whose router.Call.Key is set sends it as a Bedrock API key,
// "Authorization: Bearer <key>". Any other is signed with SigV4 (the AWS
// SDK's signer: service "bedrock", Config.Region, the payload's SHA-256,
// the time from Config.Clock), with credentials from Config.Credentials,
// the static keys, or the SDK's default chain (environment, shared files
// and profile, web identity, container and instance roles), cached in an
// aws.CredentialsCache: fetched once per lifetime and refreshed by the SDK
// before they expire, never per call. No error or log carries a secret.
//
// Requests carry Config.Header, Content-Type application/json and, unless
// streamed, Accept application/json, as the AWS SDK sends them.
// The client's headers are not sent: Bedrock understands none of them,
// and each signed header costs a signature.
//
// # Claude: InvokeModel
//
// The body is the Messages body — anthropic.TranslateChat of a chat call,
// or Call.Native as the client sent it — less "model" and "stream" (the
// URL says both), with "anthropic_version": "bedrock-2023-05-31", and the
// anthropic-beta flags (Config.Header's, then the client's Anthropic-Beta
// header, then the body's own "anthropic_beta") as the "anthropic_beta"
// array. "metadata" is removed too: Bedrock refuses it, and Anthropic uses
// it only to trace abuse. Keys are read decoded, as Bedrock reads them ("str\u0065am" is
// "stream"); of a repeated key the last is kept; case variants of the
// removed keys are removed too.
//
// A message answer goes through anthropic.ChatAnswer (or is returned as it
// is, for Native). The stream is an AWS event stream whose "chunk" events
// carry {"bytes": base64 of one Anthropic event}; it becomes Anthropic's
// SSE ("event: <type>\ndata: <json>\n\n", Content-Type text/event-stream),
// which anthropic.ChatStream translates for a chat call and which a Native
// call gets as it is.
//
// # Other models: Converse
//
//	OpenAI chat                          Converse
//	messages, role system/developer      system[] {text}, in order
//	messages, role user: string, parts   user turn, content blocks:
//	  text                                 {text} (empty text left out)
//	  image_url data: URL                  {image {format png|jpeg|gif|webp, source {bytes}}}
//	  image_url http(s) URL                refused (Converse takes bytes only)
//	  file {file_data data: URL}           {document {format pdf|csv|doc|docx|xls|xlsx|html|txt|md,
//	                                       name: filename made fit, source {bytes}}}
//	  file_id, input_audio, others         refused
//	messages, role assistant             assistant turn: text and refusal text,
//	  tool_calls[]                         {toolUse {toolUseId, name, input: arguments parsed;
//	                                       "" → {}; not a JSON object → refused}}
//	messages, role tool                  {toolResult {toolUseId, content [{text}]}} in a user turn
//	consecutive turns of one role        merged, as Converse alternates roles
//	tool call IDs                        bytes outside [A-Za-z0-9_-] become "_", at most 64
//	max_completion_tokens, max_tokens    inferenceConfig.maxTokens (the first wins; < 1 refused)
//	temperature, top_p                   inferenceConfig.temperature, topP (0–1; others refused)
//	stop                                 inferenceConfig.stopSequences
//	tools[] function                     toolConfig.tools[] {toolSpec {name, description,
//	                                     inputSchema {json: parameters}}}
//	tool_choice auto/required/{function} toolConfig.toolChoice {auto}/{any}/{tool {name}}
//	tool_choice none                     no tools sent; refused when the conversation holds
//	                                     tool calls (Converse then needs the tools declared)
//	parallel_tool_calls false            refused (Converse cannot forbid them)
//	reasoning_effort low/medium/high     additionalModelRequestFields: {"reasoning_effort"} for
//	                                     openai.gpt-oss, {"reasoningConfig": {type enabled,
//	                                     maxReasoningEffort}} for amazon.nova-2; refused for
//	                                     other models and other values; none: nothing
//	response_format json_object/schema   refused: Converse has no JSON mode, and a forced tool
//	                                     would answer with tool calls the client did not ask for
//	n 1, logprobs false, top_logprobs 0, accepted; other values refused
//	  penalties 0, logit_bias {},
//	  modalities ["text"], format text
//	seed, store, metadata, user, service_tier, safety_identifier, prompt_cache_key,
//	  prompt_cache_retention, prediction, verbosity: ignored; any other field refused
//
// Answers: output.message.content text blocks → message.content (joined;
// null when there are only tool calls), toolUse → tool_calls {id:
// toolUseId, function {name, arguments: input as compact JSON}},
// reasoningContent → reasoning_content; stopReason end_turn, stop_sequence
// → stop, max_tokens, model_context_window_exceeded → length, tool_use →
// tool_calls, guardrail_intervened, content_filtered → content_filter;
// usage: prompt_tokens = inputTokens + cacheReadInputTokens +
// cacheWriteInputTokens, completion_tokens = outputTokens, total_tokens,
// prompt_tokens_details.cached_tokens = cacheReadInputTokens. The id is
// "chatcmpl-" and Bedrock's x-amzn-RequestId.
//
// ConverseStream events become chat.completion.chunk SSE: messageStart → a
// role chunk; contentBlockStart of a toolUse → a tool_calls delta with id
// and name; contentBlockDelta → content, tool_calls arguments or
// reasoning_content deltas; messageStop → the finish chunk; metadata → a
// usage chunk when stream_options.include_usage, then data: [DONE].
//
// # Errors
//
//   - A non-2xx answer is returned unchanged — status, headers
//     (x-amzn-ErrorType, x-amzn-RequestId) and body ({"message": …}) — for
//     aierr to classify.
//   - A 2xx answer that cannot be read (or is over MaxResponseSize) is a
//     502 with code bad_upstream_response.
//   - An exception inside a stream (:message-type exception) ends it with
//     an error event: Anthropic's "event: error" for Claude, OpenAI's
//     data: {"error": …} for Converse, never [DONE]. Its type is what aierr
//     reads as Bedrock meant it: throttlingException → rate_limit_error
//     (throttle); serviceUnavailableException → overloaded_error (outage);
//     validationException → invalid_request_error (the caller's);
//     internalServerException, modelStreamErrorException,
//     modelTimeoutException and others → api_error (outage).
//   - A stream cut mid-frame, a frame failing its CRC, over MaxFrameSize or
//     of unknown :message-type, and a stream that ends before its last
//     event (message_stop; messageStop and metadata) give a read error
//     wrapping io.ErrUnexpectedEOF. A read error of the body itself (a
//     cancelled context, a reset) is wrapped as it is.
//   - A request that cannot be translated faithfully is refused with a
//     *router.Unservable naming the field, and nothing is sent; the walk
//     passes to the next target.
package bedrock
