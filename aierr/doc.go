// Package aierr reads what an AI provider's answer means.
//
// Given an HTTP status, the response headers and the (possibly partial)
// body, a transport error, one server-sent event of a stream, a completed
// 200 body or a job's error record, it returns a Verdict: a Kind, an
// optional SubKind, whether the call may be retried on the same target or
// sent to another one, and how long the provider asked to wait. The router
// switches on the Verdict; nothing downstream re-parses provider bodies.
//
// It knows the error shapes of OpenAI, Azure OpenAI, Anthropic, Google
// (Gemini API and Vertex AI), AWS Bedrock, OpenRouter, DeepSeek, job APIs
// (queue_full, provider_capacity_exceeded, runtime_unavailable) and
// OpenAI-compatible servers (vLLM, TGI) whose only clue is the message
// text; the clouds' own shapes are described below, cloud by cloud.
//
// # What each Kind means
//
//	Kind         breaker  same target           other target        examples
//	Success      success  -                     -                   2xx
//	Outage       failure  yes, after backoff    yes                 5xx, 529, timeouts, resets,
//	                                                                ErrFirstByteTimeout, ErrStreamStalled
//	Throttle     ignore   yes, after Wait       yes (if Wait is     429 rate_limit_exceeded,
//	                                            too long to afford) rate_limit_error, RESOURCE_EXHAUSTED
//	Capacity     ignore   yes, later, with a    yes                 queue_full,
//	                      new idempotency key                       provider_capacity_exceeded
//	Auth         ignore   no (disable the key)  yes (other keys)    401, 403, invalid_api_key
//	Quota        ignore   no (disable the key)  yes (other keys)    402, insufficient_quota, PerDay quota
//	ClientError  ignore   no                    only ContextLength  400, 404, 413, 422
//	                                            and ContentFilter
//	                                            (if the alias says),
//	                                            and NotDeployed
//	Canceled     ignore   no                    no                  the caller's context.Canceled
//
// Verdict.Breaker gives the breaker column, Verdict.SameTarget and
// Verdict.OtherTarget the next two; Verdict.NewIdempotencyKey is set for
// Capacity.
//
// # How a body is read
//
// A provider-specific code beats the HTTP status, which beats a generic
// code: a 429 with "insufficient_quota" is Quota, a 400 with
// "context_length_exceeded" is ClientError/ContextLength, and a 503 with
// "invalid_request_error" is still an Outage. The message then refines the
// verdict: "maximum context length" makes a plain 400 a ContextLength error,
// a per-day quota or "exceeded your current quota" makes a 429 Quota, and
// "at capacity" makes a 429 or 5xx Capacity.
//
// Only the first MaxBody (64 KiB) bytes of a body are read, messages are
// kept up to MaxMessageLen bytes and codes up to MaxCodeLen (of HTTP token
// characters only: a code is safe in a header), so no input
// makes the classifier allocate without bound; it never panics. The JSON
// is read in one pass by aireq's lenient Reader rather than decoded with
// encoding/json, but as encoding/json would read it: keys and the values
// compared are decoded ("c\u006fde" is code), and of a key given twice
// the last counts. On a 2-core VM, classifying an OpenAI 429 with 18
// headers and a JSON body takes about 1 µs and a 503 0.3–0.6 µs, each
// with one allocation (the message string); see bench_test.go.
//
// # AWS Bedrock
//
// Bedrock names its exception in the x-amzn-ErrorType header
// ("ThrottlingException:http://internal.amazon.com/coral/…") and/or in
// the body's __type ("com.amazon.coral.validate#ValidationException");
// the name is what precedes ':' and follows '#', and it beats every other
// code and the status. The message is the body's message, or Message.
//
//	ThrottlingException (429)            Throttle; usually no Retry-After.
//	                                     "Too many tokens per day" is Quota/DailyQuota
//	ServiceQuotaExceededException (400)  Throttle: AWS says resubmit later, and
//	                                     Bedrock's quotas are per model and region,
//	                                     so the wall is the target's, not the key's
//	ServiceUnavailableException (503),
//	InternalServerException (500)        Outage
//	ModelNotReadyException (429)         Outage/NotReady: not the caller's rate;
//	                                     the model cannot serve on that target yet
//	                                     (AWS's SDKs retry it), so its breaker
//	                                     counts it and the walk fails over
//	ModelTimeoutException (408)          Outage/Timeout
//	ModelErrorException (424),
//	ModelStreamErrorException            Outage
//	ValidationException (400)            ClientError; "Input is too long", "too many
//	                                     input tokens", "prompt is too long" are
//	                                     ContextLength; a model that needs an
//	                                     inference profile ("with on-demand
//	                                     throughput") is NotDeployed
//	AccessDeniedException (403)          Auth/PermissionDenied (IAM: the credential
//	                                     leaves rotation); but "You don't have access
//	                                     to the model with the specified model ID"
//	                                     (model access not granted there) is
//	                                     ClientError/NotDeployed
//	UnrecognizedClientException,
//	InvalidSignatureException,
//	ExpiredTokenException,
//	IncompleteSignature (403/400)        Auth/Unauthenticated
//	ResourceNotFoundException (404)      ClientError/NotDeployed (see below)
//
// A Converse answer stopped by a guardrail or content filter (stopReason
// "guardrail_intervened", "content_filtered") is ClientError/ContentFilter.
//
// In a stream the provider passes an event-stream exception on as an
// error whose type or code is its name with a lower-case first letter
// ("throttlingException") or as an event so named; ClassifyEvent reads
// both, with the same meanings.
//
// # Google: Gemini API and Vertex AI
//
// Errors are a google.rpc.Status, {"error":{"code":429,"message":…,
// "status":"RESOURCE_EXHAUSTED","details":[…]}}, or an array of them in a
// stream. An ErrorInfo reason in the details beats the status.
//
//	RESOURCE_EXHAUSTED (429)        Throttle, waiting RetryInfo.retryDelay ("37s",
//	                                "1.250s"). It is Quota/DailyQuota when a
//	                                QuotaFailure quotaId or an ErrorInfo
//	                                quota_limit or quota_metric is per day; the
//	                                message "You exceeded your current quota" is
//	                                sent for per-minute limits too and says
//	                                nothing on its own. Vertex AI's "Resource
//	                                exhausted" (its shared pool) is a Throttle
//	UNAVAILABLE (503),
//	INTERNAL (500)                  Outage
//	DEADLINE_EXCEEDED (504)         Outage/Timeout
//	UNAUTHENTICATED (401)           Auth/Unauthenticated
//	PERMISSION_DENIED (403)         Auth/PermissionDenied; with ErrorInfo
//	                                BILLING_DISABLED, Quota/Billing
//	INVALID_ARGUMENT (400)          ClientError; "exceeds the maximum number of
//	                                tokens", "input token count" are ContextLength
//	FAILED_PRECONDITION (400)       ClientError, but never an outage: "User
//	                                location is not supported" is
//	                                Auth/PermissionDenied (no key of the provider
//	                                works from here; other targets go on), and
//	                                "enable billing" is Quota/Billing
//	NOT_FOUND (404)                 ClientError/NotFound; Vertex AI's "Publisher
//	                                Model … was not found or your project does
//	                                not have access to it" is NotDeployed
//
// A safety stop is a 200 with a finish reason (finishReason SAFETY, …,
// promptFeedback.blockReason, or finish_reason "content_filter" once a
// provider has translated it): ClientError/ContentFilter, never an Outage.
//
// # Azure OpenAI
//
// Azure answers in OpenAI's shape. A 429 carries retry-after-ms (or
// x-ms-retry-after-ms) and retry-after; the millisecond header wins. Its
// content filter is a 400 with code content_filter and innererror.code
// ResponsibleAIPolicyViolation: ClientError/ContentFilter, which an alias
// may fail over on. 408 (Timeout), 500 (InternalServerError) and 503
// (ServiceUnavailable) are outages; a 401 "Access denied due to invalid
// subscription key" is Auth; API Management's {"statusCode":429,
// "message":…} is read too. DeploymentNotFound (404) is
// ClientError/NotDeployed.
//
// # A model the target does not have
//
// Bedrock's ResourceNotFoundException (a model not enabled, not in the
// region, or past its end of life), Azure's DeploymentNotFound and the
// other cases above marked NotDeployed say that this target cannot serve
// this model: it is misconfigured, not failing, and the key is fine. They
// are ClientError with sub-kind NotDeployed: the breaker ignores them, no
// key leaves rotation, nothing is retried there, and OtherTarget is true
// whatever the alias says about other client errors, so a ladder goes on
// to its next target.
//
// # Wait hints
//
// Verdict.Wait is taken from the first of these that is present:
// retry-after-ms and x-ms-retry-after-ms; Retry-After (seconds, fractional
// seconds or an HTTP date); Gemini's RetryInfo.retryDelay in the body;
// the reset headers (x-ratelimit-reset-requests/-tokens as Go-like
// durations, anthropic-ratelimit-*-reset as RFC 3339 times), for Throttle
// and Capacity only; and "try again in 20s" in the message. Verdict.Limits
// holds the limit, remaining and reset headers of any response, successful
// or not, for limiters that follow the provider's accounting.
//
// # Overrides
//
// An operator can remap a status or a code per target with
// Classifier.Overrides, for example counting 429 as an Outage; the retry and
// failover fields follow the new Kind. The package-level functions use a
// zero Classifier.
//
// # Errors
//
// Verdict.Err and WrapError turn a verdict into an *Error, which has the
// RetryAfter and Retryable methods the retry package looks for; FromError
// gets the Verdict back out of an error chain.
package aierr
