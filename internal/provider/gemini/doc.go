// Package gemini is the gateway's adapter for Gemini's native API
// (generateContent), and the codec between OpenAI's chat format and
// Gemini's that the clouds serving Gemini share: Google AI Studio (this
// package's Upstream) and Vertex AI (package vertex, which adds its own
// URLs and OAuth).
//
// An Upstream takes calls in OpenAI's chat format (router.Call) and sends
// them to POST {BaseURL}/v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse for a stream, with the call's key in
// x-goog-api-key. It answers as an OpenAI-compatible host would:
//
//   - a 2xx answer becomes a chat.completion body (ChatAnswer);
//   - a 2xx stream becomes text/event-stream chat.completion.chunk events
//     (ChatStream): per candidate a role chunk, content, reasoning_content
//     and tool_calls deltas and a finish chunk; a usage chunk when
//     stream_options.include_usage is set; then data: [DONE]. Events are
//     translated one at a time, with the memory of one event (internal/sse
//     bounds it) and no goroutine. Gemini ends a stream by closing it, so
//     [DONE] is written at the end of the body once every candidate has
//     had its finishReason; a stream cut before that is a read error
//     wrapping io.ErrUnexpectedEOF, never a whole answer. An error object
//     inside the stream ({"error":{"code","message","status"}}) becomes
//     data: {"error":{"message","type","param","code"}} with type and code
//     Google's status (RESOURCE_EXHAUSTED, UNAVAILABLE, …, so aierr reads
//     it as it reads Google's error answers), and the stream ends without
//     [DONE]. Malformed events and candidate indexes out of range are read
//     errors;
//   - a 2xx answer that cannot be read (not JSON, no candidates and no
//     block reason, an error object, over MaxResponseSize) becomes a 502
//     {"error":{…,"type":"server_error","code":"bad_upstream_response"}},
//     keeping the upstream's headers;
//   - any other answer is returned unchanged — status, headers, body —
//     for aierr, which reads Google's error shape and RetryInfo;
//   - a request that cannot be translated faithfully is refused with a
//     *router.Unservable naming the field by its JSON path (such as
//     messages[2].content[0].image_url.url), code unsupported_parameter,
//     unsupported_value or invalid_value, and nothing is sent: the walk
//     passes to the next target. Paths other than /chat/completions and
//     /embeddings are refused so, code unsupported_operation, as is a model
//     name that is not one URL path segment (invalid_value).
//
// /embeddings goes to {model}:batchEmbedContents: input (a string or up to
// MaxEmbedInputs strings; token arrays refused) becomes one request per
// input {model: "models/{model}", content: {role: user, parts: [{text}]},
// outputDimensionality: dimensions}; the answer's embeddings[i].values
// become data[i].embedding, as numbers or, for encoding_format base64,
// little-endian float32s in base64. Gemini reports no tokens for
// embeddings, so usage is an estimate (a token per 4 bytes of input) that
// keeps the call from being free. user is ignored; other fields refused.
//
// Request bodies are read as encoding/json reads them: escaped key names
// decoded ("\u006dessages" is messages), exact names at the top level
// (another case is another, unknown, field), the last of duplicate keys.
//
// # Request: OpenAI chat field → GenerateContentRequest field
//
//	model                              the URL's model (a "models/" prefix dropped); not in the body
//	messages, role system/developer    systemInstruction {role: user, parts: their text parts}
//	messages, role user                contents {role: user}; content string or parts:
//	  part text / refusal                text part (empty text left out)
//	  part image_url data: URL           inlineData {mimeType, data} (base64 only)
//	  part image_url https URL           fileData {mimeType from the name's extension: png, jpg,
//	                                     jpeg, webp, gif, heic, heif, pdf; others refused}
//	  part input_audio wav / mp3         inlineData audio/wav, audio/mp3
//	  part file with file_data           inlineData with the data URL's type; file_id refused
//	messages, role assistant           contents {role: model}: text parts, refusal text,
//	  tool_calls[]                       functionCall {name, args: arguments parsed; "" → {}; not an
//	                                     object → refused}, with thoughtSignature from the call's
//	                                     extra_content.google.thought_signature; for Gemini 3,
//	                                     a model turn with no signature gets SkipSignature on
//	                                     its first call (Gemini 3 refuses unsigned calls, and a
//	                                     conversation begun on another target has none)
//	  function_call, audio               refused
//	messages, role tool                functionResponse {name of the earlier tool call with that
//	                                   tool_call_id (none → refused), response {output: its text}}
//	                                   in a user turn
//	consecutive turns of one role      merged into one content
//	max_completion_tokens, max_tokens  generationConfig.maxOutputTokens (the first wins; < 1 refused)
//	temperature (0–2), top_p (0–1)     temperature, topP
//	top_k (extension)                  topK
//	stop (string or array)             stopSequences (empty strings left out; more than 5 refused)
//	n (1–8)                            candidateCount
//	seed (32-bit)                      seed
//	presence_penalty, frequency_pen.   presencePenalty, frequencyPenalty
//	response_format json_object        responseMimeType application/json
//	response_format json_schema        responseMimeType application/json, responseJsonSchema
//	tools[] type function              tools[0].functionDeclarations {name, description,
//	                                   parametersJsonSchema: parameters}; other types refused
//	tool_choice auto / none / required toolConfig.functionCallingConfig.mode AUTO / NONE / ANY
//	tool_choice {function: {name}}     mode ANY, allowedFunctionNames [name]
//	tool_choice allowed_tools required mode ANY, allowedFunctionNames; mode auto refused
//	parallel_tool_calls false          refused (Gemini may call several functions at once)
//	reasoning_effort                   thinkingConfig: Gemini 3 models thinkingLevel (minimal, low,
//	                                   medium, high) with includeThoughts; others thinkingBudget
//	                                   minimal 512, low 1024, medium 8192, high 24576 with
//	                                   includeThoughts; none → thinkingBudget 0 (refused for
//	                                   gemini-2.5-pro and Gemini 3, which always think; Gemini 3
//	                                   Pro takes low and high only)
//	stream, stream_options             the streaming URL; the usage chunk
//	logprobs true, top_logprobs > 0    refused; false and 0 pass
//	logit_bias (non-empty), audio,     refused
//	modalities other than ["text"],
//	functions, function_call,
//	web_search_options, verbosity
//	other than medium, unknown fields
//	user, safety_identifier, store,    ignored: the answer means the same without them
//	metadata, service_tier,
//	prompt_cache_key, prompt_cache_retention, prediction
//
// # Answer: GenerateContentResponse → chat.completion
//
//	responseId                         id "chatcmpl-" + responseId; tool call IDs call_<responseId>_<n>
//	                                   (call_<n> without one; call_…_<candidate>_<n> past the first)
//	modelVersion                       model (else the target's model)
//	candidates[i]                      choices[index]
//	  text parts                         content (null when there are only tool calls)
//	  thought parts                      reasoning_content
//	  functionCall parts                 tool_calls {id, function {name, arguments: args}},
//	                                     extra_content.google.thought_signature when signed
//	  finishReason STOP                  stop, or tool_calls when the candidate called functions
//	  MAX_TOKENS                         length
//	  SAFETY, RECITATION, BLOCKLIST,     content_filter
//	  PROHIBITED_CONTENT, SPII,
//	  IMAGE_SAFETY (and kin), LANGUAGE
//	  others (OTHER, MALFORMED_…)        stop (tool_calls with calls)
//	promptFeedback.blockReason,        one choice: content and refusal "Gemini blocked the prompt
//	no candidates                      (REASON): message", finish_reason content_filter — a refusal
//	                                   the client sees, not an error
//	usageMetadata                      prompt_tokens promptTokenCount + toolUsePromptTokenCount;
//	                                   completion_tokens candidatesTokenCount + thoughtsTokenCount;
//	                                   completion_tokens_details.reasoning_tokens thoughtsTokenCount;
//	                                   prompt_tokens_details.cached_tokens cachedContentTokenCount.
//	                                   In streams the last counts seen, in the usage chunk only.
package gemini
