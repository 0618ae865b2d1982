package sim

import (
	"cmp"
	"crypto/sha256"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Jobs shapes the job API (POST /v1/videos and the routes under it). A
// job is queued for QueueTime, in progress for RunTime, then completed, or
// failed when a job_failed fault hit its submit. Every zero value is a
// default.
type Jobs struct {
	// QueueTime is how long a job stays queued after it is created.
	// 0: it starts at once.
	QueueTime time.Duration
	// RunTime is how long a job is in progress. 0: it ends as soon as it
	// starts.
	RunTime time.Duration
	// MaxQueued is how many unfinished jobs (queued or in progress) one
	// account, an API key, may have; a submit beyond it is refused with a
	// 429 queue_full, which is replayed for its Idempotency-Key. 0: no
	// limit.
	MaxQueued int
	// ContentBytes is the size of a completed job's content. 0: 64 KiB;
	// negative: endless, sent until the client stops reading.
	ContentBytes int64
}

// DefaultContentBytes is the size of a job's content when
// Jobs.ContentBytes is 0.
const DefaultContentBytes = 64 << 10

// The states of a job, as the API names them.
const (
	JobQueued     = "queued"
	JobInProgress = "in_progress"
	JobCompleted  = "completed"
	JobFailedNow  = "failed"
)

// job is one job the API created. Its fields do not change once made but
// deleted and billed, which are guarded by Server.mu.
type job struct {
	id      string
	account string
	key     string // the Idempotency-Key it was created under; "" for none
	model   string
	prompt  string
	seconds int
	size    string
	created time.Time
	failure *Fault // the job_failed fault that hit its submit
	deleted bool
	billed  bool
}

// stateAt returns the job's state and progress (0 to 100) at now.
func (j *job) stateAt(now time.Time, c Jobs) (state string, progress int) {
	t := now.Sub(j.created)
	switch {
	case t < c.QueueTime:
		return JobQueued, 0
	case t < c.QueueTime+c.RunTime:
		return JobInProgress, int(100 * (t - c.QueueTime) / c.RunTime)
	case j.failure != nil:
		return JobFailedNow, 100
	}
	return JobCompleted, 100
}

// keyRecord is what the API remembers for an Idempotency-Key of an
// account: the job it created, or the refusal it answered, replayed to
// every later submit under the key.
type keyRecord struct {
	account, key string
	body         [sha256.Size]byte // of the first submit's body
	job          string            // the job created; "" when refused
	refusal      *Fault            // the queue_full or capacity answered
	submits      int
}

// jobTable holds a Server's jobs and keys. It is guarded by Server.mu.
type jobTable struct {
	byID  map[string]*job
	order []*job                   // by creation
	keys  map[[2]string]*keyRecord // (account, key) → record
}

func newJobTable() jobTable {
	return jobTable{byID: map[string]*job{}, keys: map[[2]string]*keyRecord{}}
}

// unfinishedLocked counts the account's jobs not yet ended at now.
func (s *Server) unfinishedLocked(account string, now time.Time) int {
	n := 0
	for _, j := range s.jobs.order {
		if j.account != account || j.deleted {
			continue
		}
		if st, _ := j.stateAt(now, s.cfg.Jobs); st == JobQueued || st == JobInProgress {
			n++
		}
	}
	return n
}

// accountOf names the account a request is made for: its API key.
func accountOf(r *http.Request) string {
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return k
	}
	return cmp.Or(r.Header.Get("X-Api-Key"), r.Header.Get("Api-Key"))
}

// JobStatus is a job as Server.Jobs reports it.
type JobStatus struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	// Key is the Idempotency-Key the job was created under; "" for none.
	Key    string `json:"key,omitempty"`
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Status string `json:"status"`
	// Seconds is the video length asked for.
	Seconds int  `json:"seconds"`
	Deleted bool `json:"deleted,omitempty"`
}

// KeyStatus is an Idempotency-Key as Server.Keys reports it: how many
// submits came with it and what they were answered.
type KeyStatus struct {
	Account string `json:"account"`
	Key     string `json:"key"`
	// Submits counts the submits that came with the key, the first
	// included, faulted ones too.
	Submits int `json:"submits"`
	// Job is the job the key created; "" when none.
	Job string `json:"job,omitempty"`
	// Refused is the code of the refusal replayed for the key
	// (queue_full, provider_capacity_exceeded); "" when none.
	Refused string `json:"refused,omitempty"`
}

// Jobs returns every job created, in creation order, with its state now.
func (s *Server) Jobs() []JobStatus {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]JobStatus, len(s.jobs.order))
	for i, j := range s.jobs.order {
		st, _ := j.stateAt(now, s.cfg.Jobs)
		out[i] = JobStatus{ID: j.id, Account: j.account, Key: j.key, Model: j.model, Prompt: j.prompt, Status: st, Seconds: j.seconds, Deleted: j.deleted}
	}
	return out
}

// Keys returns every Idempotency-Key the job API has seen, by account
// then key.
func (s *Server) Keys() []KeyStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]KeyStatus, 0, len(s.jobs.keys))
	for _, k := range s.jobs.keys {
		ks := KeyStatus{Account: k.account, Key: k.key, Submits: k.submits, Job: k.job}
		if k.refusal != nil {
			ks.Refused = refusalCode(k.refusal.Kind)
		}
		out = append(out, ks)
	}
	slices.SortFunc(out, func(a, b KeyStatus) int {
		return cmp.Or(strings.Compare(a.Account, b.Account), strings.Compare(a.Key, b.Key))
	})
	return out
}

// refusalCode is the error code of a queue_full or capacity refusal.
func refusalCode(k FaultKind) string {
	if k == Capacity {
		return "provider_capacity_exceeded"
	}
	return "queue_full"
}

// jobReport is the body of GET /sim/jobs.
type jobReport struct {
	Jobs []JobStatus `json:"jobs"`
	Keys []KeyStatus `json:"keys"`
}

// handleJobs serves GET /sim/jobs: every job and Idempotency-Key.
func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, jobReport{Jobs: s.Jobs(), Keys: s.Keys()})
}

// newJobIDLocked returns the id of the next job.
func (s *Server) newJobIDLocked() string {
	return "video_sim_" + strconv.Itoa(len(s.jobs.order)+1)
}

func (c Jobs) contentBytes() int64 { return cmp.Or(c.ContentBytes, DefaultContentBytes) }
