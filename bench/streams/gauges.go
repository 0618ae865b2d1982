package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// gauges is what a gateway's Go runtime says about itself at one moment.
type gauges struct {
	goroutines int64
	heapInuse  int64 // bytes in in-use heap spans (HeapInuse)
	stackInuse int64 // bytes of goroutine stacks (StackInuse)
}

// gaugeSource reads a gateway's gauges: from net/http/pprof when it
// serves that, else from its Prometheus metrics (the Go collector's
// go_goroutines and go_memstats_*), else not at all.
type gaugeSource struct {
	pprof   string // base URL of /debug/pprof/, or ""
	metrics string // the /metrics URL, or ""
	client  *http.Client
}

// from names where the gauges come from: pprof, metrics or "".
func (g gaugeSource) from() string {
	switch {
	case g.pprof != "":
		return "pprof"
	case g.metrics != "":
		return "metrics"
	}
	return ""
}

func (g gaugeSource) read(ctx context.Context) (gauges, error) {
	switch {
	case g.pprof != "":
		return g.readPprof(ctx)
	case g.metrics != "":
		return g.readMetrics(ctx)
	}
	return gauges{}, errors.New("no gauges")
}

func (g gaugeSource) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return b, err
}

// readPprof reads the goroutine count from the index page (which counts
// them with runtime.NumGoroutine: the goroutine profile itself walks every
// stack, and at 10,000 streams costs the gateway a noticeable share of
// its CPU time) and HeapInuse and StackInuse from the MemStats that close
// the heap profile's text form.
func (g gaugeSource) readPprof(ctx context.Context) (gauges, error) {
	var out gauges
	b, err := g.get(ctx, g.pprof)
	if err != nil {
		return out, err
	}
	m := goroutineCount.FindSubmatch(b)
	if m == nil {
		return out, errors.New("the pprof index page has no goroutine count")
	}
	if out.goroutines, err = strconv.ParseInt(string(m[1]), 10, 64); err != nil {
		return out, err
	}
	if b, err = g.get(ctx, g.pprof+"heap?debug=1"); err != nil {
		return out, err
	}
	vals := scanValues(b, "# ", " = ", "HeapInuse", "Stack") // "# Stack = inuse / sys"
	out.heapInuse, out.stackInuse = vals["HeapInuse"], vals["Stack"]
	return out, nil
}

// goroutineCount finds the goroutine count in net/http/pprof's index page.
var goroutineCount = regexp.MustCompile(`<td>(\d+)</td><td><a href='[^']*'>goroutine</a>`)

func (g gaugeSource) readMetrics(ctx context.Context) (gauges, error) {
	b, err := g.get(ctx, g.metrics)
	if err != nil {
		return gauges{}, err
	}
	vals := scanValues(b, "", " ", "go_goroutines", "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes")
	if _, ok := vals["go_goroutines"]; !ok {
		return gauges{}, errors.New("/metrics has no go_goroutines")
	}
	return gauges{goroutines: vals["go_goroutines"], heapInuse: vals["go_memstats_heap_inuse_bytes"],
		stackInuse: vals["go_memstats_stack_inuse_bytes"]}, nil
}

// scanValues finds the lines prefix+name+sep+number of text for the
// names given and returns their numbers (Prometheus writes large ones in
// exponent form). Anything after the number is ignored.
func scanValues(text []byte, prefix, sep string, names ...string) map[string]int64 {
	vals := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		name, v, ok := strings.Cut(rest, sep)
		if !ok || !slices.Contains(names, name) {
			continue
		}
		v, _, _ = strings.Cut(strings.TrimSpace(v), " ")
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			vals[name] = int64(f)
		}
	}
	return vals
}

// saveProfiles writes the gateway's goroutine profile (text and proto)
// and heap profile (proto) into dir, named prefix-*. The heap profile is
// taken after a forced GC (gc=1): a heap profile shows the heap as of the
// last GC, and with many long streams and little garbage the last one can
// be tens of seconds old, from the ramp.
func (g gaugeSource) saveProfiles(ctx context.Context, dir, prefix string) error {
	if g.pprof == "" {
		return nil
	}
	for _, p := range []struct{ query, file string }{
		{"goroutine?debug=1", "goroutine.txt"},
		{"goroutine", "goroutine.pb.gz"},
		{"heap?gc=1", "heap.pb.gz"},
	} {
		if err := g.save(ctx, p.query, filepath.Join(dir, prefix+"-"+p.file)); err != nil {
			return err
		}
	}
	return nil
}

// save writes what the pprof endpoint answers to query into file.
func (g gaugeSource) save(ctx context.Context, query, file string) error {
	b, err := g.get(ctx, g.pprof+query)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// goroutineGroups fetches the goroutine profile and groups it; paths
// are shown relative to the first of roots they are under.
func (g gaugeSource) goroutineGroups(ctx context.Context, roots []string) ([]goroutineGroup, error) {
	if g.pprof == "" {
		return nil, nil
	}
	b, err := g.get(ctx, g.pprof+"goroutine?debug=1")
	if err != nil {
		return nil, err
	}
	return parseGoroutines(b, roots), nil
}

// goroutineGroup is one stack of the goroutine profile and how many
// goroutines were on it.
type goroutineGroup struct {
	count  int
	frames []frame // innermost first
}

type frame struct {
	fn, at string // function; file:line, relative to a root if under one
	own    bool   // under one of the roots: the code measured
}

func (f frame) String() string { return f.fn + " (" + f.at + ")" }

// where returns where the group's goroutines wait: the innermost frame
// outside the runtime's and I/O plumbing, the innermost frame of the code
// measured ("" if none), and the outermost frame (what started them).
func (g goroutineGroup) where() (waits, own, started string) {
	for _, f := range g.frames {
		if waits == "" && !plumbing(f.fn) {
			waits = f.String()
		}
		if own == "" && f.own {
			own = f.String()
		}
	}
	if len(g.frames) > 0 {
		started = g.frames[len(g.frames)-1].String()
	}
	return waits, own, started
}

// plumbing reports whether a function is the runtime's or a package's
// that goroutines only pass through on their way to wait.
func plumbing(fn string) bool {
	for _, p := range []string{"runtime.", "internal/poll.", "net.(*conn)", "net.(*netFD)", "sync.", "internal/sync.",
		"bufio.", "io.", "time.Sleep", "context.", "net/http/internal."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// parseGoroutines reads the text goroutine profile (debug=1): groups of
// "N @ 0x…" followed by "#  0x…  function+0x…  file:line" frames. Paths
// are shown relative to the first of roots they are under.
func parseGoroutines(text []byte, roots []string) []goroutineGroup {
	var gs []goroutineGroup
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && f[1] == "@":
			if c, err := strconv.Atoi(f[0]); err == nil {
				gs = append(gs, goroutineGroup{count: c})
			}
		case len(f) == 4 && f[0] == "#" && len(gs) > 0:
			fn, _, _ := strings.Cut(f[2], "+0x")
			at, own := shortPath(f[3], roots)
			g := &gs[len(gs)-1]
			g.frames = append(g.frames, frame{fn: fn, at: at, own: own})
		}
	}
	slices.SortStableFunc(gs, func(a, b goroutineGroup) int { return b.count - a.count })
	return gs
}

// shortPath shows a source path relative to the first of roots it is
// under (own), else from the module cache's or GOROOT's package path on.
func shortPath(p string, roots []string) (short string, own bool) {
	for _, r := range roots {
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(r, "/")+"/"); ok && r != "" {
			return rest, true
		}
	}
	for _, mark := range []string{"/pkg/mod/", "/src/"} {
		if i := strings.LastIndex(p, mark); i >= 0 {
			return p[i+len(mark):], false
		}
	}
	return p, false
}

// pprofReady reports whether a pprof endpoint answers, for a gateway
// just started.
func pprofReady(ctx context.Context, c *http.Client, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := gaugeSource{pprof: base, client: c}.get(ctx, base+"goroutine?debug=1")
	return err
}
