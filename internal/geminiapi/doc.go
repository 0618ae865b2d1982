// Package geminiapi speaks Google's Gemini API from the server's side,
// over OpenAI chat completions: the gateway serves google-genai clients
// with it (POST /v1beta/models/{m}:generateContent,
// :streamGenerateContent, :countTokens, and Vertex AI's
// /v1/projects/{p}/locations/{l}/publishers/{pub}/models/{m}:… paths)
// while walking ladders of chat targets, and the simulated provider
// answers in Gemini's and Vertex's format with it. It is to Gemini what
// provider/anthropic's reverse translation is to Messages.
//
// A server wires it so:
//
//	model, method, _, ok := ParsePath(r.URL.Path)        // !ok → 404
//	generateContent:        chat, err := ToChat(model, body, false)
//	                        out, err := FromChatWith(chatAnswer, model, OptionsFor(body)) // ErrBadChat → 502
//	streamGenerateContent:  chat, err := ToChat(model, body, true)
//	                        sse := r.URL.Query().Get("alt") == "sse"
//	                        io.Copy(w, NewStreamWith(chatSSE, model, sse, OptionsFor(body)))
//	countTokens:            chat, err := CountTokensToChat(model, body)
//	                        out, err := CountTokensFromChat(chatAnswer) // or CountTokensResponse(estimate)
//	a refusal (*Error):     WriteError(w, e.Code, e.Status, e.Message)
//	an upstream's 429:      WriteError(w, 429, "", msg, RetryInfo(wait))
//
// # Requests
//
// A body is read as Google reads protobuf JSON: members by their JSON
// (maxOutputTokens) or proto (max_output_tokens) names, escapes in keys
// decoded; a member named twice (under either name) or a schema property
// named twice, an unknown member, a value of the wrong type, a free-form value (function arguments and
// responses, schemas) nesting deeper than 64 levels are refused with 400
// INVALID_ARGUMENT in Google's words, naming the field by its proto path
// ("Invalid value at 'contents[0].parts[1].text' (TYPE_STRING), 5",
// "* GenerateContentRequest.contents: contents is not specified"). Numbers
// may be strings, as protobuf JSON allows. The work is linear in the body.
//
// The mapping to chat:
//
//	systemInstruction (text parts)      → a leading system message
//	contents role user (or none)        → user messages; model → assistant
//	text part                           → text (one part: the content string)
//	thought text part (model)           → reasoning_content; in a user turn, text
//	inlineData image/*                  → image_url with a data: URL
//	inlineData application/pdf          → a file part (file_data data: URL)
//	inlineData audio/wav, audio/mp3     → input_audio
//	fileData image/* (or no type)       → image_url with the fileUri
//	functionCall {id?, name, args}      → assistant tool_calls; without an id,
//	                                      "call_<n>" for the n-th call of the request
//	functionResponse {id?, name, resp.} → a tool message (before the rest of its
//	                                      turn) answering the call with its id, else
//	                                      the first unanswered call of its name
//	tools[].functionDeclarations        → function tools: parameters (Google's
//	                                      Schema: "OBJECT" → "object", nullable →
//	                                      a "null" type, example → examples) or
//	                                      parametersJsonSchema as is
//	toolConfig.functionCallingConfig    → tool_choice: AUTO/VALIDATED "auto",
//	                                      ANY "required" (one allowed name: that
//	                                      function), NONE "none"; allowed names
//	                                      leave the other declarations out
//	generationConfig maxOutputTokens    → max_completion_tokens
//	  temperature, topP, seed,          → temperature, top_p, seed,
//	  presencePenalty, frequencyPenalty →   presence_penalty, frequency_penalty
//	  candidateCount                    → n
//	  stopSequences                     → stop
//	  responseMimeType application/json → response_format json_object, or
//	    + responseSchema / …JsonSchema  →   json_schema named "response"
//	  thinkingConfig thinkingLevel      → reasoning_effort minimal/low/medium/high
//	  thinkingConfig thinkingBudget     → 0 none, ≤1024 minimal, ≤2048 low,
//	                                      ≤4096 medium, more high; -1 the default
//
// Not sent, as they change nothing an answer shows: topK (chat has no
// top_k; it narrows sampling), includeThoughts (chat targets return their
// reasoning as they do; OptionsFor reads it, and FromChatWith and
// NewStreamWith then leave the reasoning out unless it is true, as
// Gemini does; FromChat and NewStream always pass it on), safetySettings (checked, not sent: chat targets apply
// their own filters, reported as SAFETY), mediaResolution, serviceTier,
// store, labels, and the model member (the path names the model).
// Refused as not translatable: cachedContent, tools other than function
// declarations, executableCode and codeExecutionResult parts, media in
// model turns and other media types, function responses with parts,
// function names with '.' or ':' (chat targets take letters, digits, '_'
// and '-'), responseLogprobs, text/x.enum, and output other than text.
//
// # Answers
//
// FromChat writes each choice as a candidate: reasoning as a thought
// part, content (and refusal) as text, tool calls as functionCall parts
// with their ids. finish_reason stop and tool_calls are STOP, length
// MAX_TOKENS, content_filter SAFETY, others OTHER. Usage: prompt_tokens →
// promptTokenCount, completion_tokens less reasoning_tokens →
// candidatesTokenCount, reasoning_tokens → thoughtsTokenCount,
// cached_tokens → cachedContentTokenCount, and totalTokenCount.
// modelVersion is the model asked for; responseId the chat's id.
//
// NewStream passes text and thought deltas on as they come, holds tool
// calls until their choice finishes (Gemini sends a functionCall whole),
// and ends with a response holding the function calls, the finishReasons
// and usageMetadata. With alt=sse each response is an event
// "data: {…}\r\n\r\n"; without, the responses are the elements of one
// JSON array, written as they come.
//
// # Errors
//
// A refusal is {"error": {"code": 400, "message": …, "status":
// "INVALID_ARGUMENT"}}; WriteError writes any status, with details such as
// RetryInfo. A chat stream's error ({"error": …} chunks, unreadable
// chunks) ends a stream with such an object, its code read from the
// OpenAI error (rate limits 429 RESOURCE_EXHAUSTED, overload 503
// UNAVAILABLE, invalid requests 400, auth 401 and 403, timeouts 504,
// others 500 INTERNAL). A chat stream that ends without [DONE] or a
// finish_reason gives no finishReason and a read error wrapping
// io.ErrUnexpectedEOF: the server must then cut the connection, so that
// a cut answer is never taken for a whole one.
package geminiapi
