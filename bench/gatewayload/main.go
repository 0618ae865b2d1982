// Command gatewayload measures what a gateway adds to chat-completion
// requests: it starts a fast local upstream, the fusebox binary (built from
// this repository) and, when it can, the Portkey gateway, then sends the
// same requests to the upstream directly and through each gateway, at
// several concurrencies, non-streamed and streamed. It prints a Markdown
// table and can write the results as JSON.
//
// Run it from bench/:
//
//	go run ./gatewayload -install-portkey   # once, needs Node.js and npm
//	go run ./gatewayload -json /tmp/gatewayload.json
//
// Everything runs on loopback on one machine, so the load generator, the
// upstream and the gateway share its cores; compare figures from the same
// run only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/buildtree"
	"github.com/fuseboxhq/fusebox/bench/internal/proc"
	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

// portkeyFlag is -portkey: unset means "when Node.js and the package are
// there", -portkey means "required", -portkey=false means "never".
type portkeyFlag struct{ mode string }

func (f *portkeyFlag) String() string { return f.mode }

func (f *portkeyFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	f.mode = map[bool]string{true: "on", false: "off"}[b]
	return nil
}

func (f *portkeyFlag) IsBoolFlag() bool { return true }

type options struct {
	state            string
	budget           bool
	duration, warmup time.Duration
	requests         int
	concurrency      []int
	modes            []string
	fuseboxBin       string
	portkey          portkeyFlag
	installPortkey   bool
	portkeyDir       string
	jsonPath         string
	upstream         string
	upstreamChild    bool
	floor            bool
	floorChild       string
}

func main() {
	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "gatewayload: "+format+"\n", a...) }
	o, err := parseFlags()
	if err != nil {
		log("%v", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case o.upstreamChild:
		err = serveUpstreamChild()
	case o.floorChild != "":
		err = serveFloorChild(o.floorChild)
	default:
		err = run(ctx, o, log)
	}
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}
}

func parseFlags() (options, error) {
	o := options{portkey: portkeyFlag{mode: "auto"}}
	var conc, modes string
	flag.DurationVar(&o.duration, "duration", 4*time.Second, "measured time per cell (target × concurrency × mode)")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up time per cell, not measured")
	flag.IntVar(&o.requests, "requests", 0, "measured requests per cell instead of -duration (0: use -duration)")
	flag.StringVar(&conc, "concurrency", "1,50", "comma-separated concurrencies (requests in flight)")
	flag.StringVar(&modes, "modes", "json,stream", "comma-separated modes: json (non-streamed), stream")
	flag.StringVar(&o.fuseboxBin, "fusebox", "", "fusebox binary to run (default: go build ./cmd/fusebox from the repository)")
	flag.Var(&o.portkey, "portkey", "measure the Portkey gateway: -portkey requires it, -portkey=false skips it; default: when Node.js and the package are installed")
	flag.BoolVar(&o.installPortkey, "install-portkey", false, "npm install the Portkey gateway into -portkey-dir first")
	flag.StringVar(&o.portkeyDir, "portkey-dir", "", "where Portkey is installed (default: bench/.portkey)")
	flag.StringVar(&o.jsonPath, "json", "", "also write the results to this JSON file")
	flag.StringVar(&o.upstream, "upstream", "inproc", "where the fast upstream runs: inproc (in this process) or process (a child process of its own)")
	flag.BoolVar(&o.upstreamChild, "upstream-child", false, "run only the upstream (used by -upstream process)")
	flag.StringVar(&o.state, "state", "memory", "the gateway's state: memory, or a Redis URL (redis://127.0.0.1:6379/0) to share it as a fleet does")
	flag.BoolVar(&o.budget, "budget", false, "the load's client key has a USD budget, so every request reserves and settles it")
	flag.BoolVar(&o.floor, "floor", true, "also measure the floor: a bare Go reverse proxy (net/http/httputil) in a process of its own")
	flag.StringVar(&o.floorChild, "floor-child", "", "run only the floor proxy in front of this upstream base URL (used by -floor)")
	flag.Parse()
	setFuseboxExtra(o.state, o.budget)
	if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-concurrency: %q is not a positive number", s)
		}
		o.concurrency = append(o.concurrency, n)
	}
	for _, s := range strings.Split(modes, ",") {
		s = strings.TrimSpace(s)
		if s != "json" && s != "stream" {
			return o, fmt.Errorf("-modes: %q is not json or stream", s)
		}
		o.modes = append(o.modes, s)
	}
	if o.upstream != "inproc" && o.upstream != "process" {
		return o, fmt.Errorf("-upstream: %q is not inproc or process", o.upstream)
	}
	if o.duration <= 0 && o.requests <= 0 {
		return o, errors.New("-duration or -requests must be positive")
	}
	return o, nil
}

// Report is the JSON output.
type Report struct {
	Started     time.Time `json:"started"`
	CPUs        int       `json:"cpus"`
	GOMAXPROCS  int       `json:"gomaxprocs"`
	GoVersion   string    `json:"go_version"`
	NodeVersion string    `json:"node_version,omitempty"`
	LoadBefore  string    `json:"load_average_before"`
	LoadAfter   string    `json:"load_average_after"`
	Upstream    string    `json:"upstream"` // inproc or process
	Warmup      string    `json:"warmup_per_cell"`
	Duration    string    `json:"duration_per_cell,omitempty"`
	RequestsPer int       `json:"requests_per_cell,omitempty"`
	Portkey     string    `json:"portkey"` // the version measured, or why not
	Results     []Result  `json:"results"`
	Checks      []Check   `json:"checks"`
}

func run(ctx context.Context, o options, log func(string, ...any)) error {
	benchDir, err := buildtree.BenchDir()
	if err != nil {
		return err
	}
	if o.portkeyDir == "" {
		o.portkeyDir = filepath.Join(benchDir, ".portkey")
	}
	tmp, err := os.MkdirTemp("", "gatewayload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var up *upstreamRef
	if o.upstream == "process" {
		up, err = childProcess(tmp)
	} else {
		up, err = inProcess()
	}
	if err != nil {
		return err
	}
	defer up.stop()
	auth := http.Header{"Authorization": {"Bearer k"}}
	targets := []target{{name: "direct", url: up.baseURL + "/chat/completions", model: "m", header: auth, conns: up.conns}}

	fb, err := startFuseboxTarget(ctx, o, benchDir, tmp, up, log)
	if err != nil {
		return err
	}
	defer fb.stop()
	targets = append(targets, target{name: "fusebox", url: fb.url, model: "fast", header: auth, pid: fb.p.PID(), conns: up.conns})
	if o.floor {
		fl, err := startFloorTarget(ctx, tmp, up)
		if err != nil {
			return err
		}
		defer fl.stop()
		targets = append(targets, target{name: "floor", url: fl.url, model: "m", header: auth, pid: fl.p.PID(), conns: up.conns})
	}

	rep := Report{Started: time.Now().UTC(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), Warmup: o.warmup.String(), Upstream: o.upstream}
	if o.requests > 0 {
		rep.RequestsPer = o.requests
	} else {
		rep.Duration = o.duration.String()
	}
	pk, why, err := startPortkeyTarget(ctx, o, tmp, up, log)
	if err != nil {
		return err
	}
	if pk != nil {
		defer pk.stop()
		rep.NodeVersion = nodeVersion()
		rep.Portkey = portkeyPackage + "@" + installedVersion(o.portkeyDir, portkeyPackage) +
			" (@hono/node-server " + installedVersion(o.portkeyDir, "@hono/node-server") + ")"
		targets = append(targets, target{name: "portkey", url: pk.url, model: "m", pid: pk.p.PID(), conns: up.conns,
			header: http.Header{"Authorization": {"Bearer k"}, "X-Portkey-Provider": {"openai"},
				"X-Portkey-Custom-Host": {up.baseURL}}})
	} else {
		rep.Portkey = "not measured: " + why
		log("Portkey not measured: %s", why)
	}

	rep.LoadBefore = proc.LoadAverage()
	log("load average before: %s", rep.LoadBefore)
	for _, mode := range o.modes {
		for _, conc := range o.concurrency {
			spec := cellSpec{stream: mode == "stream", conc: conc, warmup: o.warmup, duration: o.duration, requests: o.requests}
			for _, t := range targets {
				r, err := runCell(ctx, t, spec)
				if err != nil {
					return err
				}
				log("%-6s c=%-3d %-8s %8.0f req/s  p50 %s  p99 %s  errors %d  upstream conns %d", mode, conc, t.name, r.RPS,
					stats.FmtUS(r.P50), stats.FmtUS(r.P99), r.Errors, r.UpstreamConns)
				rep.Results = append(rep.Results, r)
			}
		}
	}
	rep.LoadAfter = proc.LoadAverage()
	addDeltas(rep.Results)
	rep.Checks = checks(rep.Results)

	printMarkdown(os.Stdout, &rep)
	if o.jsonPath != "" {
		b, _ := json.MarshalIndent(&rep, "", "  ")
		if err := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
		log("wrote %s", o.jsonPath)
	}
	return nil
}

// running is a started gateway and its chat completions URL.
type running struct {
	p   *proc.Process
	url string
}

func (r *running) stop() { r.p.Stop() }

func startFuseboxTarget(ctx context.Context, o options, benchDir, tmp string, up *upstreamRef, log func(string, ...any)) (*running, error) {
	bin := o.fuseboxBin
	if bin == "" {
		log("building fusebox")
		var err error
		if bin, err = buildFusebox(filepath.Dir(benchDir), tmp); err != nil {
			return nil, err
		}
	}
	p, port, err := startFusebox(bin, tmp, up.baseURL)
	if err != nil {
		return nil, fmt.Errorf("fusebox: %v", err)
	}
	r := &running{p: p, url: "http://127.0.0.1:" + strconv.Itoa(port) + "/v1/chat/completions"}
	t := target{name: "fusebox", url: r.url, model: "fast", header: http.Header{"Authorization": {"Bearer k"}}}
	if err := p.WaitReady(ctx, func(ctx context.Context) error { return probe(ctx, t) }); err != nil {
		p.Stop()
		return nil, fmt.Errorf("fusebox: %v", err)
	}
	return r, nil
}

// startPortkeyTarget installs Portkey if asked and starts it if it can.
// With neither, it returns why Portkey is not measured; that is an error
// only under -portkey.
func startPortkeyTarget(ctx context.Context, o options, tmp string, up *upstreamRef, log func(string, ...any)) (*running, string, error) {
	if o.portkey.mode == "off" {
		return nil, "-portkey=false", nil
	}
	if o.installPortkey {
		log("installing %s@%s into %s", portkeyPackage, portkeyVersion, o.portkeyDir)
		if err := installPortkey(o.portkeyDir); err != nil {
			return nil, "", err
		}
	}
	if why := portkeyMissing(o.portkeyDir); why != "" {
		if o.portkey.mode == "on" {
			return nil, "", errors.New("-portkey: " + why)
		}
		return nil, why, nil
	}
	p, port, err := startPortkey(o.portkeyDir, tmp)
	if err != nil {
		return nil, "", fmt.Errorf("portkey: %v", err)
	}
	r := &running{p: p, url: "http://127.0.0.1:" + strconv.Itoa(port) + "/v1/chat/completions"}
	t := target{name: "portkey", url: r.url, model: "m", header: http.Header{"Authorization": {"Bearer k"},
		"X-Portkey-Provider": {"openai"}, "X-Portkey-Custom-Host": {up.baseURL}}}
	if err := p.WaitReady(ctx, func(ctx context.Context) error { return probe(ctx, t) }); err != nil {
		p.Stop()
		return nil, "", fmt.Errorf("portkey: %v", err)
	}
	return r, "", nil
}
