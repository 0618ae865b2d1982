package main

import (
	"encoding/json"
	"math"
	"testing"
)

// overheadJSON and streamsJSON are cut-down reports of gatewayload and
// streams, as the gate reads them.
const overheadJSON = `{"results": [
  {"mode": "json", "concurrency": 1, "target": "direct", "requests_per_second": 9000},
  {"mode": "json", "concurrency": 1, "target": "fusebox", "requests_per_second": 2500, "added_p50_us": 300, "added_p99_us": 700, "cpu_per_request_us": 250},
  {"mode": "json", "concurrency": 50, "target": "fusebox", "requests_per_second": 6000, "added_p50_us": 5000, "added_p99_us": 14000, "cpu_per_request_us": 140, "errors": 1},
  {"mode": "stream", "concurrency": 1, "target": "fusebox", "requests_per_second": 2000, "added_p50_us": 340, "added_p99_us": 900, "cpu_per_request_us": 310},
  {"mode": "stream", "concurrency": 50, "target": "fusebox", "requests_per_second": 5000, "added_p50_us": 4500, "added_p99_us": 8000, "cpu_per_request_us": 135}
]}`

const streamsJSON = `{"results": [
  {"target": "fusebox", "concurrency": 1000, "errors": 0, "rss_per_stream_bytes": 96000, "ttfb_added_p99_us": 13000, "cpu_per_stream_us": 1800}
]}`

func parsedRun(t *testing.T, scale float64) run {
	t.Helper()
	var r run
	r.overhead, r.streams = &overheadReport{}, &streamsReport{}
	if err := json.Unmarshal([]byte(overheadJSON), r.overhead); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(streamsJSON), r.streams); err != nil {
		t.Fatal(err)
	}
	for i := range r.overhead.Results {
		x := &r.overhead.Results[i]
		x.RPS *= scale
	}
	return r
}

func TestMetricsRead(t *testing.T) {
	r := parsedRun(t, 1)
	want := map[string]float64{
		"json c=1 added p50": 300, "json c=1 added p99": 700, "json c=50 req/s": 6000, "json c=50 CPU/request": 140,
		"stream c=1 added p50": 340, "stream c=50 req/s": 5000, "stream c=50 CPU/request": 135,
		"streams c=1000 RSS/stream": 96, "streams c=1000 added TTFB p99": 13000, "streams c=1000 CPU/stream": 1800,
	}
	for _, m := range metrics(1000) {
		got, ok := m.get(r)
		if w, listed := want[m.name]; listed && (!ok || got != w) {
			t.Errorf("%s = %v, %v; want %v", m.name, got, ok, w)
		}
	}
	if n := errorCount([]run{r, r}); n != 2 {
		t.Errorf("errorCount = %d, want 2", n)
	}
}

func TestCompare(t *testing.T) {
	th := thresholds{throughput: 0.05, cpu: 0.05, latency: 0.10, memory: 0.10}
	lower := metric{name: "cpu", class: cpu}
	higher := metric{name: "rps", class: throughput, higher: true}
	for _, tc := range []struct {
		m         metric
		base, cur []float64
		wantRatio float64
		wantWorse bool
	}{
		{lower, []float64{100, 100, 100}, []float64{104, 104, 104}, 1.04, false},
		{lower, []float64{100, 100, 100}, []float64{106, 106, 106}, 1.06, true},
		{lower, []float64{100, 90, 200}, []float64{101, 300, 99}, 1.01, false}, // the median of the rounds' ratios, not of means
		// One round within the threshold: the spread crosses it, the
		// verdict is undecided, and the gate does not fail.
		{lower, []float64{100, 100, 100}, []float64{120, 120, 101}, 1.2, false},
		{lower, []float64{100, 200, 50}, []float64{107, 214, 54}, 1.07, true}, // paired: each round 1.07–1.08, however the load moved
		{higher, []float64{1000, 500, 1000}, []float64{800, 600, 900}, 0.9, false},
		{higher, []float64{1000, 1000}, []float64{960, 960}, 0.96, false},
		{higher, []float64{1000, 1000}, []float64{940, 940}, 0.94, true},
		{higher, []float64{1000}, []float64{2000}, 2, false},
		{lower, []float64{0}, []float64{10}, math.NaN(), false}, // a zero base is not comparable
	} {
		m := tc.m
		m.get = func(r run) (float64, bool) { return r.overhead.Results[0].RPS, true }
		mk := func(vs []float64) []run {
			var rs []run
			for _, v := range vs {
				rs = append(rs, run{overhead: &overheadReport{Results: []overheadCellResult{{RPS: v}}}})
			}
			return rs
		}
		rows := compare([]metric{m}, mk(tc.base), mk(tc.cur), th)
		r := rows[0]
		if (math.IsNaN(tc.wantRatio) != math.IsNaN(r.ratio)) || (!math.IsNaN(tc.wantRatio) && math.Abs(r.ratio-tc.wantRatio) > 1e-9) ||
			r.worse != tc.wantWorse {
			t.Errorf("%s %v → %v: ratio %v, worse %v; want %v, %v", m.name, tc.base, tc.cur, r.ratio, r.worse, tc.wantRatio, tc.wantWorse)
		}
	}
}

func TestParseFlags(t *testing.T) {
	if _, err := parseFlags(nil); err == nil {
		t.Error("no -base: no error")
	}
	o, err := parseFlags([]string{"-base", "HEAD~1", "-throughput", "3", "-scenarios", "streams"})
	if err != nil {
		t.Fatal(err)
	}
	if o.th[throughput] != 0.03 || o.th[cpu] != 0.05 || len(o.scenarios) != 1 {
		t.Errorf("got %+v", o)
	}
}

// The floor's figures are read from its own cells, round by round.
func TestFloorRatios(t *testing.T) {
	cell := func(target string, cpu float64) overheadCellResult {
		return overheadCellResult{Mode: "json", Concurrency: 50, Target: target, CPUPerReq: ptr(cpu)}
	}
	runs := []run{
		{overhead: &overheadReport{Results: []overheadCellResult{cell("fusebox", 60), cell("floor", 120)}}},
		{overhead: &overheadReport{Results: []overheadCellResult{cell("fusebox", 90), cell("floor", 100)}}},
		{overhead: &overheadReport{Results: []overheadCellResult{cell("fusebox", 70)}}}, // no floor: not a ratio
	}
	for _, f := range floorRatios() {
		got := f.ratios(runs)
		if f.name == "json c=50 CPU/request" {
			if len(got) != 2 || got[0] != 0.5 || got[1] != 0.9 {
				t.Errorf("%s: %v, want [0.5 0.9]", f.name, got)
			}
		} else if len(got) != 0 {
			t.Errorf("%s: %v, want none (not in the reports)", f.name, got)
		}
	}
}
