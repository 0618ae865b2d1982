package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fuseboxhq/fusebox/bench/internal/proc"
)

// The floor is the least a gateway can add here: a Go reverse proxy
// (net/http/httputil) in a process of its own that passes every request to
// the upstream unread and unchanged, with streams flushed as they come. It
// has no routing, breakers, parsing or logging; what it adds over direct is
// the cost of one more HTTP hop through another process on this machine.

// serveFloorChild is the program run with -floor-child: the floor proxy in
// front of upstream, until SIGTERM or SIGINT. Its first line of output is
// "floor " and its chat completions URL.
func serveFloorChild(upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	proxy.Transport = &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// The request body is read whole before it goes on, as a gateway
	// does: handed on unread, net/http's client and server race over it
	// and about one stream in thirty breaks ("use of closed network
	// connection" on the upstream read).
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
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Println("floor http://" + ln.Addr().String() + "/v1/chat/completions")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// startFloorTarget starts the floor proxy as a child process in front of
// the upstream.
func startFloorTarget(ctx context.Context, tmp string, up *upstreamRef) (*running, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := proc.Start(proc.Command{Path: exe, Args: []string{"-floor-child", up.baseURL}, Dir: tmp, Log: filepath.Join(tmp, "floor.log")})
	if err != nil {
		return nil, err
	}
	r := &running{p: p}
	err = p.WaitReady(ctx, func(ctx context.Context) error {
		line, _, _ := strings.Cut(p.LogTail(), "\n")
		if !strings.HasPrefix(line, "floor http://") {
			return errors.New("no address yet")
		}
		r.url = strings.TrimPrefix(line, "floor ")
		return probe(ctx, target{name: "floor", url: r.url, model: "m"})
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("floor proxy: %v", err)
	}
	return r, nil
}
