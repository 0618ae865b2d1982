package aierr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"unicode/utf8"
)

// ErrFirstByteTimeout is the error a stream guard returns when a target sent
// nothing within its time-to-first-byte (or first-token) budget. It
// classifies as Outage with sub-kind FirstByteTimeout.
var ErrFirstByteTimeout = errors.New("aierr: no first byte within budget")

// ErrStreamStalled is the error a stream guard returns when a stream went
// silent between chunks past its idle budget. It classifies as Outage with
// sub-kind StreamStalled.
var ErrStreamStalled = errors.New("aierr: stream stalled")

// Codes given to transport verdicts (Verdict.Code), which Overrides.Code can
// match.
const (
	CodeCanceled         = "canceled"
	CodeTimeout          = "timeout"
	CodeFirstByteTimeout = "first_byte_timeout"
	CodeStreamStalled    = "stream_stalled"
	CodeConnect          = "connect"
	CodeConnReset        = "conn_reset"
	CodeTLS              = "tls"
	CodeTransport        = "transport"
)

// Causes of a connection that could not be made (Verdict.Cause).
const (
	// CauseDNS: the host name did not resolve.
	CauseDNS = "dns"
	// CauseRefused: nothing listens at the address (connection refused).
	CauseRefused = "refused"
	// CauseUnreachable: no route to the host or its network.
	CauseUnreachable = "unreachable"
	// CauseConnectTimeout: the connection was not made in time.
	CauseConnectTimeout = "connect_timeout"
	// CauseCertificate: the server's certificate was refused (unknown
	// authority, wrong host name, expired).
	CauseCertificate = "certificate"
	// CauseHandshake: the TLS handshake failed (an alert, a server that
	// does not speak TLS).
	CauseHandshake = "handshake"
	// CauseProxy: the HTTP proxy could not be reached or refused the
	// tunnel (HTTPS_PROXY, Transport.Proxy).
	CauseProxy = "proxy"
)

// ClassifyError classifies a transport error with a zero Classifier. See
// Classifier.ClassifyError.
func ClassifyError(err error) Verdict {
	var c Classifier
	return c.ClassifyError(err)
}

// ClassifyError classifies an error from making the call rather than an
// answer: nil is Success; an *Error gives back its Verdict; the caller's own
// context.Canceled is Canceled (never trips, never retried);
// ErrFirstByteTimeout, ErrStreamStalled, context.DeadlineExceeded, network
// timeouts, refused or reset connections, DNS failures, an unexpected EOF
// and TLS failures are Outage. Any other error is an Outage too: it came
// from talking to the target, and treating the unknown as healthy would hide
// outages. (Certificate errors, x509 unknown authority or wrong host name,
// are usually our configuration rather than the provider, but the target
// is unusable all the same; Sub is TLS so that operators can tell.)
func (c *Classifier) ClassifyError(err error) Verdict {
	if err == nil {
		return successVerdict(0)
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Verdict
	}
	kind, sub, code := transportKind(err)
	v := Verdict{Kind: kind, Sub: sub, Code: code, Cause: connectCause(err), Limits: unknownLimits}
	msg := err.Error()
	if len(msg) > MaxMessageLen+utf8.UTFMax {
		msg = msg[:MaxMessageLen+utf8.UTFMax]
	}
	v.Message = trimmedString([]byte(msg), MaxMessageLen)
	c.override(&v, nil)
	v.policy()
	return v
}

// transportKind sorts a transport error. Order matters: the stream guards'
// sentinels and cancellation are checked before the generic timeouts that
// may wrap them.
func transportKind(err error) (Kind, SubKind, string) {
	switch {
	case errors.Is(err, ErrFirstByteTimeout):
		return Outage, FirstByteTimeout, CodeFirstByteTimeout
	case errors.Is(err, ErrStreamStalled):
		return Outage, StreamStalled, CodeStreamStalled
	case errors.Is(err, context.Canceled):
		return Canceled, NoSub, CodeCanceled
	case isProxyError(err):
		return Outage, Connect, CodeConnect
	case errors.Is(err, context.DeadlineExceeded):
		return Outage, Timeout, CodeTimeout
	case isTLSError(err), errors.Is(err, http.ErrSchemeMismatch):
		return Outage, TLS, CodeTLS
	case isTimeout(err):
		return Outage, Timeout, CodeTimeout
	case isConnectError(err):
		return Outage, Connect, CodeConnect
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return Outage, ConnReset, CodeConnReset
	}
	return Outage, NoSub, CodeTransport
}

// isTLSError reports a failed TLS handshake or certificate check.
func isTLSError(err error) bool {
	var (
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		certErr  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		verErr   *tls.CertificateVerificationError
	)
	return errors.As(err, &authErr) || errors.As(err, &hostErr) || errors.As(err, &certErr) ||
		errors.As(err, &recErr) || errors.As(err, &alertErr) || errors.As(err, &verErr)
}

// isTimeout reports a net.Error whose Timeout() is true (url.Error and
// net.OpError pass it through).
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// isConnectError reports a connection that could not be made: refused, a
// DNS failure, or any error of a dial.
func isConnectError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// isProxyError reports a failure to reach an HTTP proxy or to open a
// tunnel through it: net/http wraps every error of a proxied dial, the
// the proxy's address and its TLS, in a "proxyconnect" OpError. (A proxy
// that answers CONNECT with an error status is reported by net/http as
// an untyped error carrying the status text, which stays CodeTransport.)
func isProxyError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "proxyconnect"
}

// connectCause names what failed while a connection was being made, or
// "" when err is not such a failure (or its cause is not known). The proxy
// is checked first: a refused or timed-out proxy is the proxy's fault, not
// the target's.
func connectCause(err error) string {
	var (
		dnsErr *net.DNSError
		opErr  *net.OpError
	)
	switch {
	case isProxyError(err):
		return CauseProxy
	case errors.As(err, &dnsErr):
		return CauseDNS
	case errors.Is(err, http.ErrSchemeMismatch):
		return CauseHandshake // a plain HTTP server at an https:// URL
	case isTLSError(err):
		if isCertificateError(err) {
			return CauseCertificate
		}
		return CauseHandshake
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return CauseUnreachable
	case errors.As(err, &opErr) && opErr.Op == "dial" && isTimeout(err):
		return CauseConnectTimeout
	}
	return ""
}

// isCertificateError reports a certificate the client refused, as opposed
// to a handshake that failed before one was checked.
func isCertificateError(err error) bool {
	var (
		authErr x509.UnknownAuthorityError
		hostErr x509.HostnameError
		certErr x509.CertificateInvalidError
		verErr  *tls.CertificateVerificationError
	)
	return errors.As(err, &authErr) || errors.As(err, &hostErr) || errors.As(err, &certErr) || errors.As(err, &verErr)
}
