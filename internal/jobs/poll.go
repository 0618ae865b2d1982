package jobs

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/aierr"
)

// upstreamJob is what the gateway reads of a provider's job object.
type upstreamJob struct {
	ID      string          `json:"id"`
	Status  string          `json:"status"`
	Seconds json.RawMessage `json:"seconds"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseJob reads a job object; false when body is not one (no id, or a
// status that is not a job's).
func parseJob(body []byte) (upstreamJob, bool) {
	var job upstreamJob
	if json.Unmarshal(body, &job) != nil || job.ID == "" {
		return job, false
	}
	switch job.Status {
	case "", stateQueued, stateInProgress, stateCompleted, stateFailed:
		return job, true
	}
	return job, false
}

// seconds is the length the provider says the job has; 0 when it does not.
func (u *upstreamJob) seconds() int {
	var s string
	if json.Unmarshal(u.Seconds, &s) != nil {
		s = string(u.Seconds)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxSeconds {
		return 0
	}
	return n
}

// clientObject returns the provider's job object as the client sees it:
// the gateway's id and the alias for model, the rest as it is.
func (j *Jobs) clientObject(rec *record, raw []byte) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		m = map[string]json.RawMessage{}
	}
	m["id"], _ = json.Marshal(rec.ID)
	m["model"], _ = json.Marshal(rec.Alias)
	if _, ok := m["object"]; !ok {
		m["object"] = json.RawMessage(`"video"`)
	}
	out, _ := json.Marshal(m) // raw values that decoded always marshal
	return out
}

// refresh polls a job in flight and records what its target says; a job
// not in flight, or a poll that fails, returns the record as it was.
func (j *Jobs) refresh(ctx context.Context, rec record) record {
	t, al := j.targets[rec.Target], j.aliases[rec.Alias]
	if !live(rec.State) || t == nil || al == nil {
		return rec
	}
	a := j.do(ctx, t, call{method: http.MethodGet, url: t.url(t.cfg.PollPath, rec.Upstream), key: rec.Key, timeout: al.cfg.Timeouts.Poll})
	job, ok := parseJob(a.body)
	switch {
	case a.err == nil && a.status == http.StatusNotFound:
		job = upstreamJob{ID: rec.Upstream, Status: stateFailed}
		job.Error = &struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}{"job_not_found", "The provider no longer knows the job."}
		a.body, _ = json.Marshal(job)
	case a.err != nil || a.status/100 != 2 || !ok || job.ID != rec.Upstream:
		return rec
	}
	return j.observed(rec, t, job, a.body)
}

// peek asks the target how a job another replica runs is now, for one
// request: nothing is recorded or settled (that is the owner's).
func (j *Jobs) peek(ctx context.Context, rec record) record {
	t, al := j.targets[rec.Target], j.aliases[rec.Alias]
	if t == nil || al == nil {
		return rec
	}
	a := j.do(ctx, t, call{method: http.MethodGet, url: t.url(t.cfg.PollPath, rec.Upstream), key: rec.Key, timeout: al.cfg.Timeouts.Poll})
	if job, ok := parseJob(a.body); a.err == nil && a.status/100 == 2 && ok && job.ID == rec.Upstream && job.Status != "" {
		rec.State = job.Status
	}
	return rec
}

// observed records a job's new state, once: of several polls that see it
// end, one settles it.
func (j *Jobs) observed(rec record, t *target, job upstreamJob, raw []byte) record {
	state := job.Status
	if state == "" {
		state = stateQueued
	}
	changed := false
	now := j.clk.Now()
	upd, _, err := j.store.update(rec.ID, func(r *record) bool {
		if !live(r.State) || r.Upstream != job.ID {
			return false
		}
		changed = !live(state)
		r.State = state
		r.Polled = now
		if state != stateFailed {
			r.Object = j.clientObject(r, raw) // a failed job may be resubmitted: end decides
		}
		if changed {
			r.State = stateSubmitting // ours to settle; end sets the final state
		}
		return true
	})
	if err != nil {
		j.log.Error("jobs: recording a poll", "id", rec.ID, "err", err)
	}
	if changed {
		upd.State = state
		j.end(&upd, t, job, raw)
	}
	return upd
}

// end settles a job its target has ended: its slot, its cost, its
// target's cap and resubmit breaker, and a resubmit when it failed for an
// outage and may go again.
//
// raw is the provider's object of the job, which a failure reported
// shows.
func (j *Jobs) end(rec *record, t *target, job upstreamJob, raw []byte) {
	t.slots.Release()
	if rec.State == stateCompleted {
		t.cap.OnSuccess()
		t.feedResubmit(aierr.Verdict{Kind: aierr.Success})
		j.observe(Event{Kind: "job", Client: rec.Client, Alias: rec.Alias, Target: t.name})
		secs := job.seconds()
		if secs == 0 {
			secs = rec.Seconds
		}
		if secs == 0 {
			secs = defaultSeconds
		}
		j.finish(rec, t, t.price(secs, 0))
		return
	}
	code, msg := "", ""
	if job.Error != nil {
		code, msg = job.Error.Code, job.Error.Message
	}
	v := t.classify.ClassifyJobError(code, msg)
	t.feedResubmit(v)
	j.observe(Event{Kind: "job", Client: rec.Client, Alias: rec.Alias, Target: t.name, Verdict: v.Kind})
	if v.Kind == aierr.Capacity {
		t.cap.OnBackoff()
	}
	failed := j.clientObject(rec, raw)
	al := j.aliases[rec.Alias]
	if (v.Kind == aierr.Outage || v.Kind == aierr.Capacity) && al != nil && rec.Resubmits < al.cfg.Resubmits {
		j.resubmit(rec, al, t, failed)
		return
	}
	rec.Object = failed
	j.finish(rec, t, 0)
}

// resubmit submits a job that failed for an outage again, under its id:
// to its target under a new key, or to the next target, wherever the
// resubmit breaker admits. What the client polls next is the new job.
//
// failed is the failed job's object, which the client sees if no target
// takes the job again.
func (j *Jobs) resubmit(rec *record, al *alias, t *target, failed json.RawMessage) {
	b, e := parseBody(rec.ContentType, rec.Body)
	if e != nil {
		rec.Object = failed
		j.finish(rec, t, 0)
		return
	}
	rec.Resubmits++
	rec.Gens[t.name]++ // the failed job holds the old key
	rec.State = stateSubmitting
	j.persist(rec)
	out, _ := j.walk(j.ctx, *rec, b, al, true)
	if out.State == stateFailed {
		out.Object = failed
		j.persist(&out)
	}
	*rec = out
}

// finish records a job's end and settles its reservation at cost.
//
// With leases, the fleet says which replica settles (once); a settlement
// Redis could not confirm is left to the sweep, which asks again.
func (j *Jobs) finish(rec *record, t *target, cost float64) {
	if rec.Settled {
		return
	}
	if rec.Finished.IsZero() {
		rec.Finished = j.clk.Now()
	}
	rec.Cost = cost
	charge, done := j.settleOnce(rec)
	rec.Settled = done
	j.persist(rec)
	if !charge {
		if done {
			j.settle(rec, 0) // settled under an earlier epoch: only this replica's reservation goes
		}
		return
	}
	j.settle(rec, cost)
	if cost > 0 && t != nil {
		j.observe(Event{Kind: "cost", Client: rec.Client, Alias: rec.Alias, Target: t.name, USD: cost})
	}
}

// settle releases a job's reservation with its actual cost, once; a
// reservation lost to a restart is charged through Options.Charge.
func (j *Jobs) settle(rec *record, cost float64) {
	j.mu.Lock()
	release := j.reservations[rec.ID]
	delete(j.reservations, rec.ID)
	j.mu.Unlock()
	switch {
	case release != nil:
		release(cost)
	case cost <= 0:
	case j.opts.Charge != nil:
		j.opts.Charge(rec.Client, cost)
	case j.opts.Reserve != nil:
		if rel, ok := j.opts.Reserve(rec.Client, cost); ok {
			rel(cost)
		}
	}
}
