package jobs

import (
	"encoding/json"
	"net/http"
)

// Shared is the fleet's copy of the job records (internal/fleet), so that
// several replicas behind a load balancer answer for every job. The
// replica that owns a job (the one that submitted it, or with Leases the
// one that adopted it) polls it, settles its cost and deletes it.
// Another replica answers a poll from the record as that replica last
// wrote it (kept fresh by its background polls), streams a completed
// job's content from the target, and refuses a delete with a 409 while
// the owner lives; a submit resent under the same Idempotency-Key gets
// the job that key made.
type Shared interface {
	// PutJob shares a record (client's, made under Idempotency-Key key,
	// "" for none); it must not block.
	PutJob(id, client, key string, record []byte)
	// GetJob returns a record the fleet keeps.
	GetJob(id string) ([]byte, bool)
	// JobByKey returns the id of the job client's key made.
	JobByKey(client, key string) (string, bool)
}

// share sends r to the fleet, with the client's body: a replica that
// adopts the job may have to resubmit it.
func (s *store) share(r *record) {
	if s.shared == nil {
		return
	}
	data, err := json.Marshal(r)
	if err != nil {
		return
	}
	s.shared.PutJob(r.ID, r.Client, r.IdemKey, data)
}

// fromFleet returns the fleet's record of job id, if it has one this
// replica does not.
func (j *Jobs) fromFleet(id string) (record, bool) {
	if j.opts.Shared == nil || len(id) > 64 { // ids are "video_" and 32 hex digits
		return record{}, false
	}
	data, ok := j.opts.Shared.GetJob(id)
	if !ok {
		return record{}, false
	}
	var r record
	if json.Unmarshal(data, &r) != nil || r.ID != id {
		return record{}, false
	}
	return r, true
}

// fleetByIdem returns the fleet's record of the job client's
// Idempotency-Key made, if it has one this replica does not.
func (j *Jobs) fleetByIdem(client, key string) (record, bool) {
	if j.opts.Shared == nil {
		return record{}, false
	}
	id, ok := j.opts.Shared.JobByKey(client, key)
	if !ok {
		return record{}, false
	}
	r, ok := j.fromFleet(id)
	return r, ok && r.Client == client
}

// elsewhere is the answer to a change asked of another replica's job.
func elsewhere(id string) *apiError {
	return errorf(http.StatusConflict, "invalid_request_error", "job_elsewhere", "",
		"Job '"+id+"' is run by another replica of this gateway; send this request again (it may reach that replica).")
}

// elsewhereByIdem looks for the job s's Idempotency-Key made on another
// replica, when this one has none: ok with one to answer; with a record
// but not ok, refusedByIdem says why it cannot be.
func (j *Jobs) elsewhereByIdem(s *submission) (record, bool) {
	if _, here := j.store.byIdem(s.client, s.idem); here {
		return record{}, false
	}
	rec, ok := j.fleetByIdem(s.client, s.idem)
	if !ok {
		return record{}, false
	}
	switch {
	case rec.BodySum == s.sum && rec.State == stateRefused:
		return record{}, false // no job was made: this replica tries again
	case rec.BodySum != s.sum || rec.Object == nil || rec.State == stateUnknown:
		return rec, false
	}
	return rec, true
}

// refusedByIdem is the answer to a resent submit whose key's job, on
// another replica, cannot be answered here: another body is a 422, a
// submit still running or lost there is for that replica to settle.
func (j *Jobs) refusedByIdem(rec record, s *submission) *apiError {
	if rec.BodySum != s.sum {
		return errorf(http.StatusUnprocessableEntity, "invalid_request_error", "idempotency_key_reused", "",
			"This Idempotency-Key was used with a different request body.")
	}
	return elsewhere(rec.ID)
}
