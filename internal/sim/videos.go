package sim

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"
)

// videoRequest is the body of POST /v1/videos.
type videoRequest struct {
	Model   string          `json:"model"`
	Prompt  string          `json:"prompt"`
	Seconds json.RawMessage `json:"seconds"` // "8" as OpenAI's API takes it, or 8
	Size    string          `json:"size"`
}

// seconds reads the video length asked for: 4 when not given.
func (v *videoRequest) seconds() (int, bool) {
	if len(v.Seconds) == 0 || string(v.Seconds) == "null" {
		return 4, true
	}
	var s string
	if json.Unmarshal(v.Seconds, &s) != nil {
		s = string(v.Seconds)
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n <= 60
}

// readVideoRequest reads a submit: JSON, or multipart/form-data as
// OpenAI's SDKs send it (its files are not read).
func readVideoRequest(ct string, body []byte) (videoRequest, error) {
	var req videoRequest
	mt, params, _ := mime.ParseMediaType(ct)
	if mt != "multipart/form-data" {
		return req, json.Unmarshal(body, &req)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return req, nil
		}
		if err != nil {
			return req, err
		}
		v, err := io.ReadAll(io.LimitReader(p, maxBody))
		if err != nil {
			return req, err
		}
		switch p.FormName() {
		case "model":
			req.Model = string(v)
		case "prompt":
			req.Prompt = string(v)
		case "seconds":
			req.Seconds, _ = json.Marshal(string(v))
		case "size":
			req.Size = string(v)
		}
	}
}

// videoObject is a job as the API shows it, after OpenAI's video object.
type videoObject struct {
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	Model       string    `json:"model"`
	Status      string    `json:"status"`
	Progress    int       `json:"progress"`
	CreatedAt   int64     `json:"created_at"`
	CompletedAt *int64    `json:"completed_at"`
	Seconds     string    `json:"seconds"`
	Size        string    `json:"size"`
	Prompt      string    `json:"prompt"`
	Error       *jobError `json:"error"`
}

// jobError is a failed job's error: its category and what happened.
type jobError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// objectLocked returns j as the API shows it at now, and counts its bill
// the first time it is seen completed.
func (s *Server) objectLocked(j *job, now time.Time) videoObject {
	st, progress := j.stateAt(now, s.cfg.Jobs)
	o := videoObject{ID: j.id, Object: "video", Model: j.model, Status: st, Progress: progress,
		CreatedAt: j.created.Unix(), Seconds: strconv.Itoa(j.seconds), Size: j.size, Prompt: j.prompt}
	switch st {
	case JobCompleted:
		done := j.created.Add(s.cfg.Jobs.QueueTime + s.cfg.Jobs.RunTime).Unix()
		o.CompletedAt = &done
		if !j.billed {
			j.billed = true
			s.stats.completed.Add(1)
			s.stats.seconds.Add(int64(j.seconds))
		}
	case JobFailedNow:
		o.Error = &jobError{Code: cmp.Or(j.failure.Code, "runtime_unavailable"),
			Message: cmp.Or(j.failure.Message, "The video could not be generated: the runtime is unavailable. Try again later.")}
	}
	return o
}

// submitAnswer is what a submit is answered, decided under Server.mu.
type submitAnswer struct {
	video   videoObject
	refusal *Fault // a queue_full or capacity refusal, new or replayed
	lost    FaultKind
	replay  bool
}

// handleVideoSubmit serves POST /v1/videos: it creates a job, or answers
// what the key's first submit was answered.
func (s *Server) handleVideoSubmit(w http.ResponseWriter, r *http.Request) {
	s.stats.receive(apiVideos)
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, err := readVideoRequest(r.Header.Get("Content-Type"), body)
	if err != nil {
		s.badRequest(w, http.StatusBadRequest, "", "", "We could not parse the body of your request. ("+err.Error()+")")
		return
	}
	secs, ok := req.seconds()
	switch {
	case req.Prompt == "":
		s.badRequest(w, http.StatusBadRequest, "prompt", "", "'prompt' is required.")
		return
	case !ok:
		s.badRequest(w, http.StatusBadRequest, "seconds", "", "'seconds' must be a whole number from 1 to 60.")
		return
	case !s.checkModel(w, req.Model):
		return
	}
	now := s.clk.Now()
	s.mu.Lock()
	s.seq++
	f, faulted, extra := s.pickLocked(now.Sub(s.start), jobSubmit)
	s.mu.Unlock()
	if extra > 0 {
		if err := s.sleep(r.Context(), extra); err != nil {
			s.stats.finish(OutcomeCanceled)
			return
		}
	}
	if faulted && upfront(f, false) && f.Kind != QueueFull && f.Kind != Capacity {
		s.writeFault(w, r, f, rateHeaders{})
		return
	}
	if !faulted {
		f = Fault{}
	}
	a, conflict := s.submit(r, &req, secs, sha256.Sum256(body), f)
	if conflict {
		s.badRequest(w, http.StatusUnprocessableEntity, "", "idempotency_key_reused",
			"This Idempotency-Key was used with a different request body.")
		return
	}
	s.answerSubmit(w, r, a)
}

// submit decides a submit under Server.mu: the key's replay, a refusal (a
// fault's or a full queue's, remembered for the key) or a new job. It
// reports conflict for a key reused with another body.
func (s *Server) submit(r *http.Request, req *videoRequest, secs int, sum [sha256.Size]byte, f Fault) (a submitAnswer, conflict bool) {
	account, key := accountOf(r), r.Header.Get("Idempotency-Key")
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var rec *keyRecord
	if key != "" {
		rec = s.jobs.keys[[2]string{account, key}]
		if rec != nil {
			rec.submits++
			if rec.body != sum {
				return a, true
			}
			if rec.refusal != nil {
				return submitAnswer{refusal: rec.refusal, replay: true}, false
			}
			return submitAnswer{video: s.objectLocked(s.jobs.byID[rec.job], now), replay: true}, false
		}
		rec = &keyRecord{account: account, key: key, body: sum, submits: 1}
		s.jobs.keys[[2]string{account, key}] = rec
	}
	if f.Kind != QueueFull && f.Kind != Capacity && s.cfg.Jobs.MaxQueued > 0 &&
		s.unfinishedLocked(account, now) >= s.cfg.Jobs.MaxQueued {
		f = Fault{Kind: QueueFull, Message: "Too many jobs are queued for this account (at most " +
			strconv.Itoa(s.cfg.Jobs.MaxQueued) + "); try again when one has finished."}
	}
	if f.Kind == QueueFull || f.Kind == Capacity {
		if rec != nil {
			rec.refusal = &f
		}
		return submitAnswer{refusal: &f}, false
	}
	j := &job{id: s.newJobIDLocked(), account: account, key: key, model: req.Model, prompt: req.Prompt,
		seconds: secs, size: cmp.Or(req.Size, "720x1280"), created: now}
	if f.Kind == JobFailed {
		j.failure = &f
	}
	s.jobs.byID[j.id] = j
	s.jobs.order = append(s.jobs.order, j)
	s.stats.jobs.Add(1)
	if rec != nil {
		rec.job = j.id
	}
	return submitAnswer{video: s.objectLocked(j, now), lost: f.Kind}, false
}

// answerSubmit writes what submit decided.
func (s *Server) answerSubmit(w http.ResponseWriter, r *http.Request, a submitAnswer) {
	switch {
	case a.refusal != nil:
		s.writeFault(w, r, *a.refusal, rateHeaders{})
		return
	case a.lost == AcceptReset:
		s.writeFault(w, r, Fault{Kind: Reset}, rateHeaders{})
		return
	case a.lost == AcceptHang:
		s.writeFault(w, r, Fault{Kind: Hang}, rateHeaders{})
		return
	}
	s.stats.finish(OutcomeOK)
	if a.replay {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusOK, a.video)
}

// readBody reads a request body under the size bound, or answers 400 (413
// when too large) and reports false.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			s.badRequest(w, http.StatusRequestEntityTooLarge, "", "", "The request body is too large.")
		} else {
			s.badRequest(w, http.StatusBadRequest, "", "", "Could not read the request body.")
		}
		return nil, false
	}
	return body, true
}

// lookup returns the request's account's job id, and false when there is
// none (never created, deleted, or another account's). It requires
// Server.mu held.
func (s *Server) lookup(r *http.Request, id string) (*job, bool) {
	j := s.jobs.byID[id]
	if j == nil || j.deleted || j.account != accountOf(r) {
		return nil, false
	}
	return j, true
}

func notFoundVideo(w http.ResponseWriter, id string) {
	writeErrorParam(w, http.StatusNotFound, "invalid_request_error", "video_not_found", "id",
		"No video found with id '"+id+"'.")
}

// handleVideoGet serves GET /v1/videos/{id}: the job's state now.
func (s *Server) handleVideoGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	now := s.clk.Now()
	s.mu.Lock()
	j, ok := s.lookup(r, id)
	var o videoObject
	if ok {
		o = s.objectLocked(j, now)
	}
	s.mu.Unlock()
	if !ok {
		notFoundVideo(w, id)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// handleVideoByKey serves GET /v1/video_keys/{key}: the job the account
// created under an Idempotency-Key, or 404 when the key created none (it
// was never seen, or its submit was refused).
func (s *Server) handleVideoByKey(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	now := s.clk.Now()
	s.mu.Lock()
	rec := s.jobs.keys[[2]string{accountOf(r), key}]
	var o videoObject
	found := rec != nil && rec.job != "" && !s.jobs.byID[rec.job].deleted
	if found {
		o = s.objectLocked(s.jobs.byID[rec.job], now)
	}
	s.mu.Unlock()
	if !found {
		writeErrorParam(w, http.StatusNotFound, "invalid_request_error", "video_not_found", "key",
			"No video was created with this Idempotency-Key.")
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// handleVideoList serves GET /v1/videos: the account's jobs, newest first.
func (s *Server) handleVideoList(w http.ResponseWriter, r *http.Request) {
	account := accountOf(r)
	now := s.clk.Now()
	s.mu.Lock()
	list := []videoObject{}
	for i := len(s.jobs.order) - 1; i >= 0; i-- {
		if j := s.jobs.order[i]; j.account == account && !j.deleted {
			list = append(list, s.objectLocked(j, now))
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, struct {
		Object  string        `json:"object"`
		Data    []videoObject `json:"data"`
		HasMore bool          `json:"has_more"`
	}{"list", list, false})
}

// handleVideoDelete serves DELETE /v1/videos/{id}.
func (s *Server) handleVideoDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	j, ok := s.lookup(r, id)
	if ok {
		j.deleted = true
	}
	s.mu.Unlock()
	if !ok {
		notFoundVideo(w, id)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{id, "video.deleted", true})
}
