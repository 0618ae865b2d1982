package batch

import (
	"context"
	"io"
	"sync"
)

// job is an admitted line for a worker.
type job struct {
	l   Line
	k   lineKey
	est float64
}

// feed reads lines until the input ends or the run stops taking them:
// lines done by an earlier run are skipped, bad lines dead-lettered, good
// ones handed to one of Concurrency workers (so at most Concurrency lines
// are held at once, and the workers' stacks, grown by the gateway's
// handler, are kept from line to line).
func (r *Runner) feed(ctx context.Context, lr *lineReader, set *keySet, wg *sync.WaitGroup) {
	jobs := make(chan job)
	defer close(jobs)
	for range r.o.Concurrency {
		wg.Add(1)
		go r.work(ctx, jobs, wg)
	}
	for r.stopCtx.Err() == nil {
		text, tooLong, err := lr.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			r.halt(StoppedError, "reading the input: "+err.Error())
			return
		}
		r.p.read.Add(1)
		l, k, lerr := r.parse(lr.n, text, tooLong, set)
		if set.get(k)&keyDone != 0 {
			r.p.skipped.Add(1)
			continue
		}
		if lerr != nil {
			r.finish(k, &l, text, &Outcome{Verdict: lerr.Code, Err: lerr.Error()}, 0)
			continue
		}
		est, ok := r.admit(&l)
		if !ok {
			return
		}
		r.p.waiting.Add(1)
		select {
		case jobs <- job{l, k, est}:
		case <-r.stopCtx.Done():
			r.p.waiting.Add(-1)
			r.cap.settle(est, 0)
			r.room.settle()
			return
		}
	}
}

// admit reserves a line's cost estimate under the cap and its room for
// its result; false (the run stopped, or stops now for want of either)
// when the batch must take no more lines.
func (r *Runner) admit(l *Line) (float64, bool) {
	est := r.estimate(l)
	if ok, _ := r.cap.reserve(r.stopCtx, est); !ok {
		if r.stopCtx.Err() == nil {
			r.halt(StoppedMaxCost, "the cost cap was reached")
		}
		return 0, false
	}
	if ok, _ := r.room.reserve(r.stopCtx); !ok {
		r.cap.settle(est, 0)
		if r.stopCtx.Err() == nil {
			r.halt(StoppedStorage, "the output files have no room left for the next result")
		}
		return 0, false
	}
	return est, true
}

// work runs the lines it is handed until jobs is closed.
func (r *Runner) work(ctx context.Context, jobs <-chan job, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		r.runLine(ctx, j.l, j.k, j.est)
	}
}

// parse reads line n and returns it with its journal key; a bad line comes
// with its error. A repeated custom_id makes the line a duplicate.
func (r *Runner) parse(n int, text []byte, tooLong bool, set *keySet) (Line, lineKey, *LineError) {
	var l Line
	var lerr *LineError
	if tooLong {
		l, lerr = Line{N: n}, &LineError{N: n, Code: CodeTooLarge, Message: "the line is longer than the limit of " + itoa(r.o.MaxLineBytes) + " bytes."}
	} else {
		l, lerr = parseLine(n, text, r.o.Endpoint)
	}
	if l.CustomID == "" {
		return l, rawKey(text, n), lerr
	}
	k := idKey(l.CustomID)
	if set.get(k)&keySeen != 0 {
		k = dupKey(l.CustomID, n)
		l.Body = nil // the dead letter keeps the text, not a request that would clash again
		lerr = &LineError{N: n, Code: CodeDuplicateID, Message: "custom_id " + quote(l.CustomID) + " was used by an earlier line."}
	}
	set.add(k, keySeen)
	return l, k, lerr
}

// estimate returns what a line is reserved for under the cost cap.
func (r *Runner) estimate(l *Line) float64 {
	if r.o.MaxCost <= 0 {
		return 0
	}
	if r.o.Estimate != nil {
		return max(r.o.Estimate(l), 0)
	}
	return r.p.maxCost()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
