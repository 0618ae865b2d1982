// Command streams measures what many slow streams at once cost a gateway:
// the memory, goroutines and CPU each open stream holds, and the time to
// first content it adds. It starts a slow upstream in this process (every
// answer a stream of -chunks chat.completion chunks, -delay apart, then a
// usage chunk and [DONE]), then for each concurrency C and each gateway
// (fusebox serve, built from a source tree, and the floor: a bare
// httputil.ReverseProxy) starts the gateway as a fresh child process and
// holds C streams through it with a closed-loop client (each stream is
// read to its end and the next one started at once). It prints a
// Markdown table and can write the results as JSON.
//
// Run it from bench/:
//
//	go run ./streams                                 # C = 1000, 5000, 10000
//	go run ./streams -c 5000 -profile /tmp/prof      # with pprof profiles of each gateway
//
// The gateway is a process of its own, so its RSS, threads and CPU time
// (from /proc) are its own; the client and the upstream share this
// process and the machine's cores with it.
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/buildtree"
	"github.com/fuseboxhq/fusebox/bench/internal/proc"
	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

type options struct {
	concurrency     []int
	targets         []string
	rounds          int
	spec            streamSpec
	ramp, duration  time.Duration
	settle          time.Duration
	fuseboxBin, src string
	pprof           bool
	profileDir      string
	jsonPath        string
}

func main() {
	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "streams: "+format+"\n", a...) }
	if spec := os.Getenv(upstreamEnv); spec != "" {
		if err := serveUpstreamChild(spec); err != nil {
			log("upstream: %v", err)
			os.Exit(1)
		}
		return
	}
	if up := os.Getenv(floorEnv); up != "" {
		if err := serveFloorChild(up, os.Getenv(floorPprofEnv)); err != nil {
			log("floor: %v", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		log("%v", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, o, log)
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}
	printMarkdown(os.Stdout, rep, o.rounds)
	if o.jsonPath != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); err != nil {
			log("%v", err)
			os.Exit(1)
		}
		log("wrote %s", o.jsonPath)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("streams", flag.ContinueOnError)
	conc := fs.String("c", "1000,5000,10000", "comma-separated concurrencies: streams held open at once")
	targets := fs.String("targets", "fusebox,floor,direct", "comma-separated gateways: fusebox, floor (a bare httputil.ReverseProxy), direct (the upstream itself)")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds of all cells; the order of the targets alternates, and the table shows medians")
	fs.IntVar(&o.spec.chunks, "chunks", 20, "content chunks per stream")
	fs.DurationVar(&o.spec.delay, "delay", 500*time.Millisecond, "time between chunks")
	fs.IntVar(&o.spec.prompt, "prompt", 0, "bytes of earlier conversation in each request, as a real conversation sends")
	first := fs.Duration("first-delay", -1, "the upstream's delay before the first chunk (default: -delay)")
	fs.DurationVar(&o.ramp, "ramp", 0, "time over which the streams start, not measured (default: one stream's length)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "measured time per cell, after the ramp")
	fs.DurationVar(&o.settle, "settle", 2*time.Second, "pause before each cell, for the sockets of the cell before to close")
	fs.StringVar(&o.fuseboxBin, "fusebox", "", "fusebox binary to run (default: build ./cmd/fusebox of -src)")
	fs.StringVar(&o.src, "src", "", "source tree to build fusebox from (default: the repository holding bench/)")
	fs.BoolVar(&o.pprof, "pprof", true, "build fusebox with a file, given to the compiler by -overlay, that serves net/http/pprof on a port of its own")
	fs.StringVar(&o.profileDir, "profile", "", "save each gateway's goroutine and heap profiles, from the middle of each cell, in this directory")
	fs.StringVar(&o.jsonPath, "json", "", "also write the results to this JSON file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, s := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-c: %q is not a positive number", s)
		}
		o.concurrency = append(o.concurrency, n)
	}
	for _, s := range strings.Split(*targets, ",") {
		o.targets = append(o.targets, strings.TrimSpace(s))
	}
	o.spec.firstDelay = *first
	if o.spec.firstDelay < 0 {
		o.spec.firstDelay = o.spec.delay
	}
	if o.ramp == 0 {
		o.ramp = o.spec.length()
	}
	switch {
	case o.spec.chunks < 1:
		return o, errors.New("-chunks must be at least 1")
	case o.duration <= 0:
		return o, errors.New("-duration must be positive")
	case o.rounds < 1:
		return o, errors.New("-rounds must be at least 1")
	}
	return o, nil
}

func run(ctx context.Context, o options, log func(string, ...any)) (*Report, error) {
	maxC := 0
	for _, c := range o.concurrency {
		maxC = max(maxC, c)
	}
	// This process holds a client and an upstream socket per stream, the
	// gateway two; a few thousand more for everything else.
	nofile, err := proc.RaiseNoFile(uint64(max(65536, 4*maxC+8192)))
	if err != nil {
		return nil, fmt.Errorf("RLIMIT_NOFILE: %v", err)
	}
	if nofile < uint64(2*maxC+64) {
		log("RLIMIT_NOFILE is %d (and cannot be raised here): a gateway needs two sockets per stream, more than that at %d streams",
			nofile, maxC)
	}
	if lo, hi, err := proc.PortRange(); err == nil && hi-lo+1 < maxC+1024 {
		// Each destination (the gateway's port, the upstream's) has the
		// whole range to itself, so only one hop's streams must fit.
		log("the ephemeral port range %d-%d is smaller than %d streams", lo, hi, maxC)
	}
	tmp, err := os.MkdirTemp("", "streams-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return nil, err
		}
	}
	if o.src == "" {
		bench, err := buildtree.BenchDir()
		if err != nil {
			return nil, err
		}
		o.src = filepath.Dir(bench)
	}
	e, describe, err := setup(ctx, o, tmp, log)
	if err != nil {
		return nil, err
	}

	rep := &Report{Started: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		Fusebox: describe, NoFile: nofile, Chunks: o.spec.chunks, FirstDelay: o.spec.firstDelay.String(),
		Delay: o.spec.delay.String(), Ramp: o.ramp.String(), Duration: o.duration.String()}
	var starters []starter
	for _, t := range o.targets {
		st, err := e.starter(t)
		if err != nil {
			return nil, err
		}
		starters = append(starters, st)
	}
	roots := []string{o.src}
	rep.LoadBefore = proc.LoadAverage()
	log("load average before: %s", rep.LoadBefore)
	for round := range o.rounds {
		for _, c := range o.concurrency {
			for i := range starters {
				st := starters[i]
				if round%2 == 1 {
					st = starters[len(starters)-1-i]
				}
				cs := cellSpec{c: c, round: round, ramp: o.ramp, duration: o.duration, settle: o.settle,
					profileDir: o.profileDir, roots: roots}
				r, err := runCell(ctx, e, st, cs)
				if err != nil {
					return nil, err
				}
				log("c=%-5d %-7s %6.0f streams/s  errors %d  RSS/stream %s  goroutines/stream %s  TTFB added p99 %s  length added p99 %s  CPU/stream %s",
					c, st.name, r.StreamsPerSec, r.Errors, optKB(r.RSSPerStream),
					opt(r.GoroutinesPerStream, func(v float64) string { return fmt.Sprintf("%.2f", v) }),
					opt(r.TTFBAddedP99, stats.FmtAdded), opt(r.LengthAddedP99, stats.FmtAdded), opt(r.CPUPerStream, stats.FmtUS))
				rep.Results = append(rep.Results, r)
			}
		}
	}
	rep.LoadAfter = proc.LoadAverage()
	return rep, nil
}

// setup builds (or finds) fusebox.
func setup(ctx context.Context, o options, tmp string, log func(string, ...any)) (*env, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	e := &env{tmp: tmp, spec: o.spec, self: self, client: &http.Client{Timeout: time.Minute}}
	describe := o.fuseboxBin
	if o.fuseboxBin != "" {
		e.fusebox = o.fuseboxBin
	} else if slices.Contains(o.targets, "fusebox") {
		describe = o.src + " at " + buildtree.Describe(ctx, o.src)
		log("building fusebox from %s", describe)
		e.fusebox = filepath.Join(tmp, "fusebox")
		if err := buildtree.Fusebox(ctx, o.src, e.fusebox, buildtree.Options{Pprof: o.pprof}); err != nil {
			return nil, "", err
		}
	}
	return e, describe, nil
}
