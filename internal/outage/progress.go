package outage

import (
	"sync/atomic"
	"time"
)

// Progress is how a run goes, as Options.Progress is told it.
type Progress struct {
	// Elapsed is the time since the run started; Duration its length.
	Elapsed, Duration time.Duration
	// Phase is "before the storm", "storm" or "after the storm".
	Phase string
	// Clients are the clients' requests ended so far, in Clients order.
	Clients []ClientProgress
}

// ClientProgress is one client's requests ended so far.
type ClientProgress struct {
	Client Client
	// Ended are the requests that have ended; Failed those of them that
	// failed.
	Ended, Failed int64
}

// counts are a client's requests ended so far.
type counts struct{ ended, failed atomic.Int64 }

func (c *counts) add(failed bool) {
	c.ended.Add(1)
	if failed {
		c.failed.Add(1)
	}
}

// phase names the part of the run at elapsed.
func (o Options) phase(elapsed time.Duration) string {
	switch {
	case elapsed < o.StormStart:
		return "before the storm"
	case elapsed < o.stormEnd():
		return "storm"
	}
	return "after the storm"
}

// reportProgress calls o.Progress every o.ProgressEvery until the function
// it returns is called.
func reportProgress(t0 time.Time, o Options, rigs []*rig) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				o.Progress(o.progressAt(time.Since(t0), rigs))
			}
		}
	}()
	return func() { close(done); <-ended }
}

func (o Options) progressAt(elapsed time.Duration, rigs []*rig) Progress {
	p := Progress{Elapsed: elapsed, Duration: o.Duration, Phase: o.phase(elapsed)}
	for _, r := range rigs {
		p.Clients = append(p.Clients, ClientProgress{Client: r.kind, Ended: r.counts.ended.Load(), Failed: r.counts.failed.Load()})
	}
	return p
}
