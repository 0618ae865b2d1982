// Package sim is a simulated, fault-injecting AI provider: an
// OpenAI-compatible HTTP server for tests, the demo and the outage
// benchmark, that behaves like a real provider and fails on demand. It
// speaks Anthropic's Messages API, AWS Bedrock, the Gemini API, Vertex AI
// and Azure OpenAI as well, each in its own wire format and error
// dialect, and serves the credential services those clouds' libraries
// call, so one Server stands in for every provider of a cross-cloud
// ladder.
//
// # API
//
// A Server serves, as an http.Handler (mount it on httptest.NewServer or a
// real listener):
//
//   - POST /v1/chat/completions, streamed or not. The reply is lorem ipsum,
//     one token per word, Output.Tokens long (cut at the request's
//     max_tokens or max_completion_tokens, with finish_reason "length").
//     usage counts the prompt as about a token per 4 bytes of each
//     message's text, plus 3 per message and 3 per call, plus a token per
//     4 bytes of the tools' definitions. A stream sends a role chunk,
//     content chunks of Output.ChunkTokens tokens, a finish chunk, a usage
//     chunk when stream_options.include_usage is set, and data: [DONE].
//   - POST /v1/messages, Anthropic's Messages API, translated to a chat
//     completion and back (tools become tool_use blocks with toolu_ ids,
//     streamed as input_json_delta events; tool_result blocks count as
//     tool results), and POST /v1/messages/count_tokens, which answers
//     {"input_tokens": N} with the same prompt count, at once, free of
//     faults and limits and not counted in Stats.
//   - POST /v1/responses, the Responses API, streamed or not: a response
//     whose output is an assistant message (one output_text part) or
//     function_call items, with usage input_tokens, output_tokens and
//     total_tokens; cut at max_output_tokens (16 or more), it is
//     "incomplete". A stream sends named events numbered by
//     sequence_number from 0: response.created, response.in_progress,
//     response.output_item.added, response.content_part.added, a
//     response.output_text.delta per chunk, response.output_text.done,
//     response.content_part.done, response.output_item.done (for a
//     function call: output_item.added, function_call_arguments.delta
//     chunks, function_call_arguments.done, output_item.done), then
//     response.completed (response.incomplete when cut). Nothing is
//     stored: previous_response_id and store are not read.
//   - POST /v1/embeddings: unit vectors drawn from the seed and the input
//     text (the same text always embeds the same), float or base64,
//     Output.Dimensions long unless the request gives dimensions.
//   - GET /v1/models and GET /v1/models/{id}: Config.Models, or
//     DefaultModels.
//   - The job API, after OpenAI's videos: POST /v1/videos (JSON, or
//     multipart/form-data as the SDKs send it) makes a job that is queued
//     for Jobs.QueueTime, in progress for Jobs.RunTime, then completed, or
//     failed with an error category when a job_failed fault hit its
//     submit; GET /v1/videos/{id} reads it (progress 0 to 100), GET
//     /v1/videos lists the account's jobs, DELETE /v1/videos/{id} deletes
//     it, GET /v1/videos/{id}/content sends a completed job's content,
//     Jobs.ContentBytes long (endless when negative, until the client
//     stops reading), and GET /v1/video_keys/{key} finds the job an
//     Idempotency-Key made. The account is the API key: jobs, keys and
//     Jobs.MaxQueued (a submit over that many unfinished jobs gets 429
//     queue_full) are per account. An Idempotency-Key is remembered for
//     ever: a resend answers the job it made (Idempotent-Replayed: true),
//     or the queue_full or provider_capacity_exceeded refusal it got, as
//     providers replay refusals; another body under it is a 422. Polls,
//     downloads and deletes never fail. Stats counts the jobs made and
//     completed, the seconds billed and the content bytes sent.
//   - POST /v1/images/generations, answered at once as a non-streamed
//     chat completion is (faults, limits and latency alike): n images (1
//     to 10), each a few bytes drawn from the prompt, base64'd.
//
// # Clouds
//
// Every cloud path translates the request in (internal/bedrockapi,
// internal/geminiapi, the Messages codec of internal/provider/anthropic),
// runs the chat engine — latency, limits, faults, tools, stats — and
// translates the answer out. A request the translation refuses is a 400
// in the path's own shape before the engine sees it.
//
//   - AWS Bedrock: POST /model/{modelId}/converse, /converse-stream,
//     /invoke and /invoke-with-response-stream (modelId URL-escaped;
//     InvokeModel takes a Claude body, anthropic_version
//     bedrock-2023-05-31). Streams are AWS event-stream frames
//     (application/vnd.amazon.eventstream); errors are Bedrock's
//     ({"message"} with x-amzn-ErrorType). Credentials: a SigV4 signature
//     (service bedrock, AWS.Region, X-Amz-Date within 5 minutes of the
//     Server's clock) verified with bedrockapi.VerifySigV4 against
//     AWS.Keys and the keys the sim issued (which must carry their
//     X-Amz-Security-Token and not have expired: 403
//     ExpiredTokenException), or Authorization: Bearer with one of
//     AWS.APIKeys. With no AWS.Keys and no AWS.APIKeys, any well-formed
//     signature or bearer token is accepted unverified.
//   - Gemini API (AI Studio): POST /v1beta/models/{model}:generateContent
//     (or /v1/models/…),
//     :streamGenerateContent (?alt=sse: events; otherwise one JSON array
//     written as it comes) and :countTokens ({"totalTokens": N}, at once,
//     free of faults and limits, not counted in Stats), with the key in
//     x-goog-api-key or ?key= checked against Google.APIKeys (none: any
//     key). No key is a 403 PERMISSION_DENIED, a wrong one a 400
//     INVALID_ARGUMENT with reason API_KEY_INVALID.
//   - Vertex AI: POST
//     /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent,
//     :streamGenerateContent and :countTokens as above (v1beta1 too), and
//     publishers/anthropic/models/{m}:rawPredict and :streamRawPredict: a
//     Messages body without model (the URL's) and with anthropic_version
//     vertex-2023-10-16, answered as /v1/messages answers, errors
//     included. Authorization: Bearer must be a token the sim's token
//     endpoint or metadata server issued, unexpired on the Server's
//     clock; otherwise 401 UNAUTHENTICATED in Google's shape. Express
//     mode, POST /v1/publishers/google/models/{m}:{method} (v1beta1
//     too), takes an API key instead, as the Gemini API does.
//   - Azure OpenAI: POST /openai/deployments/{d}/chat/completions and
//     /openai/deployments/{d}/embeddings (?api-version= required: without
//     it, 404 Resource not found, as Azure answers; the deployment is the
//     model), and the v1 API's POST /openai/v1/chat/completions,
//     /openai/v1/embeddings and /openai/v1/responses (the model from the
//     body). An api-key header is checked against Azure.Keys (none: any
//     key), an Authorization: Bearer token against the tokens the sim
//     issued (Entra ID); a bad one is Azure's 401 ("Access denied due to
//     invalid subscription key or wrong API endpoint…"). Answers are
//     OpenAI's; refusals are Azure's {"error":{"code","message"}}.
//
// Faults speak each cloud's dialect:
//
//	fault                   Bedrock                          Google (Gemini, Vertex)            Azure
//	throttle, 429s          429 ThrottlingException          429 RESOURCE_EXHAUSTED + RetryInfo 429 + retry-after-ms, retry-after
//	error_storm 503, 529    503 ServiceUnavailableException  503 UNAVAILABLE                    503
//	error_storm 500, 502    500 InternalServerException      500 INTERNAL                       500, 502
//	error_storm 408, 504    408 ModelTimeoutException        504 DEADLINE_EXCEEDED              408, 504
//	error_storm 403         403 AccessDeniedException        403 PERMISSION_DENIED              403
//	error_storm 400         400 ValidationException          400 INVALID_ARGUMENT               400
//	auth                    403 UnrecognizedClientException  401 UNAUTHENTICATED                401
//	model_not_ready         429 ModelNotReadyException       503 UNAVAILABLE                    503 model_not_ready
//	content_filter          400 ValidationException          200 blockReason / finishReason SAFETY  400 content_filter
//	stream_error            an exception frame               an error object ending the stream  an error event
//	garbage                 half an event-stream frame, cut  half a response, cut               half an event, cut
//
// RetryInfo's retryDelay is the fault's retry_after. Claude paths
// (InvokeModel's errors aside, which are Bedrock's; rawPredict's, which
// are Anthropic's) follow /v1/messages. Hangs, stalls, drips and resets act on
// every path as on chat: a reset, or a hang or stall released by Close,
// cuts the client's own connection, and a translated stream then sends
// nothing more (no error event or exception frame of the translator's).
//
// # Credential services
//
// On the same Server, so that tests, the demo and fusebox mock need
// nothing else (point the libraries at the Server's URL):
//
//	POST /token                 OAuth2 token endpoint (a service account's token_uri):
//	                            grant_type urn:ietf:params:oauth:grant-type:jwt-bearer with an
//	                            RS256 assertion (iss, aud = this URL, exp after now; signed by
//	                            the key Google.ServiceAccounts gives its iss, when any are set),
//	                            refresh_token (authorized_user files; Google.RefreshTokens) or
//	                            client_credentials (Entra ID) → {"access_token","expires_in",
//	                            "token_type":"Bearer"} for Google.TokenLifetime (default 1h);
//	                            a refusal is 400 {"error":"invalid_grant",…}
//	GET  /computeMetadata/v1/…  the GCE metadata server (GCE_METADATA_HOST): the default service
//	                            account's token, email and scopes, project/project-id,
//	                            universe/universe-domain; Metadata-Flavor: Google required (403)
//	POST /                      AWS STS, Action=AssumeRoleWithWebIdentity (AWS_ENDPOINT_URL_STS):
//	                            XML as STS answers, keys for AWS.CredentialLifetime (default 1h)
//	GET  /v2/credentials/{id}   the container credentials endpoint
//	                            (AWS_CONTAINER_CREDENTIALS_FULL_URI), Authorization
//	                            AWS.ContainerToken (unset: any), JSON as ECS answers
//
// Issued tokens and keys are random (crypto/rand, not the seeded source)
// and expire on the Server's clock; Stats.Credentials counts them. No
// error quotes a secret, a token or an assertion. ClientEnv lists the
// environment variables that point the AWS, Google and Azure libraries at
// a Server.
//
// Tools (chat, messages and responses): a request with function tools
// gets tool calls instead of text when tool_choice is "required" or names
// a function, and with "auto" (or none given) when the last message is
// the user's; never with "none". The tool is drawn from the seed; when
// there are several tools and parallel_tool_calls is not false, a coin
// flip makes two calls of different tools. Arguments are a JSON object
// drawn from the tool's parameters schema (type, enum, const, properties
// and required, items, the bounds of strings, numbers and arrays, common
// formats, anyOf/oneOf/allOf and local $ref; recursion and size are
// bounded and anything else is left unchecked; no schema gives {}). A
// chat answer has message.tool_calls (ids call_…), content null and
// finish_reason "tool_calls"; streamed, each call arrives by index: a
// chunk with its id, type and name and empty arguments, then its
// arguments in chunks of Output.ChunkTokens tokens (a token is 4 bytes of
// JSON). Tool calls are not cut at max_tokens. After tool results (role
// tool messages, function_call_output items, tool_result blocks) the
// answer is text that starts by quoting them ("Tool result: …."). Names
// must match ^[a-zA-Z0-9_-]{1,64}$, parameters must be an object schema,
// and a request holds at most 128 tools; otherwise the answer is a 400
// naming the parameter, in the API's error shape.
//
// Chat completions also take n (1 to 8; more is a 400
// integer_above_max_value): n choices, each its own text (the first is
// the text n = 1 gets), streamed by index, usage counting them all; and
// response_format (text.format for the Responses API): json_object gives
// {"reply": text}; json_schema gives a document drawn from its schema as
// tool arguments are. JSON content counts a token per 4 bytes and, cut at
// max_tokens, is left broken, as a provider leaves it.
//
// Latency: a non-streamed call takes a draw from a log-normal with
// Latency.Median and Latency.P99; a stream sends its headers and first
// chunk after Latency.TTFB (drawn with the same spread), then chunks at
// Latency.TokensPerSecond. Every wait is on the Config's clock.Clock and
// ends when the client gives up, so tests with a fake clock advance it
// instead of sleeping.
//
// Rate limits: with Limits.RPM or Limits.TPM set, answers carry OpenAI's
// x-ratelimit-limit-requests, x-ratelimit-remaining-requests,
// x-ratelimit-reset-requests and the same for tokens; a call over a limit
// gets 429 rate_limit_exceeded with Retry-After and retry-after-ms, unless
// Limits.HeadersOnly.
//
// Determinism: every random draw (fault fractions, latency, reply text,
// tool calls and their ids, JSON documents) comes from one PCG source
// seeded with Config.Seed, drawn under a mutex in request order. Two Servers with the same Config that receive the same
// requests in the same order at the same clock times answer identically.
//
// # Faults
//
// A Fault (see FaultKind for what each kind does) is active from From to
// To (flapping, with Every and For: active for the first For of every
// Every) and hits each call with probability Fraction; the first active fault
// in the list that hits a call decides its answer, and latency spikes add
// their Extra to it. Error answers (error_storm, throttle, auth,
// queue_full) come at once, after any spike: combine a storm with a spike
// for slow errors. Scheduled faults (Config.Faults) count From and To from
// Config.Start; live faults, set with SetFaults or the control endpoint,
// count from when they were set. Faults hit the Responses API as they hit
// chat completions; in its streams, a stream_error is a response.failed
// event and a no_done fault leaves out response.completed. A garbage
// fault, in any stream, sends the first bytes of the next event cut in
// the middle of its JSON (the first half of a frame on Bedrock), then
// cuts the connection. A drip fault, in any stream, sends the first
// content at the usual time, then one content chunk every extra, and
// after the last one nothing (no finish_reason, no end event) until the
// client gives up: a provider alive but too slow to be of use.
//
// Server.Stats, and GET /sim/stats, count calls received (in all, and by
// API: each cloud's paths under names of their own, see Stats.APIs), how
// they ended (Outcome) and the tokens they carried and were billed.
//
// # Control endpoints
//
//	GET    /sim/faults          {"elapsed":"1m2s","faults":[{"kind":"error_storm",…,"live":false,"active":true,"hits":17}]}
//	POST   /sim/faults          a fault or a list of faults: replaces the live faults
//	DELETE /sim/faults          removes the live faults (?all=true: scheduled ones too)
//	GET    /sim/stats           Stats as JSON
//	GET    /sim/jobs            {"jobs":[…],"keys":[…]}: Server.Jobs and Server.Keys
//
// For example:
//
//	curl -X POST localhost:9000/sim/faults -d '{"kind":"error_storm","status":529,"fraction":0.5,"to":"30s"}'
//
// # Scenario files
//
// LoadScenario reads a Config from YAML. Every field is optional;
// durations are written with a unit (200ms, 5s, 2m); errors name the file,
// line and field ("outage.yaml:7: faults[0].status: is 418, want one of
// 500, 502, 503, 504, 529").
//
//	name: primary                # in stats and errors; default "sim"
//	seed: 42                     # the random source's seed; default 0
//	latency:
//	  median: 300ms              # non-streamed call duration, median
//	  p99: 2s                    # its 99th percentile (log-normal spread)
//	  ttfb: 150ms                # a stream's time to first byte; default: median
//	  tokens_per_second: 80      # a stream's token rate; default: no pacing
//	output:
//	  tokens: 40                 # reply length; default 20
//	  chunk_tokens: 3            # tokens per stream chunk; default 3
//	  dimensions: 16             # embedding length; default 16
//	limits:
//	  rpm: 600                   # requests per minute; default: none
//	  tpm: 200000                # tokens per minute; default: none
//	  headers_only: false        # true: report in headers, never refuse
//	jobs:
//	  queue_time: 30s            # a job is queued this long; default 0
//	  run_time: 2m               # then in progress this long; default 0
//	  max_queued: 4              # unfinished jobs per account before queue_full; default none
//	  content_bytes: 1048576     # a completed job's content; default 64 KiB; negative: endless
//	models: [gpt-4.1, text-embedding-3-small]  # default: any model
//	faults:                      # from/to: since start; to: default never
//	  - {kind: error_storm, status: 503, fraction: 0.9, from: 60s, to: 80s}
//	  - {kind: throttle, retry_after: 5s, fraction: 1, from: 10s, to: 20s}
//	  - {kind: latency_spike, extra: 2s, from: 30s, to: 40s}
//	  - {kind: hang, fraction: 0.1, from: 50s, to: 55s}
//	  - {kind: stall, after_chunks: 3, from: 90s, to: 100s}
//	  - {kind: reset, after_chunks: 2, from: 100s, to: 105s}
//	  - {kind: auth, from: 110s, to: 115s}
//	  - {kind: queue_full, status: 503, retry_after: 2s, from: 120s, to: 125s}
//	  - {kind: stream_error, after_chunks: 1, message: "upstream died", from: 130s}
//	  - {kind: no_done, from: 140s, to: 150s}
//	  - {kind: error_storm, from: 160s, to: 180s, every: 2s, for: 1s}  # 503 for 1s, healthy for 1s, …
//	  - {kind: capacity, fraction: 0.2}                # provider_capacity_exceeded, replayed for its key
//	  - {kind: job_failed, code: runtime_unavailable, fraction: 0.1} # accepted, then failed
//	  - {kind: accept_reset, fraction: 0.1}            # job made, then the connection reset
//	  - {kind: accept_hang, from: 200s, to: 210s}      # job made, then no answer
//	  - {kind: model_not_ready, fraction: 0.1}          # Bedrock's ModelNotReadyException
//	  - {kind: content_filter, code: response}          # Azure's content_filter 400, Gemini's SAFETY
//	  - {kind: garbage, after_chunks: 2}                # half an event (or frame), then a cut
//	  - {kind: drip, extra: 2s}                         # a chunk every 2s, and never the end
//	aws:                         # the Bedrock paths and AWS credential services
//	  region: us-east-1          # SigV4's region; default us-east-1
//	  keys: {AKIDSIM: secret}    # access key id: secret; none (and no api_keys): any signature
//	  api_keys: [ABSK...]        # Bedrock API keys (Authorization: Bearer)
//	  credential_lifetime: 15m   # of keys from STS and the container endpoint; default 1h
//	  container_token: tok       # the container endpoint's Authorization; default: any
//	google:                      # the Gemini and Vertex paths and the token services
//	  api_keys: [AIza...]        # Gemini API keys; default: any
//	  service_accounts:          # client_email: public key PEM; default: any issuer, unsigned
//	    sa@p.iam.gserviceaccount.com: |
//	      -----BEGIN PUBLIC KEY-----
//	      ...
//	  refresh_tokens: [1//0g...] # for authorized_user files; default: any
//	  token_lifetime: 1h         # of issued access tokens; default 1h
//	  project: my-project        # the metadata server's; default sim-project
//	  email: sa@my-project.iam.gserviceaccount.com
//	azure:
//	  keys: [azkey]              # api-key values; default: any
//
// One Server serves every cloud at once, so nothing says which cloud a
// scenario is: point each provider of a gateway config at the same sim
// (or at sims of their own, to fail them apart).
//
// A fault's fields: kind (required); from, to; every and for (flapping:
// active for the first "for" of every "every" from "from", 0 < for <
// every; default: active throughout); fraction (more than 0, at
// most 1; default 1); status (error_storm: 400, 403, 408, 500, 502, 503,
// 504 or 529, default 503; queue_full: 429 or 503, default 429; capacity: 429 or 503,
// default 503); retry_after (throttle, default 1s; error_storm, queue_full
// and capacity, default none); extra (latency_spike and drip, required:
// the added latency; the time between a drip's chunks);
// after_chunks (stall, stream_error, reset, garbage); message (the error's text);
// code (job_failed: the error category, default runtime_unavailable;
// content_filter: prompt or response, default prompt).
// capacity hits job submits, chat completions and images; job_failed,
// accept_reset and accept_hang hit job submits only. A field that does not apply to the kind is
// an error. examples/scenarios/ holds outage.yaml, throttle.yaml,
// latency-spike.yaml, flap.yaml and partial.yaml.
package sim
