package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

// The parts of the load runs' JSON reports the gate reads: gatewayload's
// Report and streams' Report (see bench/gatewayload and bench/streams).
type overheadReport struct {
	Results []overheadCellResult `json:"results"`
}

type overheadCellResult struct {
	Mode        string   `json:"mode"`
	Concurrency int      `json:"concurrency"`
	Target      string   `json:"target"`
	Errors      int64    `json:"errors"`
	RPS         float64  `json:"requests_per_second"`
	AddedP50    *float64 `json:"added_p50_us"`
	AddedP99    *float64 `json:"added_p99_us"`
	CPUPerReq   *float64 `json:"cpu_per_request_us"`
}

type streamsReport struct {
	Results []struct {
		Target       string   `json:"target"`
		Concurrency  int      `json:"concurrency"`
		Errors       int      `json:"errors"`
		RSSPerStream *float64 `json:"rss_per_stream_bytes"`
		TTFBAddedP99 *float64 `json:"ttfb_added_p99_us"`
		CPUPerStream *float64 `json:"cpu_per_stream_us"`
	} `json:"results"`
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// run is what one round measured of one binary.
type run struct {
	overhead *overheadReport // nil: not measured
	streams  *streamsReport
}

// class is the threshold a metric is held to.
type class int

const (
	throughput class = iota
	cpu
	latency
	memory
)

// metric is one figure the gate compares.
type metric struct {
	name   string
	class  class
	higher bool // higher is better (throughput); else lower is
	unit   string
	get    func(run) (float64, bool)
}

// overheadCell reads a figure of gatewayload's fusebox cell of a mode and
// concurrency; f picks it.
func overheadCell(mode string, c int, f func(added50, added99, rps, cpu *float64) *float64) func(run) (float64, bool) {
	return targetCell("fusebox", mode, c, f)
}

// targetCell reads a figure of gatewayload's cell of target (fusebox, or
// floor: the bare reverse proxy) of a mode and concurrency.
func targetCell(target, mode string, c int, f func(added50, added99, rps, cpu *float64) *float64) func(run) (float64, bool) {
	return func(r run) (float64, bool) {
		if r.overhead == nil {
			return 0, false
		}
		for _, x := range r.overhead.Results {
			if x.Target == target && x.Mode == mode && x.Concurrency == c {
				rps := x.RPS
				if v := f(x.AddedP50, x.AddedP99, &rps, x.CPUPerReq); v != nil {
					return *v, true
				}
			}
		}
		return 0, false
	}
}

// streamsCell reads a figure of the streams run's fusebox cell.
func streamsCell(f func(rss, ttfb99, cpu *float64) *float64) func(run) (float64, bool) {
	return func(r run) (float64, bool) {
		if r.streams == nil {
			return 0, false
		}
		for _, x := range r.streams.Results {
			if x.Target == "fusebox" {
				if v := f(x.RSSPerStream, x.TTFBAddedP99, x.CPUPerStream); v != nil {
					return *v, true
				}
			}
		}
		return 0, false
	}
}

// metrics lists what the gate compares; c is the streams scenario's
// concurrency, for the names.
func metrics(c int) []metric {
	added50 := func(a, _, _, _ *float64) *float64 { return a }
	added99 := func(_, a, _, _ *float64) *float64 { return a }
	rps := func(_, _, r, _ *float64) *float64 { return r }
	cpuReq := func(_, _, _, c *float64) *float64 { return c }
	var ms []metric
	for _, mode := range []string{"json", "stream"} {
		ms = append(ms,
			metric{mode + " c=1 added p50", latency, false, "µs", overheadCell(mode, 1, added50)},
			metric{mode + " c=1 added p99", latency, false, "µs", overheadCell(mode, 1, added99)},
			metric{mode + " c=50 req/s", throughput, true, "req/s", overheadCell(mode, 50, rps)},
			metric{mode + " c=50 CPU/request", cpu, false, "µs", overheadCell(mode, 50, cpuReq)},
		)
	}
	s := fmt.Sprintf("streams c=%d ", c)
	return append(ms,
		metric{s + "RSS/stream", memory, false, "KB", streamsCell(func(rss, _, _ *float64) *float64 {
			if rss == nil {
				return nil
			}
			return ptr(*rss / 1e3)
		})},
		metric{s + "added TTFB p99", latency, false, "µs", streamsCell(func(_, t, _ *float64) *float64 { return t })},
		metric{s + "CPU/stream", cpu, false, "µs", streamsCell(func(_, _, c *float64) *float64 { return c })},
	)
}

// thresholds are the worst ratios allowed, as fractions (0.05: 5 %).
type thresholds map[class]float64

// row is one metric's comparison.
//
// The rounds are paired: round i measured the base and the current binary
// one after the other, in alternating order, so that what loads the
// machine in that round loads both. The ratio is the median of the
// rounds' ratios, and lo and hi their least and greatest: the spread the
// load leaves. A figure is worse only when the whole spread is past the
// threshold (every round says so), so that a loaded machine, which
// widens the spread, makes the gate pass undecided rather than fail.
type row struct {
	m            metric
	base, cur    []float64 // per round
	ratios       []float64 // per round measured on both: current / base
	baseM, curM  float64   // medians
	ratio        float64   // median of ratios; NaN when not comparable
	lo, hi       float64   // least and greatest of ratios
	limit        float64
	worse, known bool
}

// compare computes each metric's medians, per-round ratios and verdict.
func compare(ms []metric, base, cur []run, th thresholds) []row {
	var rows []row
	for _, m := range ms {
		r := row{m: m, limit: th[m.class], ratio: math.NaN(), lo: math.NaN(), hi: math.NaN()}
		for i := range max(len(base), len(cur)) {
			b, bok := get(m, base, i)
			c, cok := get(m, cur, i)
			if bok {
				r.base = append(r.base, b)
			}
			if cok {
				r.cur = append(r.cur, c)
			}
			if bok && cok && b > 0 && c >= 0 {
				r.ratios = append(r.ratios, c/b)
			}
		}
		if len(r.base) > 0 && len(r.cur) > 0 {
			r.baseM, r.curM = median(r.base), median(r.cur)
		}
		if len(r.ratios) > 0 {
			r.known = true
			r.ratio = median(r.ratios)
			r.lo, r.hi = slices.Min(r.ratios), slices.Max(r.ratios)
			if m.higher {
				r.worse = r.hi < 1-r.limit
			} else {
				r.worse = r.lo > 1+r.limit
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// get reads metric m of round i of runs.
func get(m metric, runs []run, i int) (float64, bool) {
	if i >= len(runs) {
		return 0, false
	}
	return m.get(runs[i])
}

// median returns the median of xs without changing it; NaN for none
// (a figure not measured).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}

func ptr[T any](v T) *T { return &v }

// floorRatio is a figure of Fusebox against the bare reverse proxy of the
// same round (gatewayload's floor), for the record: not gated.
type floorRatio struct {
	name           string
	fusebox, floor func(run) (float64, bool)
}

// floorRatios lists the figures the issue holds against the floor: CPU
// per request at c=50 and added p50 at c=1, json and stream.
func floorRatios() []floorRatio {
	added50 := func(a, _, _, _ *float64) *float64 { return a }
	cpuReq := func(_, _, _, c *float64) *float64 { return c }
	var fs []floorRatio
	for _, mode := range []string{"json", "stream"} {
		fs = append(fs,
			floorRatio{mode + " c=50 CPU/request", targetCell("fusebox", mode, 50, cpuReq), targetCell("floor", mode, 50, cpuReq)},
			floorRatio{mode + " c=1 added p50", targetCell("fusebox", mode, 1, added50), targetCell("floor", mode, 1, added50)})
	}
	return fs
}

// ratios returns, per round of runs measured for both, fusebox / floor.
func (f floorRatio) ratios(runs []run) []float64 {
	var rs []float64
	for _, r := range runs {
		a, aok := f.fusebox(r)
		b, bok := f.floor(r)
		if aok && bok && b > 0 {
			rs = append(rs, a/b)
		}
	}
	return rs
}
