package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/bench/internal/proc"
	"github.com/fuseboxhq/fusebox/bench/internal/stats"
)

// cellSpec says how a cell runs: c streams held open against one gateway.
// The streams start spread over ramp (the i-th at i·ramp/c), so that they
// are out of phase once each has restarted; the cell is measured for
// duration after the ramp.
type cellSpec struct {
	c              int
	round          int
	ramp, duration time.Duration
	settle         time.Duration // a pause before the cell, for the last one's sockets to go
	profileDir     string        // "": no profiles
	roots          []string      // source roots, to shorten paths in stacks
}

// sample is one reading of the gateway in the middle of a cell.
type sample struct {
	active  int64 // the client's streams in flight
	threads int
	g       gauges
	gErr    error
}

// runCell starts a fresh upstream and a fresh gateway, holds c streams
// through it and measures it, then stops both: no cell inherits another's
// sockets, heap or connection pools.
func runCell(ctx context.Context, e *env, st starter, cs cellSpec) (Result, error) {
	r := Result{Target: st.name, Concurrency: cs.c, Round: cs.round}
	if !sleepUntil(ctx, time.Now().Add(cs.settle)) {
		return r, ctx.Err()
	}
	up, err := startUpstreamChild(ctx, e.self, e.tmp, e.spec, e.client)
	if err != nil {
		return r, err
	}
	defer up.stop()
	e.up = up
	g, err := st.start(ctx)
	if err != nil {
		return r, err
	}
	defer g.stop()
	r.GaugesFrom = g.gauges.from()
	var idle sample
	if g.pid() != 0 {
		idle = readSample(ctx, g, nil)
		status, err := proc.ReadStatus(g.pid())
		if err != nil {
			return r, err
		}
		r.IdleRSS = &status.RSS
	}
	w, err := measure(ctx, e, g, cs, &r)
	if err != nil {
		return r, err
	}
	r.tally(w.records, w.from, w.to, e.spec)
	if r.Streams == 0 {
		return r, fmt.Errorf("%s c=%d: no stream completed in the measured window: %s", st.name, cs.c, r.FirstError)
	}
	if g.pid() != 0 {
		r.PeakRSS = &w.peak
		r.RSSPerStream = ptr(float64(w.peak-*r.IdleRSS) / float64(cs.c))
		r.CPUPerStream = ptr(float64(w.cpu) / float64(time.Microsecond) / float64(r.Streams))
		r.perStream(idle, w.samples)
	}
	return r, nil
}

// window is what measure saw of a cell.
type window struct {
	from, to time.Duration // the measured window, since the load began
	cpu      time.Duration // the gateway's CPU time in the window
	peak     int64         // the gateway's peak RSS
	samples  []sample
	records  []record
}

// measure runs the load through g for the ramp and the window, reading
// the gateway as it goes, and profiles it after the window (into r).
// The deferred functions complete w as it is returned.
func measure(ctx context.Context, e *env, g *gateway, cs cellSpec, r *Result) (w window, err error) {
	pid := g.pid()
	var sampler *proc.Sampler
	if pid != 0 {
		sampler = proc.SampleRSS(pid, 100*time.Millisecond)
		defer func() { w.peak = max(w.peak, sampler.Finish()) }()
	}
	l := &load{addr: g.addr, req: httpRequest(g.addr, chatRequest(g.model, e.spec.prompt)), spec: e.spec, began: time.Now()}
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan []record, 1)
	go func() { done <- l.run(lctx, cs.c, cs.ramp) }()
	defer func() {
		cancel()
		w.records = <-done
	}()
	at := func(d time.Duration) bool { return sleepUntil(ctx, l.began.Add(cs.ramp+d)) }

	if !at(0) {
		return w, ctx.Err()
	}
	w.from, w.cpu = time.Since(l.began), -cpuOf(pid)
	conns0, dials0 := e.up.conns(), l.dials.Load()
	cpuProfile := startCPUProfile(ctx, g, cs)
	for i := 1; i <= 3; i++ {
		if !at(time.Duration(i) * cs.duration / 4) {
			return w, ctx.Err()
		}
		if pid == 0 {
			w.samples = append(w.samples, sample{active: l.active.Load()})
		} else {
			w.samples = append(w.samples, readSample(ctx, g, &l.active))
		}
	}
	if !at(cs.duration) {
		return w, ctx.Err()
	}
	w.to, w.cpu = time.Since(l.began), w.cpu+cpuOf(pid)
	if err := <-cpuProfile; err != nil {
		return w, fmt.Errorf("%s: CPU profile: %v", g.name, err)
	}
	r.UpstreamConns, r.ClientConns = e.up.conns()-conns0, l.dials.Load()-dials0
	if pid == 0 {
		return w, nil
	}
	end, err := proc.ReadStatus(pid)
	if err != nil {
		return w, fmt.Errorf("%s c=%d: the gateway is gone: %v", g.name, cs.c, err)
	}
	w.peak = end.HWM
	// Still under load, but after the window: walking every stack and
	// forcing a GC cost the gateway CPU time it is not measured for.
	return w, profile(ctx, g, cs, r)
}

// readSample reads the gateway's gauges and threads, and the streams in
// flight (active nil: none, idle).
func readSample(ctx context.Context, g *gateway, active interface{ Load() int64 }) sample {
	var s sample
	if active != nil {
		s.active = active.Load()
	}
	if st, err := proc.ReadStatus(g.pid()); err == nil {
		s.threads = st.Threads
	}
	if g.gauges.from() != "" {
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s.g, s.gErr = g.gauges.read(gctx)
		cancel()
	} else {
		s.gErr = fmt.Errorf("%s serves neither pprof nor metrics", g.name)
	}
	return s
}

// profile saves the gateway's profiles if asked, and keeps its busiest
// goroutine stacks in r.
func profile(ctx context.Context, g *gateway, cs cellSpec, r *Result) error {
	if g.gauges.pprof == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if cs.profileDir != "" {
		prefix := g.name + "-c" + strconv.Itoa(cs.c) + "-r" + strconv.Itoa(cs.round)
		if err := g.gauges.saveProfiles(ctx, cs.profileDir, prefix); err != nil {
			return fmt.Errorf("%s: profiles: %v", g.name, err)
		}
		r.Profiles = filepath.Join(cs.profileDir, prefix+"-*")
	}
	groups, err := g.gauges.goroutineGroups(ctx, cs.roots)
	if err != nil {
		return err
	}
	for _, gr := range groups {
		if gr.count*10 < cs.c { // fewer than one in ten streams: not per stream
			break
		}
		waits, own, started := gr.where()
		r.Stacks = append(r.Stacks, Stack{Count: gr.count, PerStream: float64(gr.count) / float64(cs.c),
			WaitsIn: waits, Own: own, Started: started})
	}
	return nil
}

// startCPUProfile asks the gateway for a CPU profile of the middle half
// of the window, if profiles are to be saved, and sends the outcome.
func startCPUProfile(ctx context.Context, g *gateway, cs cellSpec) <-chan error {
	done := make(chan error, 1)
	if cs.profileDir == "" || g.gauges.pprof == "" {
		done <- nil
		return done
	}
	secs := max(1, int(cs.duration/2/time.Second))
	file := filepath.Join(cs.profileDir, g.name+"-c"+strconv.Itoa(cs.c)+"-r"+strconv.Itoa(cs.round)+"-cpu.pb.gz")
	go func() {
		if !sleepUntil(ctx, time.Now().Add(cs.duration/4)) {
			done <- ctx.Err()
			return
		}
		done <- g.gauges.save(ctx, "profile?seconds="+strconv.Itoa(secs), file)
	}()
	return done
}

// tally fills the stream counts and TTFB from the records: streams that
// ended in [from, to) count, and for the TTFB those that also began in it.
func (r *Result) tally(records []record, from, to time.Duration, spec streamSpec) {
	var ttfb, length []time.Duration
	for _, rec := range records {
		if rec.err != nil {
			r.ErrorsAll++
		}
		if rec.end < from || rec.end >= to {
			continue
		}
		if rec.err != nil {
			r.Errors++
			if r.FirstError == "" {
				r.FirstError = rec.err.Error()
			}
			continue
		}
		r.Streams++
		if rec.start >= from {
			ttfb = append(ttfb, rec.first-rec.start-spec.firstDelay)
			length = append(length, rec.end-rec.start-spec.length())
		}
	}
	r.Seconds = (to - from).Seconds()
	r.StreamsPerSec = float64(r.Streams) / r.Seconds
	if len(ttfb) > 0 {
		r.TTFBAddedP50, r.TTFBAddedP99 = ptr(stats.Percentile(ttfb, 0.50)), ptr(stats.Percentile(ttfb, 0.99))
		r.LengthAddedP50, r.LengthAddedP99 = ptr(stats.Percentile(length, 0.50)), ptr(stats.Percentile(length, 0.99))
	}
}

// perStream fills the per-stream gauges: each sample's growth over idle
// divided by the streams in flight then, the median of the samples.
func (r *Result) perStream(idle sample, samples []sample) {
	if idle.gErr != nil {
		r.GaugeError = idle.gErr.Error()
	}
	var gor, heap, stack, threads []float64
	for _, s := range samples {
		threads = append(threads, float64(s.threads))
		if s.gErr != nil {
			r.GaugeError = s.gErr.Error()
			continue
		}
		if idle.gErr != nil || s.active == 0 {
			continue
		}
		n := float64(s.active)
		gor = append(gor, float64(s.g.goroutines-idle.g.goroutines)/n)
		heap = append(heap, float64(s.g.heapInuse-idle.g.heapInuse)/n)
		stack = append(stack, float64(s.g.stackInuse-idle.g.stackInuse)/n)
		r.Goroutines, r.HeapInuse = max(r.Goroutines, s.g.goroutines), max(r.HeapInuse, s.g.heapInuse)
	}
	r.Threads = int(stats.Median(threads))
	if len(gor) > 0 {
		r.GoroutinesPerStream, r.HeapPerStream, r.StackPerStream = ptr(stats.Median(gor)), ptr(stats.Median(heap)), ptr(stats.Median(stack))
	}
}

func cpuOf(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	d, _ := proc.CPUTime(pid)
	return d
}

// sleepUntil waits until t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func ptr[T any](v T) *T { return &v }
