package config

import "strings"

// NeverForwarded reports whether a client header (canonical name) is one
// that no configuration passes to an upstream: the client's credentials
// (the upstream gets the provider's key), the connection's own headers,
// and the gateway's.
func NeverForwarded(name string) bool {
	switch name {
	case "Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie",
		"Host", "Content-Length", "Content-Type", "Accept", "Accept-Encoding", "Connection",
		"Transfer-Encoding", "Te", "Trailer", "Upgrade", "Keep-Alive", "Idempotency-Key":
		return true
	}
	return strings.HasPrefix(name, "X-Fusebox-")
}
