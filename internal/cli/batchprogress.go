package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batch"
	"github.com/schollz/progressbar/v3"
)

// batchProgress shows a running batch: a bar on a terminal, a line every
// so often otherwise, or nothing.
type batchProgress struct {
	done chan struct{}
	wg   sync.WaitGroup
	bar  *progressbar.ProgressBar
}

// startProgress starts showing r's progress on w.
func startProgress(o batchOptions, r *batch.Runner, total int64, w io.Writer) *batchProgress {
	p := &batchProgress{done: make(chan struct{})}
	mode := o.progress
	if mode == "auto" {
		mode = "lines"
		if terminal(w) {
			mode = "bar"
		}
	}
	every := o.every
	switch mode {
	case "none":
		return p
	case "bar":
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("lines"), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetWidth(30),
			progressbar.OptionShowDescriptionAtLineEnd())
		every = 250 * time.Millisecond
	}
	p.wg.Add(1)
	go p.loop(r, total, w, every)
	return p
}

// loop updates the display every period until stop.
func (p *batchProgress) loop(r *batch.Runner, total int64, w io.Writer, every time.Duration) {
	defer p.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	start, last := time.Now(), r.Progress()
	for {
		select {
		case <-p.done:
			if p.bar != nil {
				g := r.Progress()
				p.bar.Describe(describe(g))
				p.bar.Set64(g.OK + g.Dead)
				p.bar.Exit()
				fmt.Fprintln(w)
				return
			}
			fmt.Fprintln(w, batchLine(r.Progress(), batch.Progress{}, total, time.Since(start), time.Since(start)))
			return
		case now := <-t.C:
			g := r.Progress()
			if p.bar != nil {
				p.bar.Describe(describe(g))
				p.bar.Set64(g.OK + g.Dead)
				continue
			}
			fmt.Fprintln(w, batchLine(g, last, total, now.Sub(start), every))
			last = g
		}
	}
}

func (p *batchProgress) stop() {
	close(p.done)
	p.wg.Wait()
}

// describe is the bar's text: what the bar itself does not show.
func describe(g batch.Progress) string {
	return fmt.Sprintf("ok %d · failed %d · in flight %d (sending %d, limit %d) · %s tokens · $%.4f",
		g.OK, g.Dead, g.InFlight, g.Sending, g.Concurrency, humanInt(g.TokensIn+g.TokensOut), g.Cost)
}

// batchLine is a plain progress line: done, failed, in flight, rate,
// tokens, cost and the time left at the last period's rate.
func batchLine(g, last batch.Progress, total int64, elapsed, period time.Duration) string {
	done := g.OK + g.Dead
	rate := float64(done-last.OK-last.Dead) / period.Seconds()
	eta := "?"
	if rate > 0 && total > done {
		eta = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
	} else if total <= done {
		eta = "0s"
	}
	return fmt.Sprintf("batch: %s %d/%d done (%d ok, %d failed), %d in flight (sending %d, limit %d), %.1f lines/s, %s tokens in, %s out, $%.4f, ETA %s",
		elapsed.Round(time.Second), done, total, g.OK, g.Dead, g.InFlight, g.Sending, g.Concurrency, rate,
		humanInt(g.TokensIn), humanInt(g.TokensOut), g.Cost, eta)
}

// terminal reports whether w is a terminal.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
