package aierr

// codeInfo is what a provider's error code or type means.
type codeInfo struct {
	name string // the code as the provider spells it; becomes Verdict.Code
	kind Kind
	sub  SubKind
	// generic codes (invalid_request_error, api_error, …) say less than the
	// HTTP status: they decide only when there is no status (stream errors,
	// job records) and otherwise just name the verdict.
	generic bool
}

// codeTable maps lower-cased codes, types and statuses from every provider's
// error bodies to their meaning. It is built once and only read.
var codeTable = func() map[string]codeInfo {
	entries := []codeInfo{
		// Throttle.
		{name: "rate_limit_exceeded", kind: Throttle}, // OpenAI, Azure, Groq; Gemini reason
		{name: "rate_limit_error", kind: Throttle},    // Anthropic
		{name: "RESOURCE_EXHAUSTED", kind: Throttle},  // Gemini (PerDay → Quota)
		{name: "too_many_requests", kind: Throttle},   // various
		{name: "ThrottlingException", kind: Throttle}, // Bedrock 429 (per-day message → Quota)
		// Bedrock: "Your request exceeds the service quota for your account
		// … You can resubmit your request later." Bedrock's quotas are per
		// model and region, so this is that target's rate wall, not the
		// credential's standing: a throttle, whatever the status (400).
		{name: "ServiceQuotaExceededException", kind: Throttle},
		{name: "requests", kind: Throttle, generic: true},               // OpenAI 429 type
		{name: "tokens", kind: Throttle, generic: true},                 // OpenAI 429 type
		{name: "rate_limit", kind: Throttle, generic: true},             // various
		{name: "insufficient_quota", kind: Quota, sub: Billing},         // OpenAI
		{name: "billing_hard_limit_reached", kind: Quota, sub: Billing}, // OpenAI
		{name: "billing_not_active", kind: Quota, sub: Billing},         // OpenAI
		{name: "insufficient_balance", kind: Quota, sub: Billing},       // DeepSeek and others
		{name: "insufficient_credits", kind: Quota, sub: Billing},       // OpenRouter and others
		{name: "payment_required", kind: Quota, sub: Billing},           // various
		{name: "quota_exceeded", kind: Quota},                           // various
		{name: "BILLING_DISABLED", kind: Quota, sub: Billing},           // Google ErrorInfo reason (on a 403)
		// Capacity.
		{name: "queue_full", kind: Capacity},                 // job APIs
		{name: "provider_capacity_exceeded", kind: Capacity}, // job APIs
		{name: "capacity_exceeded", kind: Capacity},          // various
		{name: "insufficient_capacity", kind: Capacity},      // various
		// Outage.
		{name: "overloaded_error", kind: Outage, sub: Overloaded},  // Anthropic 529
		{name: "overloaded", kind: Outage, sub: Overloaded},        // various
		{name: "engine_overloaded", kind: Outage, sub: Overloaded}, // OpenAI (older)
		{name: "UNAVAILABLE", kind: Outage},                        // Gemini 503
		{name: "service_unavailable", kind: Outage},                // various
		{name: "runtime_unavailable", kind: Outage},                // job APIs
		{name: "DEADLINE_EXCEEDED", kind: Outage, sub: Timeout},    // Gemini 504
		{name: "timeout", kind: Outage, sub: Timeout},              // various
		{name: "server_error", kind: Outage, generic: true},        // OpenAI
		{name: "api_error", kind: Outage, generic: true},           // Anthropic
		{name: "internal_error", kind: Outage, generic: true},      // various
		{name: "internal_server_error", kind: Outage, generic: true},
		{name: "INTERNAL", kind: Outage, generic: true}, // Gemini 500
		{name: "UNKNOWN", kind: Outage, generic: true},  // Gemini
		// Bedrock and AWS. Specific codes beat a status that says otherwise
		// (ModelNotReadyException is a 429, ModelErrorException a 424).
		{name: "ServiceUnavailableException", kind: Outage},            // Bedrock 503
		{name: "ServiceUnavailable", kind: Outage},                     // AWS common 503, Azure 503
		{name: "InternalServerException", kind: Outage, generic: true}, // Bedrock 500, in-stream
		{name: "InternalFailure", kind: Outage, generic: true},         // AWS common 500
		{name: "InternalServerError", kind: Outage, generic: true},     // Azure 500
		{name: "ModelNotReadyException", kind: Outage, sub: NotReady},  // Bedrock 429: the model cannot serve yet
		{name: "ModelTimeoutException", kind: Outage, sub: Timeout},    // Bedrock 408
		{name: "ModelErrorException", kind: Outage},                    // Bedrock 424: the model failed
		{name: "ModelStreamErrorException", kind: Outage},              // Bedrock 424, in-stream
		// Auth.
		{name: "authentication_error", kind: Auth, sub: Unauthenticated}, // Anthropic
		{name: "invalid_api_key", kind: Auth, sub: Unauthenticated},      // OpenAI
		{name: "invalid_authentication", kind: Auth, sub: Unauthenticated},
		{name: "UNAUTHENTICATED", kind: Auth, sub: Unauthenticated},                       // Gemini
		{name: "API_KEY_INVALID", kind: Auth, sub: Unauthenticated},                       // Gemini reason (on a 400)
		{name: "account_deactivated", kind: Auth, sub: Unauthenticated},                   // OpenAI
		{name: "unauthorized", kind: Auth, sub: Unauthenticated},                          // various
		{name: "permission_error", kind: Auth, sub: PermissionDenied},                     // Anthropic
		{name: "PERMISSION_DENIED", kind: Auth, sub: PermissionDenied},                    // Gemini
		{name: "forbidden", kind: Auth, sub: PermissionDenied},                            // various
		{name: "unsupported_country_region_territory", kind: Auth, sub: PermissionDenied}, // OpenAI
		{name: "access_terminated", kind: Auth, sub: PermissionDenied},                    // OpenAI
		{name: "AccessDeniedException", kind: Auth, sub: PermissionDenied},                // Bedrock 403 (IAM)
		{name: "NotAuthorized", kind: Auth, sub: PermissionDenied},                        // AWS common 400
		{name: "UnrecognizedClientException", kind: Auth, sub: Unauthenticated},           // AWS 403: unknown access key
		{name: "InvalidClientTokenId", kind: Auth, sub: Unauthenticated},                  // AWS common 403
		{name: "InvalidSignatureException", kind: Auth, sub: Unauthenticated},             // AWS 403
		{name: "SignatureDoesNotMatch", kind: Auth, sub: Unauthenticated},                 // AWS common 403
		{name: "IncompleteSignature", kind: Auth, sub: Unauthenticated},                   // AWS common 400
		{name: "IncompleteSignatureException", kind: Auth, sub: Unauthenticated},          // AWS JSON protocols
		{name: "MissingAuthenticationToken", kind: Auth, sub: Unauthenticated},            // AWS common 403
		{name: "MissingAuthenticationTokenException", kind: Auth, sub: Unauthenticated},   // AWS JSON protocols
		{name: "ExpiredTokenException", kind: Auth, sub: Unauthenticated},                 // AWS 403: session token expired
		{name: "RequestExpired", kind: Auth, sub: Unauthenticated},                        // AWS common 400: signed too long ago
		{name: "SERVICE_DISABLED", kind: Auth, sub: PermissionDenied},                     // Google ErrorInfo reason
		{name: "CONSUMER_SUSPENDED", kind: Auth, sub: PermissionDenied},                   // Google ErrorInfo reason
		{name: "IAM_PERMISSION_DENIED", kind: Auth, sub: PermissionDenied},                // Google ErrorInfo reason
		{name: "ACCESS_TOKEN_SCOPE_INSUFFICIENT", kind: Auth, sub: PermissionDenied},      // Google ErrorInfo reason
		{name: "ACCESS_TOKEN_EXPIRED", kind: Auth, sub: Unauthenticated},                  // Google ErrorInfo reason
		{name: "CREDENTIALS_MISSING", kind: Auth, sub: Unauthenticated},                   // Google ErrorInfo reason
		// Client errors.
		{name: "context_length_exceeded", kind: ClientError, sub: ContextLength},      // OpenAI, Azure
		{name: "content_filter", kind: ClientError, sub: ContentFilter},               // Azure, OpenAI
		{name: "ResponsibleAIPolicyViolation", kind: ClientError, sub: ContentFilter}, // Azure innererror
		{name: "content_policy_violation", kind: ClientError, sub: ContentFilter},     // OpenAI images
		{name: "invalid_prompt", kind: ClientError, sub: ContentFilter},               // OpenAI flagged prompt
		{name: "request_too_large", kind: ClientError, sub: RequestTooLarge},          // Anthropic 413
		{name: "payload_too_large", kind: ClientError, sub: RequestTooLarge},
		{name: "not_found_error", kind: ClientError, sub: NotFound}, // Anthropic
		{name: "model_not_found", kind: ClientError, sub: NotFound}, // OpenAI
		// The model is not there on that target: the ladder goes on.
		{name: "ResourceNotFoundException", kind: ClientError, sub: NotDeployed}, // Bedrock 404: not enabled, wrong region, end of life
		{name: "FTUFormNotFilled", kind: ClientError, sub: NotDeployed},          // Bedrock 404: model use case form not submitted
		{name: "MPAgreementBeingCreated", kind: ClientError, sub: NotDeployed},   // Bedrock 403: Marketplace subscription pending
		{name: "DeploymentNotFound", kind: ClientError, sub: NotDeployed},        // Azure OpenAI 404
		{name: "NOT_FOUND", kind: ClientError, sub: NotFound, generic: true},
		{name: "invalid_request_error", kind: ClientError, generic: true}, // OpenAI, Anthropic
		{name: "INVALID_ARGUMENT", kind: ClientError, generic: true},      // Gemini
		{name: "FAILED_PRECONDITION", kind: ClientError, generic: true},   // Gemini
		{name: "BadRequestError", kind: ClientError, generic: true},       // vLLM
		{name: "ValidationException", kind: ClientError, generic: true},   // Bedrock 400 (messages refine: context length, …)
		{name: "bad_request", kind: ClientError, generic: true},
		{name: "CANCELLED", kind: Canceled, generic: true}, // Gemini
	}
	m := make(map[string]codeInfo, len(entries))
	for _, e := range entries {
		m[string(lowerBytes(nil, e.name))] = e
	}
	return m
}()

// lookupCode returns what a code means, ignoring ASCII case.
func lookupCode(code []byte) (codeInfo, bool) {
	if len(code) == 0 || len(code) > MaxCodeLen {
		return codeInfo{}, false
	}
	var buf [MaxCodeLen]byte
	ci, ok := codeTable[string(lowerBytes(buf[:0], code))]
	return ci, ok
}

func lowerBytes[S ~string | ~[]byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, lower(s[i]))
	}
	return dst
}
