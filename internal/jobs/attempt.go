package jobs

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// sameKeyAttempts is how many times a submit whose answer was lost is
// sent to its target under the same key (the first included) before the
// job is reported unknown. The provider answers a resend with the job the
// first one made, if it made one.
const sameKeyAttempts = 2

// outcome is what trying a target came to.
type outcome int

const (
	tookIt   outcome = iota // the target took the job
	passOn                  // the target did not take it: try the next one
	stopHere                // stop the walk: a client error, or a job that may exist
)

// try submits rec to t, following the rules of docs/JOBS.md: an outage
// before the provider can have acted fails over; a refusal the provider
// replays renews the key and fails over; a lost answer is looked up or
// resent under the same key, and never goes elsewhere.
func (j *Jobs) try(ctx context.Context, rec *record, b *submitBody, al *alias, t *target) (outcome, *apiError) {
	if !t.slots.TryAcquire() {
		return passOn, capError(t, "the gateway's cap on its jobs in flight is reached")
	}
	permit, err := t.submit.Allow()
	if err != nil {
		t.slots.Release()
		return passOn, errorf(http.StatusServiceUnavailable, "server_error", "breaker_open", "", "Target "+t.name+" is failing; its breaker is open.")
	}
	body, ct := b.forTarget(t.cfg.Model)
	if rec.State != stateUnknown || rec.Target != t.name {
		rec.Key = t.pickKey()
		rec.UpKey = upstreamKey(rec.ID, t.name, rec.Gens[t.name])
	}
	rec.Target, rec.State = t.name, stateSubmitting
	j.persist(rec)
	for attempt := 1; ; attempt++ {
		a := j.do(ctx, t, call{method: http.MethodPost, url: t.url(t.cfg.SubmitPath, ""), body: body, contentType: ct,
			key: rec.Key, idem: rec.UpKey, timeout: al.cfg.Timeouts.Submit})
		v := a.verdict(t)
		j.observe(Event{Kind: "submit", Client: rec.Client, Alias: rec.Alias, Target: t.name, Verdict: v.Kind})
		lost := a.err != nil && a.sent
		if v.Kind == aierr.Success {
			if job, ok := parseJob(a.body); ok {
				permit.Success()
				j.accept(rec, t, job, a.body)
				return tookIt, nil
			}
			lost = true // a 2xx without a job: it may have made one
		}
		if !lost {
			return j.refused(rec, t, permit, &a, v)
		}
		permit.Failure()
		if o, e, known := j.lookupLost(ctx, rec, al, t); known {
			return o, e
		}
		if attempt >= sameKeyAttempts {
			break
		}
		if permit, err = t.submit.Allow(); err != nil {
			break
		}
	}
	t.slots.Release()
	rec.State = stateUnknown
	rec.Error = lostError(rec)
	return stopHere, rec.Error
}

// refused handles an answer that was not a job, or a call that failed
// before it was sent: the provider did not take the job. It reports to
// the breaker, lowers the cap on a capacity refusal, renews the key where
// the provider would replay the refusal, and says whether to go on.
func (j *Jobs) refused(rec *record, t *target, permit breaker.Permit, a *answer, v aierr.Verdict) (outcome, *apiError) {
	t.slots.Release()
	rec.State = stateRefused
	if v.NewIdempotencyKey || v.Kind == aierr.Capacity {
		rec.Gens[t.name]++
	}
	e := upstreamError(a, v)
	switch v.Kind {
	case aierr.Outage:
		permit.Failure()
		return passOn, e
	case aierr.Capacity:
		permit.Ignore()
		t.cap.OnBackoff()
		return passOn, e
	case aierr.ClientError:
		permit.Ignore()
		if v.OtherTarget {
			return passOn, e
		}
		return stopHere, e
	}
	permit.Ignore() // throttle, auth, quota: not the target's health
	return passOn, e
}

// lookupLost looks a lost submit up by its key, where the target allows:
// known reports that the lookup settled it, taken (the job exists) or
// passed on (it does not: the submit never reached the provider).
func (j *Jobs) lookupLost(ctx context.Context, rec *record, al *alias, t *target) (outcome, *apiError, bool) {
	if t.cfg.LookupPath == "" {
		return 0, nil, false
	}
	a := j.do(ctx, t, call{method: http.MethodGet, url: t.url(t.cfg.LookupPath, rec.UpKey), key: rec.Key, timeout: al.cfg.Timeouts.Poll})
	switch {
	case a.err == nil && a.status/100 == 2:
		if job, ok := parseJob(a.body); ok {
			j.accept(rec, t, job, a.body)
			return tookIt, nil, true
		}
	case a.err == nil && a.status == http.StatusNotFound:
		t.slots.Release()
		rec.State = stateRefused
		return passOn, errorf(http.StatusBadGateway, "server_error", "upstream_error", "", "Target "+t.name+" did not receive the job."), true
	}
	return 0, nil, false
}

// accept records the job t took.
func (j *Jobs) accept(rec *record, t *target, job upstreamJob, raw []byte) {
	rec.Upstream = job.ID
	rec.State = cmp.Or(job.Status, stateQueued)
	rec.Object = j.clientObject(rec, raw)
	rec.Error = nil
	rec.Polled = j.clk.Now()
	j.persist(rec)
	if ended(rec.State) {
		j.end(rec, t, job, raw)
	}
}

// capError is a refusal for a target's full cap or queue. It was made
// here, costs the provider nothing, and says when to ask again: a slot
// frees as soon as one of the target's jobs ends.
func capError(t *target, why string) *apiError {
	e := errorf(http.StatusTooManyRequests, "server_error", "queue_full", "", "Target "+t.name+" cannot take more jobs now: "+why+".")
	e.RetryAfter = capRetryAfter
	return e
}

// capRetryAfter is the Retry-After of a refusal for a full cap.
const capRetryAfter = time.Second

// upstreamError is the client's answer for a refusal: the provider's own
// status and code for a client error or a refusal, an outage as a 502.
func upstreamError(a *answer, v aierr.Verdict) *apiError {
	msg := cmp.Or(v.Message, "The upstream refused the job.")
	if a.err != nil {
		return errorf(http.StatusBadGateway, "server_error", "upstream_unreachable", "", "The upstream could not be reached: "+msg)
	}
	switch v.Kind {
	case aierr.ClientError:
		return errorf(a.status, "invalid_request_error", v.Code, "", msg)
	case aierr.Capacity, aierr.Throttle:
		e := errorf(http.StatusTooManyRequests, "server_error", cmp.Or(v.Code, "queue_full"), "", msg)
		e.RetryAfter = v.Wait
		return e
	case aierr.Auth, aierr.Quota:
		return errorf(http.StatusBadGateway, "server_error", "upstream_auth", "", "The upstream refused the gateway's key.")
	}
	return errorf(http.StatusBadGateway, "server_error", "upstream_error", "", msg)
}

// lostError is the answer for a submit whose answer was lost after it was
// sent: the job may exist, so it is not sent elsewhere.
func lostError(rec *record) *apiError {
	e := errorf(http.StatusBadGateway, "server_error", "job_state_unknown", "",
		"The upstream may have accepted the job, but its answer was lost. Retry with the same Idempotency-Key to resume it; it will not be submitted twice.")
	e.JobID = rec.ID
	return e
}
