package h1

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkReuse measures one call on a pooled connection: a small POST to
// a local server that answers a small body. The net/http row is the same
// call through net/http's Transport, for scale.
func BenchmarkReuse(b *testing.B) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	for _, tc := range []struct {
		name string
		rt   interface {
			http.RoundTripper
			CloseIdleConnections()
		}
	}{
		{"h1", New(Settings{})},
		{"net-http", &http.Transport{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer tc.rt.CloseIdleConnections()
			call := func() {
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat", strings.NewReader(`{"model":"m"}`))
				if err != nil {
					b.Fatal(err)
				}
				resp, err := tc.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			call() // dial outside the timing
			dialed := conns.Load()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
			// Connections opened in the timed loop: 0 when every call reused one.
			b.ReportMetric(float64(conns.Load()-dialed), "dials")
		})
	}
}

// BenchmarkStale measures the look at an idle connection that get makes
// before reusing it: a MSG_PEEK of the socket, and the fallback read with
// a short deadline for connections that do not offer their socket.
func BenchmarkStale(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	u := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	for _, tc := range []struct {
		name string
		wrap func(net.Conn) net.Conn
	}{
		{"peek", func(c net.Conn) net.Conn { return c }},
		{"deadline", func(c net.Conn) net.Conn { return struct{ net.Conn }{c} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tr := New(Settings{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return tc.wrap(c), nil
			}})
			c, _, err := tr.get(context.Background(), "k", u)
			if err != nil {
				b.Fatal(err)
			}
			defer c.nc.Close()
			b.ReportAllocs()
			for b.Loop() {
				if c.stale() {
					b.Fatal("an idle connection looks stale")
				}
			}
		})
	}
}
