// Package anthropic is the gateway's adapter for Anthropic's Messages API.
//
// An Upstream takes calls in OpenAI's chat format (router.Call), sends them
// to POST {BaseURL}/v1/messages, and answers as an OpenAI-compatible host
// would, so the gateway treats an Anthropic target like any other:
//
//   - a 2xx answer becomes a chat.completion body;
//   - a 2xx stream becomes text/event-stream chat.completion.chunk events
//     (a role chunk, content and tool_calls deltas, a finish chunk, a usage
//     chunk when stream_options.include_usage is set, then data: [DONE]),
//     translated event by event with bounded memory and no goroutine; an
//     Anthropic error event becomes data: {"error":{…}} (keeping the
//     Anthropic error type, so aierr reads overloaded_error as an outage)
//     and the stream ends without [DONE]; a stream cut before message_stop
//     gives a read error wrapping io.ErrUnexpectedEOF;
//   - any other answer is passed through unchanged — status, headers
//     (anthropic-ratelimit-*, retry-after, request-id) and body — for aierr;
//   - a request that cannot be translated faithfully is refused with a
//     *router.Unservable naming the field (a JSON path such as
//     messages[2].content[0].type) and code "unsupported_parameter",
//     "unsupported_value" or "invalid_value". Nothing is sent upstream;
//     the walk passes to the next target and counts nothing against this
//     one, and the client gets a 400 naming the field only when no target
//     of the model can serve it;
//   - /embeddings (Anthropic has none) and any other path are refused the
//     same way, code "unsupported_operation".
//
// Requests carry x-api-key, anthropic-version (Config.Version, or the
// client's), anthropic-beta (Config.Beta and the client's, joined),
// content-type, accept, Idempotency-Key and Config.Header.
//
// # Request: OpenAI chat field → Anthropic Messages field
//
//	model                              model
//	messages, role system/developer    system: their text, in order, joined by a blank line
//	                                   (wherever they appear in the conversation)
//	messages, role user                user turn; content string or parts:
//	  part text                          text block (empty text left out)
//	  part image_url https/http URL      image block, source {type: url}
//	  part image_url data: URL           image block, source {type: base64, media_type, data}
//	                                     (jpeg, png, gif, webp; others refused)
//	  part file with file_data PDF       document block, base64 source
//	  part input_audio, file_id          refused
//	  part cache_control (extension)     cache_control on the block
//	  name                               ignored
//	messages, role assistant           assistant turn: content text, refusal text,
//	  tool_calls[]                       tool_use blocks {id, name, input: arguments parsed;
//	                                     "" → {}; not a JSON object → refused}
//	  function_call, audio               refused
//	messages, role tool                tool_result block {tool_use_id, content text blocks}
//	                                   in a user turn; consecutive results share one turn
//	messages, role function            refused (legacy)
//	consecutive turns of one role      merged into one turn, as Anthropic alternates roles
//	tool call IDs                      bytes outside [A-Za-z0-9_-] become "_" (calls and
//	                                   results alike, so they still pair)
//	max_completion_tokens, max_tokens  max_tokens (the first wins; < 1 refused); when both
//	                                   are absent, Config.DefaultMaxTokens, a built-in
//	                                   per-model table, then FallbackMaxTokens
//	temperature                        temperature; above 1 refused (Anthropic's range is 0–1)
//	top_p                              top_p
//	top_k (extension)                  top_k
//	stop (string or array)             stop_sequences (empty strings left out)
//	stream                             stream (also set when router.Call.Stream is)
//	stream_options.include_usage       a final usage chunk in the translated stream
//	tools[] type function              tools[] {name, description, input_schema: parameters,
//	                                   or an empty object schema}; strict ignored;
//	                                   other tool types refused
//	tool_choice auto/none/required     tool_choice {type: auto / none / any}
//	tool_choice {function: {name}}     tool_choice {type: tool, name}
//	tool_choice allowed_tools, custom  refused
//	parallel_tool_calls false          tool_choice.disable_parallel_tool_use true
//	safety_identifier, else user       metadata.user_id
//	reasoning_effort                   thinking {type: enabled, budget_tokens}: minimal 1024,
//	                                   low 2048, medium 4096, high 8192, xhigh 16384,
//	                                   max 24576; none or absent: no thinking; others refused
//	                                   (unsupported). The rules are in thinking.go
//
// Ignored, because the answer means the same without them: seed, store,
// metadata (OpenAI's stored-completion tags), service_tier,
// prompt_cache_key, prompt_cache_retention, prediction, verbosity,
// parallel_tool_calls true, and any field whose value is null.
// Accepted only with their neutral value, refused otherwise: n (1),
// logprobs (false), top_logprobs (0), frequency_penalty and
// presence_penalty (0; Anthropic has no penalties, and dropping a non-zero
// one would change the answer), logit_bias ({}), response_format
// ({"type":"text"}; json_object and json_schema are refused, since plain
// text would break the caller's parser), modalities (["text"]). Refused
// always: audio, functions, function_call, web_search_options, and any
// field not listed here — an unknown field may change the meaning, so it
// is refused rather than dropped.
//
// # Response: Anthropic → OpenAI chat.completion
//
//	id, model                          id, model; created is the time of the answer
//	content text blocks                choices[0].message.content, joined
//	                                   (null when there are only tool calls)
//	content tool_use blocks            message.tool_calls[] {id, type function,
//	                                   function {name, arguments: input as compact JSON}}
//	content thinking blocks            message.reasoning_content
//	stop_reason end_turn, stop_sequence,
//	  pause_turn, others               finish_reason stop
//	stop_reason max_tokens,
//	  model_context_window_exceeded    finish_reason length
//	stop_reason tool_use               finish_reason tool_calls
//	stop_reason refusal                finish_reason content_filter
//	usage input_tokens +
//	  cache_read_input_tokens +
//	  cache_creation_input_tokens      usage.prompt_tokens
//	usage cache_read_input_tokens      usage.prompt_tokens_details.cached_tokens
//	usage output_tokens                usage.completion_tokens; total_tokens the sum
//
// A 2xx answer that is not a message (or is over MaxResponseSize) becomes
// a 502 with code "bad_upstream_response", an outage for aierr.
//
// # Stream: Anthropic events → chat.completion.chunk
//
//	message_start                      role chunk {role: assistant, content: ""}; its id,
//	                                   model and input usage are kept
//	content_block_start text           content delta when its text is not empty
//	content_block_start tool_use       tool_calls delta {index (0, 1, … per tool_use
//	                                   block), id, type, function {name, arguments: ""}}
//	content_block_delta text_delta     content delta
//	content_block_delta input_json_delta  tool_calls delta {index, function {arguments:
//	                                   the fragment}}, as it arrives
//	content_block_delta thinking_delta reasoning_content delta
//	message_delta                      finish chunk with the mapped finish_reason;
//	                                   output usage kept
//	message_stop                       usage chunk if asked, then data: [DONE]
//	ping, content_block_stop,
//	  signature and citations deltas,
//	  unknown events                   nothing
//	error                              data: {"error":{message, type, param, code}};
//	                                   the stream ends without [DONE]
//
// # Reverse direction
//
// FromMessagesRequest, ToMessagesResponse and NewMessagesStream translate
// the other way, for Anthropic clients whose requests go to
// OpenAI-compatible targets; their doc comments give the mapping.
package anthropic
