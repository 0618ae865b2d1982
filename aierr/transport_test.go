package aierr

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

var errReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyError(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: "https://api.example.com/v1/chat", Err: err} }
	tests := []struct {
		name string
		err  error
		kind Kind
		sub  SubKind
		code string
	}{
		{"nil", nil, Success, NoSub, ""},
		{"canceled", urlErr(context.Canceled), Canceled, NoSub, CodeCanceled},
		{"deadline", urlErr(context.DeadlineExceeded), Outage, Timeout, CodeTimeout},
		{"first byte", fmt.Errorf("guard: %w", ErrFirstByteTimeout), Outage, FirstByteTimeout, CodeFirstByteTimeout},
		{"first byte with deadline", errors.Join(ErrFirstByteTimeout, context.DeadlineExceeded), Outage, FirstByteTimeout, CodeFirstByteTimeout},
		{"stalled", urlErr(ErrStreamStalled), Outage, StreamStalled, CodeStreamStalled},
		{"net timeout", urlErr(&net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}), Outage, Timeout, CodeTimeout},
		{"dial refused", urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), Outage, Connect, CodeConnect},
		{"dial other", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route")}, Outage, Connect, CodeConnect},
		{"dns", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.example.com", IsNotFound: true}}), Outage, Connect, CodeConnect},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, Outage, Timeout, CodeTimeout},
		{"reset", urlErr(errReset), Outage, ConnReset, CodeConnReset},
		{"broken pipe", syscall.EPIPE, Outage, ConnReset, CodeConnReset},
		{"unexpected EOF", fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), Outage, ConnReset, CodeConnReset},
		{"EOF", urlErr(io.EOF), Outage, ConnReset, CodeConnReset},
		{"unknown authority", urlErr(x509.UnknownAuthorityError{}), Outage, TLS, CodeTLS},
		{"hostname", urlErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}), Outage, TLS, CodeTLS},
		{"unknown", errors.New("something odd"), Outage, NoSub, CodeTransport},
	}
	for _, tt := range tests {
		v := ClassifyError(tt.err)
		if v.Kind != tt.kind || v.Sub != tt.sub || v.Code != tt.code {
			t.Errorf("%s: got %v/%v %q; want %v/%v %q", tt.name, v.Kind, v.Sub, v.Code, tt.kind, tt.sub, tt.code)
		}
		if tt.kind == Canceled && v.Breaker() != BreakerIgnore {
			t.Errorf("%s: a cancellation must never trip", tt.name)
		}
	}
}

func TestClassifyErrorPassesVerdictThrough(t *testing.T) {
	v := Classify(429, nil, nil)
	err := fmt.Errorf("call: %w", v.Err())
	if got := ClassifyError(err); got.Kind != Throttle {
		t.Errorf("ClassifyError of a wrapped *Error = %v; want throttle", got)
	}
}
