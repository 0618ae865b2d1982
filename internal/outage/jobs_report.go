package outage

import (
	"fmt"
	"strings"
)

// Markdown renders the result as a table, one row per client, and the
// goals Fusebox's row is checked against.
func (r *JobsResult) Markdown() string {
	var b strings.Builder
	o := r.Options
	fmt.Fprintf(&b, "## Jobs: %d video jobs per client, %d at a time\n\n", o.Requests, o.Concurrency)
	fmt.Fprintf(&b, "The primary refuses %s of submits with provider_capacity_exceeded (replayed for their key), "+
		"loses the answer of %s after making the job, and answers queue_full past %d unfinished jobs; "+
		"Fusebox also has a healthy secondary.\n\n", pct(o.Capacity), pct(o.Lost), o.MaxQueued)
	b.WriteString("| client | completed | failed | jobs created | paid twice | refusals seen | p50 to completion | p95 |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range r.Rows {
		fmt.Fprintf(&b, "| %s | %d/%d | %d | %d | %d | %d | %s | %s |\n", w.Client, w.Completed, w.Requests, w.Failed,
			w.JobsCreated, w.PaidTwice, w.Refusals, fmtMS(w.P50MS), fmtMS(w.P95MS))
	}
	b.WriteString("\n")
	for _, g := range r.Goals() {
		mark := "pass"
		if !g.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "- %s: %s — want %s, got %s\n", mark, g.Name, g.Want, g.Got)
	}
	return b.String()
}

// Goals checks Fusebox's row: every job completed, none paid twice.
func (r *JobsResult) Goals() []Goal {
	var gs goalList
	for _, w := range r.Rows {
		if w.Client != FuseboxJobs {
			continue
		}
		gs.add("jobs completed", fmt.Sprint(w.Requests), fmt.Sprint(w.Completed), w.Completed == w.Requests)
		gs.add("jobs paid twice", "0", fmt.Sprint(w.PaidTwice), w.PaidTwice == 0)
	}
	return gs
}
