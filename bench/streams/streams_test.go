package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/proc"
	"github.com/fuseboxhq/fusebox/bench/internal/stats"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// TestMain lets the test binary be the upstream and the floor, as the
// command is: run with their environment, it serves instead of testing.
func TestMain(m *testing.M) {
	if spec := os.Getenv(upstreamEnv); spec != "" {
		if err := serveUpstreamChild(spec); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if up := os.Getenv(floorEnv); up != "" {
		if err := serveFloorChild(up, os.Getenv(floorPprofEnv)); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// smokeOptions is a cell small and short enough for go test: 20 streams
// of 3 chunks 10 ms apart, measured for a second.
func smokeOptions() options {
	o := options{concurrency: []int{20}, targets: []string{"floor", "direct"}, rounds: 1,
		spec:     streamSpec{chunks: 3, firstDelay: 10 * time.Millisecond, delay: 10 * time.Millisecond},
		duration: time.Second, src: "."} // settle 0: each cell has its own upstream and gateway anyway
	o.ramp = o.spec.length()
	return o
}

// TestSmoke runs the scenario through the floor and directly, every part
// of it but fusebox (whose build takes longer than the test should; the
// same code runs it, and TestFuseboxConfig checks what it is given).
func TestSmoke(t *testing.T) {
	o := smokeOptions()
	rep, err := run(context.Background(), o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Errors != 0 || r.Streams == 0 || r.TTFBAddedP50 == nil {
			t.Errorf("%s: %d streams, %d errors (%s), TTFB %v", r.Target, r.Streams, r.Errors, r.FirstError, r.TTFBAddedP50)
		}
		if r.ClientConns != 0 {
			t.Errorf("%s: the client opened %d connections while measured; want 0 (keep-alive)", r.Target, r.ClientConns)
		}
	}
	floor := rep.Results[0]
	if floor.GaugesFrom != "pprof" || floor.GoroutinesPerStream == nil || *floor.GoroutinesPerStream < 1 ||
		floor.PeakRSS == nil || floor.CPUPerStream == nil || len(floor.Stacks) == 0 {
		t.Errorf("floor: gauges from %q (%s), goroutines/stream %v, peak RSS %v, CPU/stream %v, %d stacks",
			floor.GaugesFrom, floor.GaugeError, floor.GoroutinesPerStream, floor.PeakRSS, floor.CPUPerStream, len(floor.Stacks))
	}
	var b strings.Builder
	printMarkdown(&b, rep, 1)
	if !strings.Contains(b.String(), "| 20 | floor |") {
		t.Errorf("the table has no floor row:\n%s", b.String())
	}
}

// TestFuseboxConfig checks that fusebox accepts the configuration the
// scenario gives it.
func TestFuseboxConfig(t *testing.T) {
	cfg, err := config.Parse("streams.yaml", []byte(fuseboxConfig(8080, "http://127.0.0.1:9/v1")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Models) != 2 {
		t.Errorf("%d models, want 2 (fast, probe)", len(cfg.Models))
	}
}

func TestParseGoroutines(t *testing.T) {
	text := "goroutine profile: total 5\n" +
		"3 @ 0x1 0x2 0x3\n" +
		"#\t0x1\tinternal/poll.runtime_pollWait+0x84\t\t/usr/local/go/src/runtime/netpoll.go:351\n" +
		"#\t0x2\tgithub.com/fuseboxhq/fusebox/internal/h1.(*limitedReader).Read+0x4b\t/src/fb/internal/h1/transport.go:163\n" +
		"#\t0x3\tnet/http.(*conn).serve+0x68f\t\t/usr/local/go/src/net/http/server.go:2067\n" +
		"\n" +
		"2 @ 0x4\n" +
		"#\t0x4\tnet/http.(*connReader).backgroundRead+0x3d\t/usr/local/go/src/net/http/server.go:702\n"
	gs := parseGoroutines([]byte(text), []string{"/src/fb"})
	if len(gs) != 2 || gs[0].count != 3 || gs[1].count != 2 {
		t.Fatalf("got %+v", gs)
	}
	waits, own, started := gs[0].where()
	if waits != "github.com/fuseboxhq/fusebox/internal/h1.(*limitedReader).Read (internal/h1/transport.go:163)" ||
		own != waits || started != "net/http.(*conn).serve (net/http/server.go:2067)" {
		t.Errorf("where() = %q, %q, %q", waits, own, started)
	}
}

func TestScanValues(t *testing.T) {
	heap := "# HeapInuse = 4194304\n# Stack = 655360 / 655360\n"
	if v := scanValues([]byte(heap), "# ", " = ", "HeapInuse", "Stack"); v["HeapInuse"] != 4194304 || v["Stack"] != 655360 {
		t.Errorf("pprof heap: got %v", v)
	}
	metrics := "# HELP go_goroutines x\ngo_goroutines 2011\ngo_memstats_heap_inuse_bytes 1.2345678e+07\n"
	if v := scanValues([]byte(metrics), "", " ", "go_goroutines", "go_memstats_heap_inuse_bytes"); v["go_goroutines"] != 2011 ||
		v["go_memstats_heap_inuse_bytes"] != 12345678 {
		t.Errorf("metrics: got %v", v)
	}
}

// BenchmarkFloorStream is one streamed answer of 3 chunks, 10 ms apart,
// through the floor, 20 at once; it reports the floor's CPU time per
// stream and the time to first content it adds. It is the scenario in
// miniature, so that the benchmark smoke run (-benchtime 100x) runs it.
func BenchmarkFloorStream(b *testing.B) {
	spec := streamSpec{chunks: 3, firstDelay: 10 * time.Millisecond, delay: 10 * time.Millisecond}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	e := &env{tmp: b.TempDir(), spec: spec, self: self, client: &http.Client{Timeout: time.Minute}}
	if e.up, err = startUpstreamChild(ctx, self, e.tmp, spec, e.client); err != nil {
		b.Fatal(err)
	}
	defer e.up.stop()
	g, err := e.startFloor(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer g.stop()
	l := &load{addr: g.addr, req: httpRequest(g.addr, chatRequest(g.model, spec.prompt)), spec: spec, began: time.Now()}
	var mu sync.Mutex
	var ttfb []time.Duration
	cpu0, _ := proc.CPUTime(g.pid())
	b.SetParallelism(10) // 20 streams at once on two cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := newWorker(l)
		defer w.close()
		for pb.Next() {
			r := w.stream(ctx)
			if r.err != nil {
				b.Error(r.err)
				return
			}
			mu.Lock()
			ttfb = append(ttfb, r.first-r.start-spec.firstDelay)
			mu.Unlock()
		}
	})
	b.StopTimer()
	cpu1, _ := proc.CPUTime(g.pid())
	b.ReportMetric(float64(cpu1-cpu0)/float64(time.Microsecond)/float64(b.N), "floor-cpu-µs/stream")
	if len(ttfb) > 0 {
		b.ReportMetric(stats.Percentile(ttfb, 0.5), "added-ttfb-p50-µs")
	}
}
