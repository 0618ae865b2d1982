package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	_ "net/http/pprof" // on http.DefaultServeMux, served on floorPprofEnv's address
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// The floor is the least a gateway can cost here: net/http/httputil's
// ReverseProxy in a process of its own, passing every request to the
// upstream unchanged and flushing each write of a stream at once
// (FlushInterval -1). It has no routing, parsing, breakers or logging.

// The environment of a floor child: this program, started with floorEnv
// set, serves the floor instead of running the bench.
const (
	floorEnv      = "BENCH_STREAMS_FLOOR"       // the upstream's base URL
	floorPprofEnv = "BENCH_STREAMS_FLOOR_PPROF" // where to serve /debug/pprof/
)

// serveFloorChild serves the floor in front of upstream until SIGTERM or
// SIGINT, and net/http/pprof on pprofAddr. Its first line of output is
// "floor " and the address it listens on.
func serveFloorChild(upstream, pprofAddr string) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	// As many idle connections per host as Fusebox's own transport keeps
	// (internal/h1: 256); net/http's default, 2, would redial all the time.
	proxy.Transport = &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true, ForceAttemptHTTP2: false}
	// The request body is read whole before it goes on, as a gateway's
	// is: handed on unread, net/http's client and server race over it
	// (see bench/gatewayload/floor.go).
	handler := http.StripPrefix("/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	pln, err := net.Listen("tcp", pprofAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	go http.Serve(pln, nil)
	fmt.Println("floor " + ln.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
