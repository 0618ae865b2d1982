package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

// Result is one cell: one gateway holding Concurrency streams. Times are
// in microseconds and memory in bytes; pointers are absent where a figure
// does not apply (the direct target has no process of its own) or could
// not be read.
type Result struct {
	Target      string `json:"target"`
	Concurrency int    `json:"concurrency"`
	Round       int    `json:"round"`
	// Streams completed in the measured window, and those that failed
	// there; ErrorsAll counts the ramp's too.
	Streams       int     `json:"streams"`
	Errors        int     `json:"errors"`
	ErrorsAll     int     `json:"errors_including_ramp"`
	FirstError    string  `json:"first_error,omitempty"`
	Seconds       float64 `json:"seconds"`
	StreamsPerSec float64 `json:"streams_per_second"`
	// TTFBAdded* are the client's time to the first content chunk less
	// the upstream's own delay before it, over the streams that began
	// and ended in the window.
	TTFBAddedP50 *float64 `json:"ttfb_added_p50_us,omitempty"`
	TTFBAddedP99 *float64 `json:"ttfb_added_p99_us,omitempty"`
	// LengthAdded* are the same streams' time to their end less the
	// upstream's own length.
	LengthAddedP50 *float64 `json:"length_added_p50_us,omitempty"`
	LengthAddedP99 *float64 `json:"length_added_p99_us,omitempty"`
	// The gateway process: RSS before the load and at its peak (VmHWM of
	// a process started for the cell, or the highest VmRSS sampled),
	// (peak − idle) / concurrency, CPU time (utime + stime) in the window
	// over Streams.
	IdleRSS      *int64   `json:"idle_rss_bytes,omitempty"`
	PeakRSS      *int64   `json:"peak_rss_bytes,omitempty"`
	RSSPerStream *float64 `json:"rss_per_stream_bytes,omitempty"`
	CPUPerStream *float64 `json:"cpu_per_stream_us,omitempty"`
	Threads      int      `json:"threads,omitempty"`
	// The gateway's Go runtime, read three times in the window from
	// GaugesFrom (pprof or metrics): the most seen, and the median of
	// (reading − idle reading) / streams in flight.
	GaugesFrom          string   `json:"gauges_from,omitempty"`
	GaugeError          string   `json:"gauge_error,omitempty"`
	Goroutines          int64    `json:"goroutines,omitempty"`
	HeapInuse           int64    `json:"heap_inuse_bytes,omitempty"`
	GoroutinesPerStream *float64 `json:"goroutines_per_stream,omitempty"`
	HeapPerStream       *float64 `json:"heap_inuse_per_stream_bytes,omitempty"`
	StackPerStream      *float64 `json:"stack_inuse_per_stream_bytes,omitempty"`
	// Connections opened in the window: to the upstream (by the gateway)
	// and by the client; 0 when every hop kept its connections alive.
	UpstreamConns int64 `json:"upstream_connections_opened"`
	ClientConns   int64 `json:"client_connections_opened"`
	// Stacks are the goroutine profile's groups with at least one
	// goroutine per ten streams, in the middle of the window (pprof only).
	Stacks   []Stack `json:"stacks,omitempty"`
	Profiles string  `json:"profiles,omitempty"`
}

// Stack is a group of the goroutine profile.
type Stack struct {
	Count     int     `json:"count"`
	PerStream float64 `json:"per_stream"`
	WaitsIn   string  `json:"waits_in"`      // innermost frame outside the runtime's and I/O plumbing
	Own       string  `json:"own,omitempty"` // innermost frame in the source tree measured
	Started   string  `json:"started"`       // outermost frame: what started it
}

// Report is the JSON output.
type Report struct {
	Started    string   `json:"started"`
	CPUs       int      `json:"cpus"`
	GoVersion  string   `json:"go_version"`
	Fusebox    string   `json:"fusebox"` // the source built, or the binary given
	LoadBefore string   `json:"load_average_before"`
	LoadAfter  string   `json:"load_average_after"`
	NoFile     uint64   `json:"rlimit_nofile"`
	Chunks     int      `json:"chunks"`
	FirstDelay string   `json:"first_delay"`
	Delay      string   `json:"delay"`
	Ramp       string   `json:"ramp"`
	Duration   string   `json:"duration"`
	Results    []Result `json:"results"`
}

// medians returns one row per target and concurrency, in the order first
// seen, with the median of the rounds of each figure.
func medians(rs []Result) []Result {
	type key struct {
		target string
		c      int
	}
	var order []key
	groups := map[key][]Result{}
	for _, r := range rs {
		k := key{r.Target, r.Concurrency}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	slices.SortStableFunc(order, func(a, b key) int { return a.c - b.c })
	var out []Result
	for _, k := range order {
		g := groups[k]
		m := g[0] // non-numeric fields and the stacks from the first round
		m.Round = -1
		m.Streams = int(medianOf(g, func(r Result) *float64 { return ptr(float64(r.Streams)) }))
		m.Errors, m.ErrorsAll = 0, 0
		for _, r := range g {
			m.Errors += r.Errors
			m.ErrorsAll += r.ErrorsAll
			if m.FirstError == "" {
				m.FirstError = r.FirstError
			}
		}
		m.StreamsPerSec = medianOf(g, func(r Result) *float64 { return &r.StreamsPerSec })
		for _, f := range []func(*Result) **float64{
			func(r *Result) **float64 { return &r.TTFBAddedP50 },
			func(r *Result) **float64 { return &r.TTFBAddedP99 },
			func(r *Result) **float64 { return &r.LengthAddedP50 },
			func(r *Result) **float64 { return &r.LengthAddedP99 },
			func(r *Result) **float64 { return &r.RSSPerStream },
			func(r *Result) **float64 { return &r.CPUPerStream },
			func(r *Result) **float64 { return &r.GoroutinesPerStream },
			func(r *Result) **float64 { return &r.HeapPerStream },
			func(r *Result) **float64 { return &r.StackPerStream },
		} {
			if *f(&m) != nil {
				*f(&m) = ptr(medianOf(g, func(r Result) *float64 { return *f(&r) }))
			}
		}
		if m.PeakRSS != nil {
			m.PeakRSS = ptr(int64(medianOf(g, func(r Result) *float64 {
				if r.PeakRSS == nil {
					return nil
				}
				return ptr(float64(*r.PeakRSS))
			})))
		}
		out = append(out, m)
	}
	return out
}

// medianOf is the median of f over rs, skipping nils.
func medianOf(rs []Result, f func(Result) *float64) float64 {
	var xs []float64
	for _, r := range rs {
		if v := f(r); v != nil {
			xs = append(xs, *v)
		}
	}
	return stats.Median(xs)
}

func printMarkdown(w io.Writer, rep *Report, rounds int) {
	fmt.Fprintf(w, "%d CPUs, %s; fusebox %s; load average %s before, %s after; RLIMIT_NOFILE %d.\n",
		rep.CPUs, rep.GoVersion, rep.Fusebox, rep.LoadBefore, rep.LoadAfter, rep.NoFile)
	fmt.Fprintf(w, "Each stream: %d chunks, the first %s after the request, then %s apart. Ramp %s, then %s measured per cell",
		rep.Chunks, rep.FirstDelay, rep.Delay, rep.Ramp, rep.Duration)
	if rounds > 1 {
		fmt.Fprintf(w, "; medians of %d rounds", rounds)
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintln(w, "| C | target | streams/s | errors | peak RSS | RSS/stream | goroutines/stream | heap/stream | stack/stream | threads | added TTFB p50 | added TTFB p99 | CPU/stream | new conns (client, upstream) |")
	fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	ms := medians(rep.Results)
	for _, r := range ms {
		threads := "—"
		if r.Threads > 0 {
			threads = fmt.Sprint(r.Threads)
		}
		fmt.Fprintf(w, "| %d | %s | %.0f | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d, %d |\n",
			r.Concurrency, r.Target, r.StreamsPerSec, r.Errors, optBytes(r.PeakRSS), optKB(r.RSSPerStream),
			opt(r.GoroutinesPerStream, func(v float64) string { return fmt.Sprintf("%.2f", v) }),
			optKB(r.HeapPerStream), optKB(r.StackPerStream), threads,
			opt(r.TTFBAddedP50, stats.FmtAdded), opt(r.TTFBAddedP99, stats.FmtAdded), opt(r.CPUPerStream, stats.FmtUS),
			r.ClientConns, r.UpstreamConns)
	}
	for _, r := range ms {
		if len(r.Stacks) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s at C=%d, goroutines per stream by where they wait (round %d):\n\n", r.Target, r.Concurrency, r.Round+1)
		for _, s := range r.Stacks {
			fmt.Fprintf(w, "- %.2f (%d): waits in %s", s.PerStream, s.Count, s.WaitsIn)
			if s.Own != "" && s.Own != s.WaitsIn {
				fmt.Fprintf(w, ", under %s", s.Own)
			}
			if s.Started != s.WaitsIn {
				fmt.Fprintf(w, "; started as %s", s.Started)
			}
			fmt.Fprintln(w)
		}
	}
	for _, r := range rep.Results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "\n%s c=%d round %d: %d errors, first: %s\n", r.Target, r.Concurrency, r.Round+1, r.Errors, r.FirstError)
		}
		if r.GaugeError != "" {
			fmt.Fprintf(w, "\n%s c=%d round %d: gauges: %s\n", r.Target, r.Concurrency, r.Round+1, r.GaugeError)
		}
		if r.Profiles != "" {
			fmt.Fprintf(w, "\n%s c=%d round %d: profiles in %s\n", r.Target, r.Concurrency, r.Round+1, r.Profiles)
		}
	}
}

func opt(v *float64, f func(float64) string) string {
	if v == nil {
		return "—"
	}
	return f(*v)
}

// optKB formats bytes in KB of 10³ bytes.
func optKB(v *float64) string {
	return opt(v, func(b float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", b/1e3), ".0") + " KB" })
}

// optBytes formats bytes in MB of 10⁶ bytes.
func optBytes(v *int64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f MB", float64(*v)/1e6)
}
