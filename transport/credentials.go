package transport

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// keyHeaders are the headers that carry an API key, in any provider's
// style. An endpoint with a key of its own sends only its own.
var keyHeaders = [...]string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"}

// credentialHeaders are every header of a caller's request that carries a
// secret. They go only to the origin the caller addressed: an endpoint on
// another origin gets its own key, or none.
var credentialHeaders = [...]string{
	"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key",
	"Proxy-Authorization", "Cookie",
}

// keyParam is the query parameter that carries a Google API key.
const keyParam = "key"

// sameOrigin reports whether a and b share scheme, host and port, the port
// made explicit: https://API.example and https://api.example:443 are one
// origin. Any other difference (a trailing dot, another spelling of an IP)
// counts as another origin, which only ever strips more.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOf(a) == portOf(b)
}

// portOf returns u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch {
	case strings.EqualFold(u.Scheme, "https"):
		return "443"
	case strings.EqualFold(u.Scheme, "http"):
		return "80"
	}
	return ""
}

// canonicalClone copies h with every key in canonical form, merging keys
// that differ only in case, so that one Del removes a header however the
// caller spelled it. It never returns nil.
func canonicalClone(h http.Header) http.Header {
	c := make(http.Header, len(h)+2)
	for k, vv := range h {
		ck := http.CanonicalHeaderKey(k)
		if ck == k {
			c[ck] = append(c[ck][:len(c[ck]):len(c[ck])], vv...)
		}
	}
	// Keys spelled otherwise follow the canonical one, in a fixed order,
	// so the values of one header always come in the same order.
	var odd []string
	for k := range h {
		if http.CanonicalHeaderKey(k) != k {
			odd = append(odd, k)
		}
	}
	slices.Sort(odd)
	for _, k := range odd {
		ck := http.CanonicalHeaderKey(k)
		c[ck] = append(c[ck][:len(c[ck]):len(c[ck])], h[k]...)
	}
	return c
}

// getFold returns the first value of header k in h however its key is
// spelled.
func getFold(h http.Header, k string) string {
	if v := h.Get(k); v != "" {
		return v
	}
	for hk, vv := range h {
		if len(vv) > 0 && strings.EqualFold(hk, k) {
			return vv[0]
		}
	}
	return ""
}

// withoutParam returns the raw query q without its name parameters,
// leaving the others as they were written.
func withoutParam(q, name string) string {
	if !strings.Contains(q, name) && !strings.Contains(q, "%") {
		return q
	}
	var b strings.Builder
	for rest := q; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == name || k == name {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(pair)
	}
	return b.String()
}

// scrubResponse removes from an answer of another origin what would make
// the caller's http.Client act on it as if the caller's own host had sent
// it: the client resolves a redirect against the caller's URL and resends
// the caller's headers (net/http strips Authorization and Cookie on a
// cross-host redirect, not X-Api-Key or Api-Key), and it stores cookies
// under the caller's URL.
func scrubResponse(resp *http.Response) {
	resp.Header.Del("Set-Cookie")
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		resp.Header.Del("Location")
	}
}
