package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/limit"
)

// Options configure a Runner. Zero values are the documented defaults.
type Options struct {
	// Handler serves each line: the gateway's handler. Required.
	Handler http.Handler
	// Prepare, if set, decorates each line's request before it is served
	// (the client key, say, in Authorization).
	Prepare func(*http.Request)
	// BatchID names a new batch; it seeds the lines' idempotency keys. A
	// resumed batch keeps the id its journal holds. "": a random one.
	BatchID string
	// Endpoint, if set, is the only url a line may have.
	Endpoint string
	// Concurrency is the most lines sent at once; throttles lower it and
	// successes raise it back. 0: 64.
	Concurrency int
	// MaxCost, if positive, is the most the batch may spend in USD, counted
	// across resumed runs: a line is sent only when Estimate(line) fits
	// beside what is spent and reserved.
	MaxCost float64
	// Estimate returns a line's most likely cost, reserved before it is
	// sent. nil: the most any line has cost so far in this run (0 before
	// the first answer, so the cap may be passed by the first lines in
	// flight).
	Estimate func(*Line) float64
	// LineDeadline is how long a line is retried through outages before it
	// is dead-lettered; throttles do not end it. 0: 15 minutes.
	LineDeadline time.Duration
	// MaxLineBytes is the longest input line; a longer one is
	// dead-lettered. 0: 8 MiB.
	MaxLineBytes int
	// MaxAnswerBytes is the largest answer kept; a larger one
	// dead-letters its line. 0: 64 MiB.
	MaxAnswerBytes int
	// Lines, if known, is about how many lines the input has: the table of
	// custom_ids is made that size at once rather than grown (less memory
	// at the peak). 0: unknown.
	Lines int64
	// FlushEvery is how often finished lines are made durable. 0: 1s.
	FlushEvery time.Duration
	// Room, if set, bounds the bytes the output and dead-letter files may
	// take: each line's result is written only if Room grows to it (else
	// the run stops, StoppedStorage, and the line is not written), and
	// lines are sent only while those in flight could each write the
	// largest result so far into what is left (roomGate). nil: unbounded.
	Room Room
	// Clock times waits and flushes. nil: the system clock.
	Clock clock.Clock
}

// Stop reasons, in Summary.Stopped.
const (
	StoppedMaxCost  = "max_cost"      // the cost cap was reached
	StoppedBudget   = "budget"        // the client's budget in the gateway is spent
	StoppedAuth     = "auth"          // the gateway refused the client key
	StoppedCanceled = "canceled"      // the context ended
	StoppedByCaller = "stopped"       // Stop was called
	StoppedError    = "io_error"      // the output could not be written
	StoppedStorage  = "storage_limit" // Options.Room has no room for the next line
)

// Summary is what a run did.
type Summary struct {
	// BatchID is the batch's id (the journal's, when resumed).
	BatchID string
	// Read counts the input lines this run read; Skipped those of them
	// that an earlier run had finished.
	Read, Skipped int64
	// OK and Dead count the lines this run finished, answered and
	// dead-lettered.
	OK, Dead int64
	// TotalOK, TotalDead and Cost are the batch's, across runs.
	TotalOK, TotalDead int64
	Cost               float64
	// TokensIn and TokensOut are this run's usage.
	TokensIn, TokensOut int64
	// Stopped is why the run stopped taking lines before the input's end
	// (a Stopped… constant), and Reason says it for people; "" when the
	// input was read to its end.
	Stopped, Reason string
}

// Runner runs one batch. Its methods are safe for concurrent use; Run is
// called once.
type Runner struct {
	o       Options
	clk     clock.Clock
	batchID string
	gate    *limit.Bulkhead // the lines being sent
	aimd    *limit.Adaptive
	cap     *costCap
	room    *roomGate
	sink    *sink
	p       progress

	// stopCtx ends waits (not sends) when the run stops taking lines.
	stopCtx  context.Context
	stopNow  context.CancelFunc
	stopOnce sync.Once
	// mu guards stopped and reason.
	mu      sync.Mutex
	stopped string
	reason  string
}

// New returns a Runner, or an error naming a bad option.
func New(o Options) (*Runner, error) {
	switch {
	case o.Handler == nil:
		return nil, errors.New("batch: Options.Handler is nil")
	case o.Concurrency < 0, o.Lines < 0, o.MaxCost < 0, o.LineDeadline < 0, o.MaxLineBytes < 0, o.MaxAnswerBytes < 0, o.FlushEvery < 0:
		return nil, errors.New("batch: an option is negative")
	}
	o.Concurrency = orInt(o.Concurrency, 64)
	o.MaxLineBytes = orInt(o.MaxLineBytes, 8<<20)
	o.MaxAnswerBytes = orInt(o.MaxAnswerBytes, 64<<20)
	if o.LineDeadline == 0 {
		o.LineDeadline = 15 * time.Minute
	}
	if o.FlushEvery == 0 {
		o.FlushEvery = time.Second
	}
	r := &Runner{o: o, clk: clock.Or(o.Clock), room: newRoomGate(o.Room)}
	r.gate, _ = limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: o.Concurrency, Clock: o.Clock})
	var err error
	r.aimd, err = limit.NewAdaptive(limit.AdaptiveSettings{Max: o.Concurrency, Target: r.gate, Clock: o.Clock})
	if err != nil {
		return nil, err
	}
	r.stopCtx, r.stopNow = context.WithCancel(context.Background())
	return r, nil
}

func orInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// Stop makes the run take no more lines: lines being sent finish, lines
// waiting to be retried are left for a later run. Run then returns.
func (r *Runner) Stop() { r.halt(StoppedByCaller, "stopped") }

// halt stops taking lines, for the first reason given.
func (r *Runner) halt(why, reason string) {
	r.mu.Lock()
	if r.stopped == "" {
		r.stopped, r.reason = why, reason
	}
	r.mu.Unlock()
	r.stopNow()
}

// Run reads the batch from in and runs it, writing to p's files; with a
// journal at p it resumes. It returns when every line read has finished or
// been left for a later run. The error is for what stops a batch from
// being run at all (its files); lines fail into the dead-letter file.
func (r *Runner) Run(ctx context.Context, in io.Reader, p Paths) (Summary, error) {
	defer r.stopNow()
	set := newKeySet(r.o.Lines)
	id := r.o.BatchID
	if id == "" {
		id = newBatchID()
	}
	var err error
	if r.sink, err = openSink(p, id, set); err != nil {
		return Summary{}, err
	}
	r.batchID = r.sink.j.batchID
	r.sink.useRoom(r.o.Room)
	r.cap = newCostCap(r.o.MaxCost, r.sink.cp.cost)
	r.p.resumed(r.sink.cp)
	flushed := r.flushLoop()
	stop := context.AfterFunc(ctx, func() { r.halt(StoppedCanceled, ctx.Err().Error()) })
	defer stop()
	var wg sync.WaitGroup
	r.feed(ctx, newLineReader(in, r.o.MaxLineBytes), set, &wg)
	wg.Wait()
	r.stopNow()
	<-flushed
	if err := r.sink.close(); err != nil {
		r.halt(StoppedError, err.Error())
		return r.summary(), err
	}
	return r.summary(), nil
}

// flushLoop makes lines durable every FlushEvery until the run stops
// taking lines; the returned channel is closed when it has.
func (r *Runner) flushLoop() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := r.clk.NewTimer(r.o.FlushEvery)
		defer t.Stop()
		for {
			select {
			case <-r.stopCtx.Done():
				return
			case <-t.C():
				if err := r.sink.flush(); err != nil {
					r.halt(StoppedError, err.Error())
					return
				}
				t.Reset(r.o.FlushEvery)
			}
		}
	}()
	return done
}

func newBatchID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "batch_" + hex.EncodeToString(b)
}

// BatchID returns the batch's id, once Run has opened its files.
func (r *Runner) BatchID() string { return r.batchID }

func (r *Runner) summary() Summary {
	cp := r.sink.totals()
	r.mu.Lock()
	defer r.mu.Unlock()
	return Summary{
		BatchID: r.batchID, Read: r.p.read.Load(), Skipped: r.p.skipped.Load(),
		OK: r.p.ok.Load(), Dead: r.p.dead.Load(), TotalOK: int64(cp.ok), TotalDead: int64(cp.failed),
		Cost: cp.cost, TokensIn: r.p.tokensIn.Load(), TokensOut: r.p.tokensOut.Load(),
		Stopped: r.stopped, Reason: r.reason,
	}
}
