package aierr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
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
	v := Verdict{Kind: kind, Sub: sub, Code: code, Limits: unknownLimits}
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
	case errors.Is(err, context.DeadlineExceeded):
		return Outage, Timeout, CodeTimeout
	case isTLSError(err):
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
