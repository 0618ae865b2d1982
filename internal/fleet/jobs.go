package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A long-running job's record (internal/jobs) is shared so that any
// replica answers for it: {prefix}{job:<id>} holds the record as its
// replica last wrote it, and {prefix}{jobk:<sha256 of client and key>}
// the id a client's Idempotency-Key made, both for JobTTL. Records go out
// with the next sync round; a replica that has not got a record reads it
// (one GET bounded by Timeout). The replica that owns a job (under its
// lease, work.go) polls, settles and deletes it; the others answer from
// its record, and adopt the job when its owner's lease ends.

// JobTTL is how long the fleet keeps a job's record after its last change.
const JobTTL = 7 * 24 * time.Hour

// jobPuts are the job records written here and not yet sent, bounded in
// bytes.
type jobPuts struct {
	mu      sync.Mutex
	pending map[string]jobPut // id → record
	bytes   int
}

type jobPut struct {
	record      []byte
	client, key string
}

// maxPendingJobBytes bounds the records waiting for a round: past it, the
// newest stay this replica's until it writes them again.
const maxPendingJobBytes = 32 << 20

// PutJob shares job id's record (client's, made under Idempotency-Key key,
// "" for none) with the fleet; it goes with the next sync round.
func (f *Fleet) PutJob(id, client, key string, record []byte) {
	f.jobs.mu.Lock()
	defer f.jobs.mu.Unlock()
	if f.jobs.pending == nil {
		f.jobs.pending = map[string]jobPut{}
	}
	old := len(f.jobs.pending[id].record)
	if f.jobs.bytes-old+len(record) > maxPendingJobBytes {
		return
	}
	f.jobs.pending[id] = jobPut{record: record, client: client, key: key}
	f.jobs.bytes += len(record) - old
}

// GetJob returns job id's record as the fleet keeps it, if any (and Redis
// answers within Timeout).
func (f *Fleet) GetJob(id string) ([]byte, bool) {
	ctx, cancel := f.ctx()
	defer cancel()
	v, err := f.rdb.Get(ctx, f.jobKey(id)).Bytes()
	if !f.result("job_get", err) {
		f.fallback("job_get")
		return nil, false
	}
	return v, err == nil
}

// JobByKey returns the id of the job client's Idempotency-Key key made,
// if the fleet knows it.
func (f *Fleet) JobByKey(client, key string) (string, bool) {
	ctx, cancel := f.ctx()
	defer cancel()
	v, err := f.rdb.Get(ctx, f.jobIdemKey(client, key)).Result()
	if !f.result("job_get", err) {
		f.fallback("job_get")
		return "", false
	}
	return v, err == nil
}

func (f *Fleet) jobKey(id string) string { return f.o.Prefix + "{job:" + id + "}" }

func (f *Fleet) jobIdemKey(client, key string) string {
	h := sha256.Sum256([]byte(client + "\x00" + key))
	return f.o.Prefix + "{jobk:" + hex.EncodeToString(h[:]) + "}"
}

// sendJobs adds the pending records to pipe; the function it returns
// keeps for the next round those Redis did not take. With the jobs leased
// (Work("job")), a record is written only under this replica's lease: a
// job another replica adopted is not written, and is no longer held here.
func (f *Fleet) sendJobs(pipe redis.Pipeliner, ctx context.Context) func() {
	f.jobs.mu.Lock()
	batch := f.jobs.pending
	f.jobs.pending, f.jobs.bytes = nil, 0
	f.jobs.mu.Unlock()
	f.mu.Lock()
	w := f.works["job"]
	f.mu.Unlock()
	sets := make(map[string]func() error, len(batch))
	for id, p := range batch {
		if w != nil {
			sets[id] = w.putFenced(pipe, ctx, id, p.record, JobTTL)
		} else {
			sets[id] = pipe.Set(ctx, f.jobKey(id), p.record, JobTTL).Err
		}
		if p.key != "" {
			pipe.Set(ctx, f.jobIdemKey(p.client, p.key), id, JobTTL)
		}
	}
	return func() {
		for id, read := range sets {
			if err := read(); err != nil && !errors.Is(err, ErrLost) {
				f.requeueJob(id, batch[id])
			}
		}
	}
}

// requeueJob keeps p for the next round, unless a newer record of id
// waits.
func (f *Fleet) requeueJob(id string, p jobPut) {
	f.jobs.mu.Lock()
	defer f.jobs.mu.Unlock()
	if _, newer := f.jobs.pending[id]; newer {
		return
	}
	if f.jobs.pending == nil {
		f.jobs.pending = map[string]jobPut{}
	}
	f.jobs.pending[id] = p
	f.jobs.bytes += len(p.record)
}
