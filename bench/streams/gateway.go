package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/buildtree"
	"github.com/fuseboxhq/fusebox/bench/internal/proc"
)

// gateway is one target of a cell: a gateway in a process of its own in
// front of the upstream, or the upstream itself (direct).
type gateway struct {
	name   string
	addr   string        // host:port the load connects to
	model  string        // the model the load asks for
	p      *proc.Process // nil for direct
	gauges gaugeSource
}

func (g *gateway) pid() int {
	if g.p == nil {
		return 0
	}
	return g.p.PID()
}

func (g *gateway) stop() {
	if g.p != nil {
		g.p.Stop()
	}
}

// starter starts a fresh gateway of one kind for a cell, so that every
// cell's memory starts from the same idle process.
type starter struct {
	name  string
	start func(ctx context.Context) (*gateway, error)
}

// env is what the starters share.
type env struct {
	tmp     string
	up      *upstreamRef // the current cell's
	spec    streamSpec
	fusebox string // the fusebox binary
	self    string // this program, run with floorEnv set for the floor
	client  *http.Client
}

func (e *env) starter(name string) (starter, error) {
	switch name {
	case "fusebox":
		return starter{name, e.startFusebox}, nil
	case "floor":
		return starter{name, e.startFloor}, nil
	case "direct":
		return starter{name, func(context.Context) (*gateway, error) {
			return &gateway{name: "direct", addr: e.up.addr, model: "m"}, nil
		}}, nil
	}
	return starter{}, fmt.Errorf("unknown target %q (want fusebox, floor or direct)", name)
}

// fuseboxConfig is the gateway's configuration: one provider, the slow
// upstream, behind the alias "fast", and the alias "probe" for the
// readiness check; everything else default.
func fuseboxConfig(port int, upstreamURL string) string {
	return "listen: 127.0.0.1:" + strconv.Itoa(port) + "\n" +
		"providers:\n" +
		"  up: {type: openai, base_url: \"" + upstreamURL + "\", keys: [k]}\n" +
		"models:\n" +
		"  - name: fast\n" +
		"    targets: [{provider: up, model: m, price: {input: 1, output: 1}}]\n" +
		"  - name: " + probeModel + "\n" +
		"    targets: [{provider: up, model: " + probeModel + "}]\n"
}

// startFusebox runs fusebox serve with a fresh configuration. It asks a
// binary built with buildtree's pprof overlay to serve /debug/pprof/ on a
// port of its own; one without serves nothing there, and the gauges come
// from /metrics instead.
func (e *env) startFusebox(ctx context.Context) (*gateway, error) {
	port, err1 := proc.FreePort()
	pport, err2 := proc.FreePort()
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	cfg := filepath.Join(e.tmp, "fusebox.yaml")
	if err := os.WriteFile(cfg, []byte(fuseboxConfig(port, e.up.baseURL())), 0o600); err != nil {
		return nil, err
	}
	pprofAddr := "127.0.0.1:" + strconv.Itoa(pport)
	p, err := proc.Start(proc.Command{Path: e.fusebox, Args: []string{"serve", "--config", cfg}, Dir: e.tmp,
		Env: []string{buildtree.PprofEnv + "=" + pprofAddr}, Log: filepath.Join(e.tmp, "fusebox.log")})
	if err != nil {
		return nil, fmt.Errorf("fusebox: %v", err)
	}
	g := &gateway{name: "fusebox", addr: "127.0.0.1:" + strconv.Itoa(port), model: "fast", p: p}
	if err := p.WaitReady(ctx, func(ctx context.Context) error { return probe(ctx, g.addr, e.spec) }); err != nil {
		p.Stop()
		return nil, fmt.Errorf("fusebox: %v", err)
	}
	g.gauges = gaugeSource{metrics: "http://" + g.addr + "/metrics", client: e.client}
	if pprofReady(ctx, e.client, "http://"+pprofAddr+"/debug/pprof/") == nil {
		g.gauges.pprof = "http://" + pprofAddr + "/debug/pprof/"
	}
	return g, nil
}

// startFloor runs this program as the floor proxy.
func (e *env) startFloor(ctx context.Context) (*gateway, error) {
	pport, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	pprofAddr := "127.0.0.1:" + strconv.Itoa(pport)
	p, err := proc.Start(proc.Command{Path: e.self, Dir: e.tmp, Log: filepath.Join(e.tmp, "floor.log"),
		Env: []string{floorEnv + "=" + e.up.baseURL(), floorPprofEnv + "=" + pprofAddr}})
	if err != nil {
		return nil, fmt.Errorf("floor: %v", err)
	}
	g := &gateway{name: "floor", model: "m", p: p}
	err = p.WaitReady(ctx, func(ctx context.Context) error {
		line, _, _ := strings.Cut(p.LogTail(), "\n")
		addr, ok := strings.CutPrefix(line, "floor ")
		if !ok {
			return errors.New("no address yet")
		}
		g.addr = addr
		if err := probe(ctx, g.addr, e.spec); err != nil {
			return err
		}
		return pprofReady(ctx, e.client, "http://"+pprofAddr+"/debug/pprof/")
	})
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("floor: %v", err)
	}
	g.gauges = gaugeSource{pprof: "http://" + pprofAddr + "/debug/pprof/", client: e.client}
	return g, nil
}

// probe sends one stream of the probe model, which the upstream sends
// without delays, through addr and checks it.
func probe(ctx context.Context, addr string, spec streamSpec) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l := &load{addr: addr, req: httpRequest(addr, chatRequest(probeModel, 0)), spec: spec, began: time.Now()}
	w := newWorker(l)
	defer w.close()
	r := w.stream(ctx)
	return r.err
}
