package jobs

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
)

// owned returns the client's job id, and whether this replica runs it
// (local; else the record is the fleet's, read only). A job whose owner's
// lease has ended is adopted here first, for its own client only.
// Another client's job, or one that does not exist, is the same 404, so
// that ids cannot be probed.
func (j *Jobs) owned(w http.ResponseWriter, r *http.Request) (rec record, local, ok bool) {
	client, ok := j.identify(w, r)
	if !ok {
		return record{}, false, false
	}
	id := r.PathValue("id")
	rec, local = j.store.get(id)
	if !local {
		rec, ok = j.fromFleet(id)
	}
	if !ok || rec.Client != client || rec.State == stateDeleted {
		notFound(id).write(w)
		return record{}, false, false
	}
	switch {
	case local && !j.holding(id):
		rec, local = j.takeUp(rec)
	case !local:
		rec, local = j.adoptFleet(rec)
	}
	if rec.State == stateDeleted { // as the fleet has it, since
		notFound(id).write(w)
		return record{}, false, false
	}
	return rec, local, true
}

// handleGet serves GET /v1/videos/{id}: the job as its target says it is
// now (a poll, recorded even if the client leaves).
func (j *Jobs) handleGet(w http.ResponseWriter, r *http.Request) {
	rec, local, ok := j.owned(w, r)
	if !ok {
		return
	}
	if local { // another replica's job is as that replica last saw it
		rec = j.refresh(context.WithoutCancel(r.Context()), rec)
	}
	if rec.Object == nil {
		j.unsettled(rec).write(w)
		return
	}
	writeRaw(w, http.StatusOK, rec.Object)
}

// unsettled is the answer for a job with no object: a submit refused,
// lost or still running.
func (j *Jobs) unsettled(rec record) *apiError {
	if rec.Error != nil {
		return rec.Error
	}
	return errorf(http.StatusConflict, "invalid_request_error", "job_submitting", "",
		"The job is being submitted; poll again shortly.")
}

// handleDelete serves DELETE /v1/videos/{id}: the job is deleted at its
// target, its slot freed and its reservation settled (at nothing while
// it was queued; at its reservation once it had started, as it may have
// run).
func (j *Jobs) handleDelete(w http.ResponseWriter, r *http.Request) {
	rec, local, ok := j.owned(w, r)
	if !ok {
		return
	}
	if !local {
		elsewhere(rec.ID).write(w)
		return
	}
	t, al := j.targets[rec.Target], j.aliases[rec.Alias]
	if rec.Upstream != "" && t != nil && al != nil && !ended(rec.State) {
		a := j.do(context.WithoutCancel(r.Context()), t, call{method: http.MethodDelete,
			url: t.url(t.cfg.PollPath, rec.Upstream), key: rec.Key, timeout: al.cfg.Timeouts.Poll})
		if a.err != nil || (a.status/100 != 2 && a.status != http.StatusNotFound) {
			errorf(http.StatusBadGateway, "server_error", "upstream_error", "",
				"The upstream could not delete the job; try again.").write(w)
			return
		}
	}
	was := ""
	upd, _, err := j.store.update(rec.ID, func(r *record) bool {
		was, r.State = r.State, stateDeleted
		return true
	})
	if err != nil {
		j.log.Error("jobs: recording a delete", "id", rec.ID, "err", err)
	}
	if live(was) && t != nil {
		t.slots.Release()
	}
	if !upd.Settled {
		cost := 0.0
		switch was {
		case stateInProgress, stateUnknown:
			cost = upd.Reserved
		case stateCompleted, stateFailed:
			cost = upd.Cost // ended, its settlement still to be made
		}
		j.finish(&upd, t, cost)
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{rec.ID, "video.deleted", true})
}

// handleList serves GET /v1/videos: the client's jobs, newest first, as
// last seen (not polled), limit at a time (1 to 100, default 20) after
// the job id given as after.
func (j *Jobs) handleList(w http.ResponseWriter, r *http.Request) {
	client, ok := j.identify(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	n := 20
	if s := q.Get("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 100 {
			badRequest("limit", "'limit' must be a whole number from 1 to 100.").write(w)
			return
		}
		n = v
	}
	recs := j.store.all(func(r *record) bool { return r.Client == client && r.Object != nil && r.State != stateDeleted })
	slices.Reverse(recs)
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(recs, func(r record) bool { return r.ID == after })
		recs = recs[i+1:] // an unknown id (-1) lists from the start
	}
	more := len(recs) > n
	recs = recs[:min(n, len(recs))]
	data := make([]json.RawMessage, len(recs))
	for i := range recs {
		data[i] = recs[i].Object
	}
	page := struct {
		Object  string            `json:"object"`
		Data    []json.RawMessage `json:"data"`
		FirstID *string           `json:"first_id"`
		LastID  *string           `json:"last_id"`
		HasMore bool              `json:"has_more"`
	}{Object: "list", Data: data, HasMore: more}
	if len(recs) > 0 {
		page.FirstID, page.LastID = &recs[0].ID, &recs[len(recs)-1].ID
	}
	writeJSON(w, http.StatusOK, page)
}
