package aierr

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// garbage returns the address of a server that answers every connection
// with bytes that are neither TLS nor HTTP.
func garbage(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("\x00\x01\x02\x03\x04\x05\x06\x07 not a handshake"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// get makes one request with tr and returns its error.
func get(t *testing.T, tr *http.Transport, target string) error {
	t.Helper()
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET %s succeeded; want a failed connection", target)
	}
	return err
}

// The errors net/http really returns when a connection cannot be made are
// each named by their cause, so a failed connect says which of DNS, the
// address, TLS or the proxy is to blame.
func TestConnectCauseOfRealErrors(t *testing.T) {
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server here")
	}}
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	proxyTo := func(u string) func(*http.Request) (*url.URL, error) {
		p, _ := url.Parse(u)
		return http.ProxyURL(p)
	}

	tests := []struct {
		name   string
		tr     *http.Transport
		target string
		sub    SubKind
		cause  string
	}{
		{"dns", &http.Transport{DialContext: (&net.Dialer{Resolver: noDNS}).DialContext}, "http://api.example.invalid/v1", Connect, CauseDNS},
		{"refused", &http.Transport{}, "http://" + closedAddr(t) + "/v1", Connect, CauseRefused},
		{"certificate", &http.Transport{}, tlsSrv.URL, TLS, CauseCertificate},
		{"handshake", &http.Transport{}, strings.Replace(plain.URL, "http:", "https:", 1), TLS, CauseHandshake},
		{"proxy down", &http.Transport{Proxy: proxyTo("http://" + closedAddr(t))}, "https://api.example.com/v1", Connect, CauseProxy},
		{"garbage instead of TLS", &http.Transport{}, "https://" + garbage(t) + "/v1", TLS, CauseHandshake},
	}
	for _, tt := range tests {
		err := get(t, tt.tr, tt.target)
		v := ClassifyError(err)
		if v.Kind != Outage || v.Sub != tt.sub || v.Cause != tt.cause {
			t.Errorf("%s: %v classifies as %v/%v cause %q; want outage/%v cause %q", tt.name, err, v.Kind, v.Sub, v.Cause, tt.sub, tt.cause)
		}
		if want := v.Code + ": " + tt.cause; v.Detail() != want {
			t.Errorf("%s: Detail() = %q; want %q", tt.name, v.Detail(), want)
		}
	}
}

func TestConnectCauseOfKnownShapes(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://h/v1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	tests := []struct {
		name  string
		err   error
		cause string
	}{
		{"dial timeout", dial(timeoutErr{}), CauseConnectTimeout},
		{"host unreachable", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), CauseUnreachable},
		{"network unreachable", dial(os.NewSyscallError("connect", syscall.ENETUNREACH)), CauseUnreachable},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, ""},
		{"reset", errReset, ""},
		{"unknown dial failure", dial(errors.New("no route")), ""},
		{"not a transport error", errors.New("something odd"), ""},
	}
	for _, tt := range tests {
		if v := ClassifyError(tt.err); v.Cause != tt.cause {
			t.Errorf("%s: cause %q; want %q", tt.name, v.Cause, tt.cause)
		}
	}
	if v := Classify(503, nil, nil); v.Cause != "" || v.Detail() != v.Code {
		t.Errorf("an answer has cause %q, detail %q; want none", v.Cause, v.Detail())
	}
}
