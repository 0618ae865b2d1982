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
		{name: "rate_limit_exceeded", kind: Throttle},                   // OpenAI, Azure, Groq; Gemini reason
		{name: "rate_limit_error", kind: Throttle},                      // Anthropic
		{name: "RESOURCE_EXHAUSTED", kind: Throttle},                    // Gemini (PerDay → Quota)
		{name: "too_many_requests", kind: Throttle},                     // various
		{name: "ThrottlingException", kind: Throttle},                   // Bedrock
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
		{name: "NOT_FOUND", kind: ClientError, sub: NotFound, generic: true},
		{name: "invalid_request_error", kind: ClientError, generic: true}, // OpenAI, Anthropic
		{name: "INVALID_ARGUMENT", kind: ClientError, generic: true},      // Gemini
		{name: "FAILED_PRECONDITION", kind: ClientError, generic: true},   // Gemini
		{name: "BadRequestError", kind: ClientError, generic: true},       // vLLM
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
