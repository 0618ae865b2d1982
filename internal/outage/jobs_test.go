package outage

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestJobsScenario: against replayed capacity refusals, queue_full and
// lost answers, the same-key client gets stuck on refusals, the new-key
// client pays twice for lost answers, and Fusebox completes every job
// once. Counts only: no timing is asserted.
func TestJobsScenario(t *testing.T) {
	res, err := RunJobs(context.Background(), JobsOptions{Requests: 24, Concurrency: 6, Capacity: 0.3, Lost: 0.3,
		QueueTime: 20 * time.Millisecond, RunTime: 30 * time.Millisecond, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Client]JobsRow{}
	for _, w := range res.Rows {
		rows[w.Client] = w
	}
	fb, same, fresh := rows[FuseboxJobs], rows[SameKey], rows[NewKey]
	if fb.Completed != fb.Requests || fb.PaidTwice != 0 {
		t.Errorf("fusebox %+v: want every job completed, none paid twice", fb)
	}
	if same.PaidTwice != 0 || same.Failed == 0 {
		t.Errorf("same key %+v: want refusals replayed to failure, nothing paid twice", same)
	}
	if fresh.PaidTwice == 0 {
		t.Errorf("new key %+v: want lost answers paid twice", fresh)
	}
	md := res.Markdown()
	for _, want := range []string{"| fusebox |", "paid twice", "pass: jobs paid twice"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
