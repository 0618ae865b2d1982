package main

import (
	"fmt"
	"io"

	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

// addDeltas fills the Added* fields of every gateway cell from the direct
// cell of the same mode and concurrency.
func addDeltas(rs []Result) {
	for i := range rs {
		r := &rs[i]
		if r.Target == "direct" {
			continue
		}
		d := find(rs, r.Mode, r.Concurrency, "direct")
		if d == nil {
			continue
		}
		p50, p99 := r.P50-d.P50, r.P99-d.P99
		r.AddedP50, r.AddedP99 = &p50, &p99
		if r.TTFBP50 != nil && d.TTFBP50 != nil {
			t := *r.TTFBP50 - *d.TTFBP50
			r.AddedTTFB = &t
		}
	}
}

func find(rs []Result, mode string, conc int, target string) *Result {
	for i := range rs {
		if rs[i].Mode == mode && rs[i].Concurrency == conc && rs[i].Target == target {
			return &rs[i]
		}
	}
	return nil
}

// Check is one of the targets for Fusebox, as measured.
type Check struct {
	Name     string `json:"name"`
	Measured string `json:"measured"`
	Pass     bool   `json:"pass"`
}

// checks compares the Fusebox cells with the targets of the overhead
// benchmark: at concurrency 1, added p50 ≤ 100 µs and added p99 ≤ 1 ms; at
// the highest concurrency, at least 5× Portkey's throughput; peak RSS ≤ 50
// MB; streamed time to first byte added ≤ 1 ms.
func checks(rs []Result) []Check {
	var cs []Check
	maxConc := 0
	for _, r := range rs {
		maxConc = max(maxConc, r.Concurrency)
	}
	var peak int64
	for _, r := range rs {
		if r.Target != "fusebox" || r.AddedP50 == nil {
			continue
		}
		cell := fmt.Sprintf("%s c=%d", r.Mode, r.Concurrency)
		if r.Concurrency == 1 {
			cs = append(cs,
				Check{cell + ": added p50 ≤ 100 µs", stats.FmtAdded(*r.AddedP50), *r.AddedP50 <= 100},
				Check{cell + ": added p99 ≤ 1 ms", stats.FmtAdded(*r.AddedP99), *r.AddedP99 <= 1000})
		}
		if r.AddedTTFB != nil {
			cs = append(cs, Check{cell + ": added TTFB p50 ≤ 1 ms", stats.FmtAdded(*r.AddedTTFB), *r.AddedTTFB <= 1000})
		}
		if p := find(rs, r.Mode, r.Concurrency, "portkey"); p != nil && r.Concurrency == maxConc && maxConc > 1 {
			ratio := r.RPS / p.RPS
			cs = append(cs, Check{cell + ": throughput ≥ 5× Portkey", fmt.Sprintf("%.1f× (%.0f vs %.0f req/s)", ratio, r.RPS, p.RPS), ratio >= 5})
		}
		if r.PeakRSS != nil {
			peak = max(peak, *r.PeakRSS)
		}
	}
	if peak > 0 {
		cs = append(cs, Check{"peak RSS ≤ 50 MB (all cells)", fmtMB(peak), peak <= 50e6})
	}
	return cs
}

func printMarkdown(w io.Writer, rep *Report) {
	where := "in the load generator's process"
	if rep.Upstream == "process" {
		where = "in a process of its own"
	}
	fmt.Fprintf(w, "%d CPUs, GOMAXPROCS %d, %s; upstream %s; load average %s before, %s after; ",
		rep.CPUs, rep.GOMAXPROCS, rep.GoVersion, where, rep.LoadBefore, rep.LoadAfter)
	if rep.RequestsPer > 0 {
		fmt.Fprintf(w, "%d requests per cell after %s warm-up.\n", rep.RequestsPer, rep.Warmup)
	} else {
		fmt.Fprintf(w, "%s per cell after %s warm-up.\n", rep.Duration, rep.Warmup)
	}
	fmt.Fprintf(w, "Portkey: %s", rep.Portkey)
	if rep.NodeVersion != "" {
		fmt.Fprintf(w, ", Node.js %s", rep.NodeVersion)
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintln(w, "| mode | c | target | req/s | p50 | p99 | added p50 | added p99 | TTFB p50 | added TTFB p50 | CPU/req | peak RSS | errors | upstream conns |")
	fmt.Fprintln(w, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rep.Results {
		fmt.Fprintf(w, "| %s | %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |\n",
			r.Mode, r.Concurrency, r.Target, r.RPS, stats.FmtUS(r.P50), stats.FmtUS(r.P99),
			opt(r.AddedP50, stats.FmtAdded), opt(r.AddedP99, stats.FmtAdded), opt(r.TTFBP50, stats.FmtUS), opt(r.AddedTTFB, stats.FmtAdded),
			opt(r.CPUPerReq, stats.FmtUS), optMB(r.PeakRSS), r.Errors, r.UpstreamConns)
	}
	if len(rep.Checks) > 0 {
		fmt.Fprintln(w, "\n| target (Fusebox) | measured | met |")
		fmt.Fprintln(w, "| --- | ---: | --- |")
		for _, c := range rep.Checks {
			fmt.Fprintf(w, "| %s | %s | %s |\n", c.Name, c.Measured, map[bool]string{true: "yes", false: "**no**"}[c.Pass])
		}
	}
	for _, r := range rep.Results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "\n%s %s c=%d: first error: %s\n", r.Target, r.Mode, r.Concurrency, r.FirstError)
		}
	}
}

// fmtMB formats bytes in MB of 10⁶ bytes.
func fmtMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func opt(v *float64, f func(float64) string) string {
	if v == nil {
		return "—"
	}
	return f(*v)
}

func optMB(v *int64) string {
	if v == nil {
		return "—"
	}
	return fmtMB(*v)
}
