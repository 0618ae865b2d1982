package batchapi

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/batch"
)

// run is a batch this process is running. Its fields are guarded by
// API.mu.
type run struct {
	owner, input string
	r            *batch.Runner // nil until the lines start
	expired      bool
	lost         bool // adopted by another replica: the run stops here
	expiry       clock.Timer
}

// update applies fn to the stored batch id and saves it.
func (a *API) update(id string, fn func(*Batch)) (Batch, error) {
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	b, ok, err := a.store.Get(id)
	if err == nil && !ok {
		err = errors.New("batchapi: batch " + id + " is gone from the store")
	}
	if err != nil {
		return Batch{}, err
	}
	fn(&b)
	return b, a.store.Put(b)
}

// admit saves a new batch and starts it, unless its owner has as many in
// progress as it may.
func (a *API) admit(b Batch) bool {
	a.mu.Lock()
	n := 0
	for _, r := range a.runs {
		if r.owner == b.Owner {
			n++
		}
	}
	if n >= a.o.MaxInProgress || a.closed {
		a.mu.Unlock()
		return false
	}
	rn := &run{owner: b.Owner, input: b.InputFileID}
	a.runs[b.ID] = rn
	a.mu.Unlock()
	if err := a.store.Put(b); err != nil {
		a.log.Error("batch not saved", "batch", b.ID, "error", err.Error())
		a.forget(b.ID)
		return false
	}
	a.start(b, rn)
	return true
}

// resume starts every batch the store has in progress; with an Adopter,
// those whose lease it can take (the others run elsewhere, or wait for
// their lease to end: adoptLoop takes them then). Each holds its room in
// its owner's limits, wherever it runs.
func (a *API) resume() error {
	all, err := a.store.List("")
	if err != nil {
		return err
	}
	ad := a.adopter()
	for _, b := range all {
		if !active(b.Status) {
			continue
		}
		a.restoreHold(b)
		if ad != nil {
			a.adoptBatch(ad, b.ID)
			continue
		}
		rn := &run{owner: b.Owner, input: b.InputFileID}
		a.mu.Lock()
		a.runs[b.ID] = rn
		a.mu.Unlock()
		a.log.Info("batch resumed", "batch", b.ID, "status", b.Status)
		a.start(b, rn)
	}
	return nil
}

func (a *API) start(b Batch, rn *run) {
	a.mu.Lock()
	expires := time.Unix(b.CreatedAt, 0).Add(24 * time.Hour)
	if b.ExpiresAt != nil {
		expires = time.Unix(*b.ExpiresAt, 0)
	}
	left := expires.Sub(a.clk.Now())
	rn.expiry = a.clk.AfterFunc(max(left, 0), func() { a.expire(b.ID) })
	a.mu.Unlock()
	a.wg.Add(1)
	go a.execute(b, rn)
}

// expire stops a batch whose completion window has passed.
func (a *API) expire(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rn := a.runs[id]; rn != nil {
		rn.expired = true
		if rn.r != nil {
			rn.r.Stop()
		}
	}
}

func (a *API) forget(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rn := a.runs[id]; rn != nil && rn.expiry != nil {
		rn.expiry.Stop()
	}
	delete(a.runs, id)
}

// dir is where a batch's output, error file and journal are.
func (a *API) dir(id string) string { return filepath.Join(a.o.Dir, "batches", id) }

func (a *API) paths(id string) batch.Paths {
	d := a.dir(id)
	return batch.Paths{Out: filepath.Join(d, "output.jsonl"), Dead: filepath.Join(d, "errors.jsonl")}
}

// execute runs a batch from where its status says to its end. When the
// API closes first, the batch stays in progress for the next New.
func (a *API) execute(b Batch, rn *run) {
	defer a.wg.Done()
	defer a.forget(b.ID)
	var err error
	if b.Status == StatusValidating {
		if b, err = a.validate(b); err != nil || b.Status != StatusInProgress && b.Status != StatusCancelling {
			a.logEnd(b, err)
			return
		}
	}
	var s batch.Summary
	if b.Status == StatusInProgress {
		s, err = a.runLines(b, rn)
		if a.ctx.Err() != nil || a.isLost(rn) {
			return // resumed by the next New, or run by the adopter
		}
		if err != nil { // it fails, with what it wrote
			s = batch.Summary{Stopped: "internal_error", Reason: err.Error()}
		}
	}
	b, err = a.finish(b.ID, rn, s)
	a.logEnd(b, err)
}

// isLost reports whether rn's batch was adopted by another replica.
func (a *API) isLost(rn *run) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return rn.lost
}

// logEnd says how a run ended. A batch that ended gives back the room
// it held beyond the files it produced (none, unless finish registered
// them).
func (a *API) logEnd(b Batch, err error) {
	a.finished(b)
	if b.ID != "" && !active(b.Status) {
		a.files.settleBatch(b.ID, nil)
	}
	if err != nil {
		a.log.Error("batch", "batch", b.ID, "error", err.Error())
		return
	}
	a.log.Info("batch ended", "batch", b.ID, "status", b.Status, "completed", b.RequestCounts.Completed, "failed", b.RequestCounts.Failed)
}

// validate checks the input file and counts its requests, then moves the
// batch to in_progress (or to failed, cancelled).
func (a *API) validate(b Batch) (Batch, error) {
	f, ok := a.inputFile(b)
	if !ok {
		return a.fail(b.ID, "file_not_found", "The input file was deleted.")
	}
	n, err := countLines(a.files.path(f))
	if err != nil {
		return a.fail(b.ID, "internal_error", err.Error())
	}
	if n == 0 {
		return a.fail(b.ID, "empty_file", "The input file has no requests.")
	}
	if err := os.MkdirAll(a.dir(b.ID), 0o700); err != nil {
		return a.fail(b.ID, "internal_error", err.Error())
	}
	return a.update(b.ID, func(b *Batch) {
		b.RequestCounts.Total = n
		if b.Status == StatusValidating {
			b.Status, b.InProgressAt = StatusInProgress, at(a.clk.Now().Unix())
		}
	})
}

// runLines runs the batch's lines on the engine, as its owner, within
// the room its outputs hold.
func (a *API) runLines(b Batch, rn *run) (batch.Summary, error) {
	f, ok := a.inputFile(b)
	if !ok {
		return batch.Summary{}, errors.New("the input file was deleted")
	}
	in, err := os.Open(a.files.path(f))
	if err != nil {
		return batch.Summary{}, err
	}
	defer in.Close()
	h, prepare := a.o.Serve(b.Owner)
	a.restoreHold(b) // held since its creation, unless it was another replica's
	r, err := batch.New(batch.Options{Handler: h, Prepare: prepare, BatchID: b.ID, Endpoint: b.Endpoint,
		Concurrency: a.o.Concurrency, LineDeadline: a.o.LineDeadline, Clock: a.o.Clock,
		Room: batchRoom{x: a.files, id: b.ID, max: a.o.MaxOwnerBytes}})
	if err != nil {
		return batch.Summary{}, err
	}
	a.mu.Lock()
	rn.r = r
	stop := rn.expired || rn.lost
	a.mu.Unlock()
	if cur, ok, _ := a.store.Get(b.ID); stop || ok && cur.Status == StatusCancelling {
		r.Stop()
	}
	return r.Run(a.ctx, in, a.paths(b.ID))
}

// fail ends a batch as failed, for a reason.
func (a *API) fail(id, code, msg string) (Batch, error) {
	return a.update(id, func(b *Batch) {
		b.Status, b.FailedAt = StatusFailed, at(a.clk.Now().Unix())
		b.Errors = &BatchErrors{Object: "list", Data: []BatchError{{Code: code, Message: msg}}}
	})
}

// cancelBatch moves a batch in progress to cancelling and stops its lines;
// the run then ends it as cancelled. Other batches are left as they are.
func (a *API) cancelBatch(b Batch) (Batch, error) {
	if b.Status != StatusValidating && b.Status != StatusInProgress {
		return b, nil
	}
	b, err := a.update(b.ID, func(b *Batch) {
		if b.Status == StatusValidating || b.Status == StatusInProgress {
			b.Status, b.CancellingAt = StatusCancelling, at(a.clk.Now().Unix())
		}
	})
	if err != nil {
		return b, err
	}
	a.mu.Lock()
	if rn := a.runs[b.ID]; rn != nil && rn.r != nil {
		rn.r.Stop()
	}
	a.mu.Unlock()
	return b, nil
}

// live returns b with the counts of its lines so far, while it runs here.
func (a *API) live(b Batch) Batch {
	a.mu.Lock()
	rn := a.runs[b.ID]
	var r *batch.Runner
	if rn != nil {
		r = rn.r
	}
	a.mu.Unlock()
	if r != nil && active(b.Status) {
		p := r.Progress()
		b.RequestCounts.Completed, b.RequestCounts.Failed, b.Cost = p.OK, p.Dead, p.Cost
	}
	return b
}

// runningOn returns the batch running on file id, or "".
func (a *API) runningOn(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for bid, r := range a.runs {
		if r.input == id {
			return bid
		}
	}
	return ""
}
