// Command gate is the performance regression gate: it builds fusebox at
// the current source tree and at a base git revision, runs the gateway
// overhead scenario (bench/gatewayload) and the many-streams scenario
// (bench/streams) against both binaries, interleaved over a few rounds,
// and compares them round by round. It prints each figure's ratio
// current/base (the median of the rounds' ratios) with the least and
// greatest of them, and exits with status 1 when a figure is worse than
// its threshold in every round (the whole spread past it), so that it can
// gate a merge on a loaded machine: load widens the spread and leaves the
// verdict undecided, not failed.
//
// Run it from bench/:
//
//	go run ./gate -base main
//	go run ./gate -base HEAD~1 -rounds 5 -throughput 3
//
// The base revision is checked out into a temporary git worktree (git
// worktree add), built, and the worktree removed; the repository's own
// working tree is not touched. Both binaries are measured by the load
// generators of the current bench module, in turn, on the same machine,
// so that drift and load hit both alike: only the ratios mean anything.
//
// Exit status: 0 no figure worse than its threshold, 1 at least one
// worse (or more errors than the base), 2 the gate could not measure.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/buildtree"
	"github.com/fuseboxhq/fusebox/bench/internal/proc"
)

type options struct {
	base, src          string
	baseBin, curBin    string
	rounds             int
	scenarios          []string
	duration, warmup   time.Duration // per gatewayload cell
	streamsC           int
	chunks             int
	delay, streamsTime time.Duration
	th                 thresholds
	jsonPath           string
	keep               bool
	floor              bool
}

func main() {
	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "gate: "+format+"\n", a...) }
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		log("%v", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	worse, err := gate(ctx, o, os.Stdout, log)
	switch {
	case err != nil:
		log("%v", err)
		os.Exit(2)
	case worse:
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	o := options{th: thresholds{}}
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.StringVar(&o.base, "base", "", "git revision to compare with (required unless -base-bin)")
	fs.StringVar(&o.src, "src", "", "the current source tree (default: the repository holding bench/)")
	fs.StringVar(&o.baseBin, "base-bin", "", "a fusebox binary to use as the base instead of building -base")
	fs.StringVar(&o.curBin, "current-bin", "", "a fusebox binary to use as the current one instead of building -src")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds; each measures both binaries, in alternating order")
	scen := fs.String("scenarios", "overhead,streams", "comma-separated: overhead (bench/gatewayload), streams (bench/streams)")
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "overhead: measured time per cell")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "overhead: warm-up per cell")
	fs.IntVar(&o.streamsC, "streams-c", 1000, "streams: concurrent streams")
	fs.IntVar(&o.chunks, "streams-chunks", 20, "streams: chunks per stream")
	fs.DurationVar(&o.delay, "streams-delay", 250*time.Millisecond, "streams: time between chunks")
	fs.DurationVar(&o.streamsTime, "streams-duration", 10*time.Second, "streams: measured time, after a ramp of one stream's length")
	tput := fs.Float64("throughput", 5, "worst drop of req/s allowed, in %")
	cpuT := fs.Float64("cpu", 5, "worst rise of CPU per request or stream allowed, in %")
	lat := fs.Float64("latency", 10, "worst rise of added latency (p50, p99, TTFB) allowed, in %")
	mem := fs.Float64("memory", 10, "worst rise of RSS per stream allowed, in %")
	fs.StringVar(&o.jsonPath, "json", "", "also write the comparison to this JSON file")
	fs.BoolVar(&o.floor, "floor", true, "overhead: also measure the bare reverse proxy in each run, and print both binaries against it (not gated)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (binaries, reports, logs)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.base == "" && o.baseBin == "" {
		return o, errors.New("-base is required: the git revision to compare with")
	}
	for _, s := range strings.Split(*scen, ",") {
		s = strings.TrimSpace(s)
		if s != "overhead" && s != "streams" {
			return o, fmt.Errorf("-scenarios: %q is not overhead or streams", s)
		}
		o.scenarios = append(o.scenarios, s)
	}
	if o.rounds < 1 {
		return o, errors.New("-rounds must be at least 1")
	}
	o.th[throughput], o.th[cpu], o.th[latency], o.th[memory] = *tput/100, *cpuT/100, *lat/100, *mem/100
	return o, nil
}

// session is one gate run: its options, where it works, and the two
// binaries, base (0) and current (1).
type session struct {
	o             options
	benchDir, tmp string
	bins, names   [2]string
	log           func(string, ...any)
}

// gate builds, measures and compares; it reports whether a figure is
// worse than its threshold.
func gate(ctx context.Context, o options, out io.Writer, log func(string, ...any)) (bool, error) {
	s := &session{o: o, log: log}
	var err error
	if s.benchDir, err = buildtree.BenchDir(); err != nil {
		return false, err
	}
	if s.o.src == "" {
		s.o.src = filepath.Dir(s.benchDir)
	}
	if s.tmp, err = os.MkdirTemp("", "gate-"); err != nil {
		return false, err
	}
	if o.keep {
		log("keeping %s", s.tmp)
	} else {
		defer os.RemoveAll(s.tmp)
	}
	if err := s.build(ctx); err != nil {
		return false, err
	}
	// The streams run raises its own limit on open files; the overhead run
	// needs few.
	if _, err := proc.RaiseNoFile(uint64(max(65536, 4*o.streamsC+8192))); err != nil {
		return false, err
	}
	runs := [2][]run{} // base, current
	loadBefore := proc.LoadAverage()
	for round := range o.rounds {
		order := []int{0, 1}
		if round%2 == 1 {
			order = []int{1, 0}
		}
		rs := [2]run{}
		for _, sc := range o.scenarios {
			for _, v := range order {
				log("round %d/%d: %s, %s", round+1, o.rounds, sc, s.names[v])
				if err := s.measure(ctx, sc, v, round, &rs[v]); err != nil {
					return false, err
				}
			}
		}
		runs[0], runs[1] = append(runs[0], rs[0]), append(runs[1], rs[1])
	}
	rows := compare(metrics(o.streamsC), runs[0], runs[1], o.th)
	errBase, errCur := errorCount(runs[0]), errorCount(runs[1])
	worse := errCur > errBase
	for _, r := range rows {
		worse = worse || r.worse
	}
	fmt.Fprintf(out, "base %s, current %s; %d rounds, interleaved; load average %s before, %s after.\n\n",
		s.names[0], s.names[1], o.rounds, loadBefore, proc.LoadAverage())
	printRows(out, rows, errBase, errCur)
	if o.floor && slices.Contains(o.scenarios, "overhead") {
		printFloor(out, runs)
	}
	if worse {
		fmt.Fprintln(out, "\nRESULT: worse than the base")
	} else {
		fmt.Fprintln(out, "\nRESULT: not worse than the base")
	}
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, s.names, rows, errBase, errCur, worse); err != nil {
			return worse, err
		}
	}
	return worse, nil
}

// build makes the base and current binaries (unless given) and the two
// load generators.
func (s *session) build(ctx context.Context) error {
	o := s.o
	s.bins, s.names = [2]string{o.baseBin, o.curBin}, [2]string{o.baseBin, o.curBin}
	if o.baseBin == "" {
		dir := filepath.Join(s.tmp, "base-src")
		hash, remove, err := buildtree.Worktree(ctx, filepath.Dir(s.benchDir), o.base, dir)
		if err != nil {
			return err
		}
		s.names[0] = o.base + " (" + hash[:12] + ")"
		s.bins[0] = filepath.Join(s.tmp, "fusebox-base")
		s.log("building fusebox at %s", s.names[0])
		err = buildtree.Fusebox(ctx, dir, s.bins[0], buildtree.Options{})
		if rerr := remove(); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			return err
		}
	}
	if o.curBin == "" {
		s.names[1] = o.src + " at " + buildtree.Describe(ctx, o.src)
		s.bins[1] = filepath.Join(s.tmp, "fusebox-current")
		s.log("building fusebox from %s", s.names[1])
		if err := buildtree.Fusebox(ctx, o.src, s.bins[1], buildtree.Options{}); err != nil {
			return err
		}
	}
	for _, cmd := range []string{"gatewayload", "streams"} {
		c := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(s.tmp, cmd), "./"+cmd)
		c.Dir = s.benchDir
		if b, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./%s: %v\n%s", cmd, err, b)
		}
	}
	return nil
}

// measure runs one scenario against binary v and stores its report in r.
func (s *session) measure(ctx context.Context, scenario string, v, round int, r *run) error {
	o := s.o
	base := filepath.Join(s.tmp, fmt.Sprintf("%s-%d-r%d", scenario, v, round))
	var name string
	var args []string
	switch scenario {
	case "overhead":
		name = "gatewayload"
		args = []string{"-fusebox", s.bins[v], "-floor=" + strconv.FormatBool(o.floor), "-portkey=false", "-duration", o.duration.String(),
			"-warmup", o.warmup.String(), "-concurrency", "1,50", "-modes", "json,stream", "-json", base + ".json"}
	case "streams":
		name = "streams"
		args = []string{"-fusebox", s.bins[v], "-targets", "fusebox", "-c", strconv.Itoa(o.streamsC),
			"-chunks", strconv.Itoa(o.chunks), "-delay", o.delay.String(), "-duration", o.streamsTime.String(),
			"-json", base + ".json"}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.tmp, name), args...)
	cmd.Dir = s.benchDir
	logf, err := os.Create(base + ".log")
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(logf.Name())
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	if scenario == "overhead" {
		r.overhead = &overheadReport{}
		return readJSON(base+".json", r.overhead)
	}
	r.streams = &streamsReport{}
	return readJSON(base+".json", r.streams)
}

// errorCount sums the fusebox cells' errors over runs.
func errorCount(runs []run) int64 {
	var n int64
	for _, r := range runs {
		if r.overhead != nil {
			for _, x := range r.overhead.Results {
				if x.Target == "fusebox" {
					n += x.Errors
				}
			}
		}
		if r.streams != nil {
			for _, x := range r.streams.Results {
				n += int64(x.Errors)
			}
		}
	}
	return n
}

func printRows(w io.Writer, rows []row, errBase, errCur int64) {
	fmt.Fprintln(w, "| figure | base (median) | current (median) | current/base (median of rounds) | rounds' least–greatest | allowed | verdict |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range rows {
		allowed := fmt.Sprintf("≤ %.2f", 1+r.limit)
		if r.m.higher {
			allowed = fmt.Sprintf("≥ %.2f", 1-r.limit)
		}
		verdict := "ok"
		switch {
		case len(r.base) == 0 || len(r.cur) == 0:
			verdict = "not measured"
		case !r.known:
			verdict = "not comparable"
		case r.worse:
			verdict = "**worse**"
		case r.m.higher && r.lo < 1-r.limit, !r.m.higher && r.hi > 1+r.limit:
			verdict = "ok (undecided: the spread crosses the threshold)"
		}
		ratio, spread := "—", "—"
		if !math.IsNaN(r.ratio) {
			ratio = fmt.Sprintf("%.3f", r.ratio)
			spread = fmt.Sprintf("%.3f–%.3f", r.lo, r.hi)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.m.name, fmtValue(r.baseM, r.m.unit, len(r.base)),
			fmtValue(r.curM, r.m.unit, len(r.cur)), ratio, spread, allowed, verdict)
	}
	verdict := "ok"
	if errCur > errBase {
		verdict = "**worse**"
	}
	fmt.Fprintf(w, "| errors (all rounds) | %d | %d | — | — | ≤ base | %s |\n", errBase, errCur, verdict)
}

// printFloor prints each binary against the bare reverse proxy measured
// in the same run: the median of the rounds' ratios and their spread.
func printFloor(w io.Writer, runs [2][]run) {
	fmt.Fprintln(w, "\nAgainst the bare reverse proxy of the same run (fusebox / floor; not gated):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | base / floor | current / floor |")
	fmt.Fprintln(w, "| --- | ---: | ---: |")
	for _, f := range floorRatios() {
		cell := func(rs []float64) string {
			if len(rs) == 0 {
				return "—"
			}
			return fmt.Sprintf("%.3f (%.3f–%.3f)", median(rs), slices.Min(rs), slices.Max(rs))
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", f.name, cell(f.ratios(runs[0])), cell(f.ratios(runs[1])))
	}
}

func fmtValue(v float64, unit string, n int) string {
	if n == 0 || math.IsNaN(v) {
		return "—"
	}
	switch {
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	default:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
}

func writeJSON(path string, names [2]string, rows []row, errBase, errCur int64, worse bool) error {
	type jrow struct {
		Figure  string    `json:"figure"`
		Unit    string    `json:"unit"`
		Base    []float64 `json:"base"`
		Current []float64 `json:"current"`
		Ratio   *float64  `json:"ratio,omitempty"` // median of the rounds' ratios
		Ratios  []float64 `json:"ratios,omitempty"`
		Least   *float64  `json:"ratio_least,omitempty"`
		Most    *float64  `json:"ratio_greatest,omitempty"`
		Allowed float64   `json:"allowed_change"`
		Higher  bool      `json:"higher_is_better"`
		Worse   bool      `json:"worse"`
	}
	out := struct {
		Base          string `json:"base"`
		Current       string `json:"current"`
		Figures       []jrow `json:"figures"`
		ErrorsBase    int64  `json:"errors_base"`
		ErrorsCurrent int64  `json:"errors_current"`
		Worse         bool   `json:"worse"`
	}{Base: names[0], Current: names[1], ErrorsBase: errBase, ErrorsCurrent: errCur, Worse: worse}
	for _, r := range rows {
		j := jrow{Figure: r.m.name, Unit: r.m.unit, Base: r.base, Current: r.cur, Allowed: r.limit, Higher: r.m.higher, Worse: r.worse}
		if r.known {
			j.Ratio, j.Ratios, j.Least, j.Most = ptr(r.ratio), r.ratios, ptr(r.lo), ptr(r.hi)
		}
		out.Figures = append(out.Figures, j)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
