package gateway

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// corsPolicy lets browser apps on the configured origins call the
// gateway. A preflight is answered here, before any authentication, the
// same whatever key the browser holds; an actual request goes on as usual
// with the headers that let the page read the answer.
type corsPolicy struct {
	any     bool            // origins: ["*"]
	origins map[string]bool // the allowed origins, as browsers send them
	headers map[string]bool // extra allowed request headers, lower case
	maxAge  string          // seconds
}

// sdkHeaders are the request headers the OpenAI and Anthropic SDKs send
// from a browser, always allowed.
var sdkHeaders = []string{"authorization", "content-type", "x-api-key", "idempotency-key", "cache-control",
	"x-fusebox-session", "x-fusebox-cache", "x-request-id", "anthropic-dangerous-direct-browser-access"}

// sdkPrefixes are header prefixes the SDKs' own headers carry.
var sdkPrefixes = []string{"x-stainless-", "anthropic-", "openai-"}

// exposed are the answer headers a page may read.
const exposed = "X-Request-Id, X-Fusebox-Target, X-Fusebox-Tried, X-Fusebox-Attempts, X-Fusebox-Cost, " +
	"X-Fusebox-Cache, X-Fusebox-Overhead-Us, X-Fusebox-Hedge-Wait-Us, X-Fusebox-Degraded, Retry-After"

// newCORS returns the policy of c, nil when it allows no origin.
func newCORS(c config.CORS) *corsPolicy {
	if len(c.Origins) == 0 {
		return nil
	}
	p := &corsPolicy{origins: map[string]bool{}, headers: map[string]bool{}, maxAge: strconv.Itoa(int(c.MaxAge.Seconds()))}
	for _, o := range c.Origins {
		p.any = p.any || o == "*"
		p.origins[strings.TrimSuffix(o, "/")] = true
	}
	for _, h := range c.Headers {
		p.headers[strings.ToLower(h)] = true
	}
	return p
}

// serve handles the CORS part of a request: it answers a preflight itself
// (reporting true), and marks an actual request's answer readable by an
// allowed origin.
func (p *corsPolicy) serve(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	allowed := p.any || p.origins[origin]
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if !preflight {
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", exposed)
		}
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	method := r.Header.Get("Access-Control-Request-Method")
	if !allowed || (method != http.MethodPost && method != http.MethodGet && method != http.MethodDelete) {
		writeError(w, http.StatusForbidden, "invalid_request_error", "cors_not_allowed", "",
			"This origin or method is not allowed to call the gateway (cors in the Fusebox configuration).")
		return true
	}
	requested := r.Header.Values("Access-Control-Request-Headers")
	for _, list := range requested {
		for name := range strings.SplitSeq(list, ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" && !p.allowsHeader(name) {
				writeError(w, http.StatusForbidden, "invalid_request_error", "cors_not_allowed", "",
					"The request header "+strconv.Quote(name)+" is not allowed (cors.headers in the Fusebox configuration).")
				return true
			}
		}
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	if len(requested) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(requested, ", "))
	}
	h.Set("Access-Control-Max-Age", p.maxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}

// allowsHeader reports whether a browser may send the request header
// name (lower case).
func (p *corsPolicy) allowsHeader(name string) bool {
	if p.headers[name] || slices.Contains(sdkHeaders, name) {
		return true
	}
	for _, prefix := range sdkPrefixes {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
