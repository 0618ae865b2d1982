package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batch"
)

type reportOf struct {
	in    string
	p     batch.Paths
	total int64
	took  time.Duration
}

// report prints the summary table and returns the run's exit error.
func report(w io.Writer, s batch.Summary, r reportOf) error {
	code, verdict := outcome(s)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "batch\t%s\n", s.BatchID)
	fmt.Fprintf(tw, "input\t%s: %d lines read, %d done before (skipped)\n", r.in, s.Read, s.Skipped)
	fmt.Fprintf(tw, "answered\t%d this run, %d in all\t→ %s\n", s.OK, s.TotalOK, r.p.Out)
	fmt.Fprintf(tw, "dead-lettered\t%d this run, %d in all\t→ %s\n", s.Dead, s.TotalDead, r.p.Dead)
	fmt.Fprintf(tw, "tokens\t%s in, %s out\n", humanInt(s.TokensIn), humanInt(s.TokensOut))
	fmt.Fprintf(tw, "cost\t$%.4f (the batch's, across runs)\n", s.Cost)
	rate := 0.0
	if r.took > 0 {
		rate = float64(s.OK+s.Dead) / r.took.Seconds()
	}
	fmt.Fprintf(tw, "time\t%s (%.1f lines/s)\n", r.took.Round(time.Millisecond), rate)
	if s.Stopped != "" {
		fmt.Fprintf(tw, "stopped\t%s: %s\n", s.Stopped, s.Reason)
	}
	fmt.Fprintf(tw, "exit\t%d: %s\n", code, verdict)
	tw.Flush()
	if code == 0 {
		return nil
	}
	return &exitError{code, errors.New(verdict)}
}

// outcome is the exit code of a run and what it says.
func outcome(s batch.Summary) (int, string) {
	switch s.Stopped {
	case batch.StoppedMaxCost:
		return ExitStoppedCost, "stopped by --max-cost; rerun with a higher cap to go on"
	case batch.StoppedBudget:
		return ExitStoppedCost, "stopped: the client's budget is spent; rerun when it resets"
	case batch.StoppedAuth:
		return ExitKeyRefused, "stopped: the gateway refused the client key"
	case batch.StoppedCanceled, batch.StoppedByCaller:
		return ExitInterrupted, "interrupted; rerun the same command to resume"
	case batch.StoppedError:
		return ExitError, "stopped: " + s.Reason
	}
	if s.TotalDead > 0 {
		return ExitDeadLetters, strconv.FormatInt(s.TotalDead, 10) + " line(s) dead-lettered; run them again with --retry-dead-letter"
	}
	return 0, "every line answered"
}

// humanInt writes 1234567 as 1.2M.
func humanInt(n int64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + "G"
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 1e4:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}
