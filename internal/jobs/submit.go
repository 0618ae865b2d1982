package jobs

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// maxIdemKey bounds a client's Idempotency-Key.
const maxIdemKey = 255

// submission is a client's submit, read and checked.
type submission struct {
	client string
	alias  *alias
	body   *submitBody
	raw    []byte
	ct     string
	idem   string
	sum    string
}

// handleSubmit serves POST /v1/videos.
func (j *Jobs) handleSubmit(w http.ResponseWriter, r *http.Request) {
	client, ok := j.identify(w, r)
	if !ok {
		return
	}
	s, e := j.readSubmission(w, r, client, config.JobVideos)
	if e != nil {
		e.write(w)
		return
	}
	// The submit goes on if the client leaves: a job it creates is
	// recorded, and a retry with the same key finds it.
	rec, e := j.submit(r.Context(), context.WithoutCancel(r.Context()), s)
	if e != nil {
		e.write(w)
		return
	}
	writeRaw(w, http.StatusOK, rec.Object)
}

// readSubmission reads and checks a submit's body and headers for api.
func (j *Jobs) readSubmission(w http.ResponseWriter, r *http.Request, client string, api config.JobAPI) (*submission, *apiError) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, j.maxBody))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "",
				"The request body is too large.")
		}
		return nil, badRequest("", "Could not read the request body.")
	}
	ct := r.Header.Get("Content-Type")
	b, e := parseBody(ct, raw)
	if e != nil {
		return nil, e
	}
	al := j.aliases[b.model]
	switch {
	case al == nil || al.cfg.API != api:
		return nil, errorf(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
			"The model `"+b.model+"` does not exist or you do not have access to it.")
	case j.opts.Allowed != nil && !j.opts.Allowed(client, al.cfg.Name):
		return nil, errorf(http.StatusForbidden, "permission_error", "model_not_allowed", "model",
			"Your key is not allowed to use the model `"+b.model+"`.")
	}
	idem := r.Header.Get("Idempotency-Key")
	if len(idem) > maxIdemKey {
		return nil, badRequest("", "The Idempotency-Key is too long (at most 255 bytes).")
	}
	sum := b.digest(raw)
	return &submission{client: client, alias: al, body: b, raw: raw, ct: ct, idem: idem, sum: hex.EncodeToString(sum[:])}, nil
}

// submit runs s, or with a client Idempotency-Key answers the job the key
// made: duplicates that arrive together wait for the first. wait is the
// client's context, for that wait; ctx bounds the submit.
func (j *Jobs) submit(wait, ctx context.Context, s *submission) (record, *apiError) {
	if s.idem == "" {
		return j.submitNew(ctx, s)
	}
	if rec, ok := j.elsewhereByIdem(s); ok {
		return rec, nil
	} else if rec.ID != "" {
		return record{}, j.refusedByIdem(rec, s)
	}
	k := s.client + "\x00" + s.idem
	for {
		j.mu.Lock()
		if ch := j.flights[k]; ch != nil {
			j.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-wait.Done():
				return record{}, errorf(499, "invalid_request_error", "canceled", "", "The client closed the request.")
			}
		}
		rec, found := j.store.byIdem(s.client, s.idem)
		switch {
		case found && rec.BodySum != s.sum:
			j.mu.Unlock()
			return record{}, errorf(http.StatusUnprocessableEntity, "invalid_request_error", "idempotency_key_reused", "",
				"This Idempotency-Key was used with a different request body.")
		case found && rec.Object != nil && rec.State != stateRefused && rec.State != stateUnknown:
			j.mu.Unlock()
			return rec, nil
		}
		ch := make(chan struct{})
		j.flights[k] = ch
		j.mu.Unlock()
		defer func() {
			j.mu.Lock()
			delete(j.flights, k)
			j.mu.Unlock()
			close(ch)
		}()
		if found {
			rec.Body, rec.ContentType = s.raw, s.ct
			if rec.State == stateRefused { // its reservation was released
				if e := j.reserve(&rec, s); e != nil {
					return record{}, e
				}
			}
			return j.walk(ctx, rec, s.body, s.alias, false)
		}
		return j.submitNew(ctx, s)
	}
}

// submitNew records a new job for s, reserves its estimate against the
// client's budget and walks the ladder.
func (j *Jobs) submitNew(ctx context.Context, s *submission) (record, *apiError) {
	now := j.clk.Now()
	rec := record{ID: newID(), Client: s.client, Alias: s.alias.cfg.Name, IdemKey: s.idem, BodySum: s.sum,
		Body: s.raw, ContentType: s.ct, Seconds: s.body.seconds, State: stateSubmitting, Created: now, Polled: now,
		Gens: map[string]int{}}
	if e := j.reserve(&rec, s); e != nil {
		return record{}, e
	}
	j.claim(&rec)
	if err := j.store.put(rec); err != nil {
		j.settle(&rec, 0)
		j.log.Error("jobs: recording a submit", "err", err)
		return record{}, errorf(http.StatusInternalServerError, "server_error", "", "", "The gateway could not record the job.")
	}
	return j.walk(ctx, rec, s.body, s.alias, false)
}

// reserve reserves the most s may cost against its client's budget for
// rec, or returns the refusal.
func (j *Jobs) reserve(rec *record, s *submission) *apiError {
	if j.opts.Reserve == nil {
		return nil
	}
	est := s.alias.estimate(s.body.estimateSeconds(), 0)
	release, ok := j.opts.Reserve(s.client, est)
	if !ok {
		return errorf(http.StatusTooManyRequests, "insufficient_quota", "budget_exceeded", "",
			"This request would exceed the client's budget.")
	}
	rec.Reserved = est
	j.mu.Lock()
	j.reservations[rec.ID] = release
	j.mu.Unlock()
	return nil
}

// estimate is the most a job of secs seconds and n images may cost on any
// of a's targets.
func (a *alias) estimate(secs, images int) float64 {
	est := 0.0
	for _, t := range a.targets {
		est = max(est, t.price(secs, images))
	}
	return est
}

// walk tries the alias's targets in order (for a resubmit, those whose
// resubmit breaker admits) until one takes the job. It records every
// step; a submit that no target took is recorded refused (or, for a
// resubmit, failed) with the last refusal, and its reservation released.
func (j *Jobs) walk(ctx context.Context, rec record, b *submitBody, al *alias, resubmit bool) (record, *apiError) {
	last := errorf(http.StatusServiceUnavailable, "server_error", "no_target", "",
		"No target of model `"+al.cfg.Name+"` can take the job now.")
	for _, t := range j.order(rec, al, resubmit) {
		o, e := j.try(ctx, &rec, b, al, t)
		switch o {
		case tookIt:
			return rec, nil
		case stopHere:
			j.persist(&rec)
			return rec, e
		}
		if e != nil {
			last = e
		}
	}
	if rec.State == stateUnknown {
		// No call was made (its target's breaker or cap refused): the job
		// may still exist there, and must not go elsewhere.
		j.persist(&rec)
		last.JobID = rec.ID
		return rec, last
	}
	if resubmit {
		rec.State = stateFailed
		j.finish(&rec, j.targets[rec.Target], 0) // resubmit shows the failed job
		return rec, nil
	}
	j.settle(&rec, 0)
	if rec.IdemKey == "" {
		// Nothing to resume: forget it, so refusals cost no records.
		j.forgetLease(rec.ID)
		if err := j.store.remove(rec.ID); err != nil {
			j.log.Error("jobs: forgetting a refused submit", "id", rec.ID, "err", err)
		}
		return rec, last
	}
	// Kept for its keys' generations; a retry brings its body again.
	rec.State, rec.Error, rec.Body, rec.Reserved = stateRefused, last, nil, 0
	j.persist(&rec)
	return rec, last
}

// order returns the targets a submit walks: a job whose answer was lost
// goes back to its target alone (it may exist there); a resubmit goes to
// the targets whose resubmit breaker admits.
func (j *Jobs) order(rec record, al *alias, resubmit bool) []*target {
	if rec.State == stateUnknown {
		if t := j.targets[rec.Target]; t != nil {
			return []*target{t}
		}
	}
	if !resubmit {
		return al.targets
	}
	var out []*target
	for _, t := range al.targets {
		if t.mayResubmit() {
			out = append(out, t)
		}
	}
	return out
}

// persist writes rec, logging a failure: the answer goes on.
func (j *Jobs) persist(rec *record) {
	if err := j.store.put(*rec); err != nil {
		j.log.Error("jobs: recording a job", "id", rec.ID, "err", err)
	}
}
