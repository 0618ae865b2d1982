package jobs

// Leases make a fleet's jobs survive the replica that took them
// (internal/fleet's Work("job") through the gateway): each job is owned
// by one replica under a lease its heartbeat renews, with an epoch that
// every write of its record and its settlement is checked against. When
// a job's owner stops (killed, hung, cut off), its lease ends and the
// next replica that touches the job (a client's request, or its own
// background poll, which looks for such jobs) adopts it: it polls the
// provider with the job's stored target, upstream id and request,
// settles its cost, serves its content and deletes it. An owner that
// comes back finds its writes refused and yields the job: it stops
// polling it and forgets its own record.
type Leases interface {
	// Claim makes this replica the owner of new job id; it returns the
	// epoch (0 while Redis has not confirmed it).
	Claim(id string) int64
	// Holds reports whether this replica owns job id.
	Holds(id string) (epoch int64, ok bool)
	// Adopt takes job id over if its owner's lease has ended; known is
	// the epoch this replica last knew it under. Not adopted, holder is
	// the epoch of the live lease, 0 when Redis cannot say; gone is true
	// when the fleet no longer has the job.
	Adopt(id string, known int64) (epoch int64, adopted bool, holder int64, gone bool)
	// Orphans returns up to n jobs whose lease has ended.
	Orphans(n int) []string
	// Settle reports whether the job's cost is this replica's to settle:
	// true once for the fleet; an error is Redis's (ask again later).
	Settle(id string) (bool, error)
	// Finish marks job id over (deleted, forgotten): no one adopts it.
	Finish(id string)
	// Release stops holding job id without finishing it.
	Release(id string)
}

// orphansPerSweep bounds the jobs a sweep adopts.
const orphansPerSweep = 32

// holding reports whether this replica runs job id now: always without
// leases; with them, while it holds the job's lease.
func (j *Jobs) holding(id string) bool {
	if j.opts.Leases == nil {
		return true
	}
	_, ok := j.opts.Leases.Holds(id)
	j.mu.Lock()
	defer j.mu.Unlock()
	return ok && j.mine[id]
}

// claim makes this replica the owner of the new job rec.
func (j *Jobs) claim(rec *record) {
	if j.opts.Leases == nil {
		return
	}
	rec.Epoch = j.opts.Leases.Claim(rec.ID)
	j.mu.Lock()
	j.mine[rec.ID] = true
	j.mu.Unlock()
}

// takeUp settles the fate of a record this replica has but does not hold
// (kept from before a restart, or lost to another replica): it adopts the
// job if its lease has ended, yields it if another replica has adopted
// it, and otherwise leaves it be. It reports the record and whether this
// replica now runs the job.
func (j *Jobs) takeUp(rec record) (record, bool) {
	epoch, adopted, holder, gone := j.opts.Leases.Adopt(rec.ID, rec.Epoch)
	switch {
	case adopted:
		if f, ok := j.fromFleet(rec.ID); ok && f.Epoch > rec.Epoch {
			rec = f // written by an adopter since: newer than this replica's file
		}
		return j.adopted(rec, epoch), true
	case gone:
		return rec, false
	case holder > rec.Epoch:
		j.yield(rec)
		if f, ok := j.fromFleet(rec.ID); ok {
			return f, false
		}
	}
	return rec, false
}

// adoptFleet adopts a job this replica has no record of, from the
// fleet's record rec, if its owner's lease has ended.
func (j *Jobs) adoptFleet(rec record) (record, bool) {
	if j.opts.Leases == nil {
		return rec, false
	}
	epoch, adopted, _, _ := j.opts.Leases.Adopt(rec.ID, rec.Epoch)
	if !adopted {
		return rec, false
	}
	if f, ok := j.fromFleet(rec.ID); ok {
		rec = f // read after the adoption fenced the old owner's writes
	}
	return j.adopted(rec, epoch), true
}

// adopted takes up job rec, adopted under epoch: it holds a slot on its
// target while in flight, a submit cut by its owner's end is a job whose
// answer was lost, and a job seen ending (its settlement cut) is polled
// again to be settled.
func (j *Jobs) adopted(rec record, epoch int64) record {
	rec.Epoch = epoch
	switch {
	case rec.State == stateSubmitting && rec.Upstream != "" && rec.Object != nil:
		rec.State = stateInProgress // seen ending: the next poll settles it
	case rec.State == stateSubmitting:
		rec.State = stateUnknown
		rec.Error = lostError(&rec)
	}
	if t := j.targets[rec.Target]; t != nil && live(rec.State) {
		t.slots.TryAcquire() // the cap may have no room: the job runs all the same
	}
	j.mu.Lock()
	j.mine[rec.ID] = true
	j.mu.Unlock()
	j.persist(&rec)
	j.log.Info("jobs: adopted a job whose replica stopped", "id", rec.ID, "epoch", epoch, "state", rec.State)
	return rec
}

// yield gives up a job another replica has adopted: its slot here, its
// reservation here (released at nothing: the adopter settles the cost)
// and its record here.
func (j *Jobs) yield(rec record) {
	j.mu.Lock()
	was := j.mine[rec.ID]
	delete(j.mine, rec.ID)
	j.mu.Unlock()
	if t := j.targets[rec.Target]; was && t != nil && live(rec.State) {
		t.slots.Release()
	}
	j.settle(&rec, 0)
	j.opts.Leases.Release(rec.ID)
	if err := j.store.remove(rec.ID); err != nil {
		j.log.Error("jobs: forgetting a job adopted elsewhere", "id", rec.ID, "err", err)
	}
	j.log.Info("jobs: yielded a job another replica adopted", "id", rec.ID)
}

// settleOnce reports whether rec's cost is to be counted here (charge),
// and whether its settlement is over (done): without leases, always both;
// with them, the fleet says which replica settles it, once. Not done, the
// sweep asks again.
func (j *Jobs) settleOnce(rec *record) (charge, done bool) {
	if j.opts.Leases == nil {
		return true, true
	}
	ok, err := j.opts.Leases.Settle(rec.ID)
	switch {
	case err != nil:
		return false, false
	case ok:
		return true, true
	case j.holding(rec.ID):
		return false, true // settled under an earlier epoch
	}
	return false, false // lost: the adopter settles it
}

// adoptOrphans adopts the jobs whose owner's lease has ended, for the
// sweep: the bound on a dead replica's jobs waiting is its lease and one
// poll interval.
func (j *Jobs) adoptOrphans() {
	if j.opts.Leases == nil {
		return
	}
	for _, id := range j.opts.Leases.Orphans(orphansPerSweep) {
		if j.ctx.Err() != nil {
			return
		}
		if rec, here := j.store.get(id); here {
			if !j.holding(id) {
				j.takeUp(rec)
			}
			continue
		}
		if rec, ok := j.fromFleet(id); ok {
			j.adoptFleet(rec)
		}
	}
}

// forgetLease ends job id's lease for good, as its record goes (past
// retention, or a refusal kept for nothing).
func (j *Jobs) forgetLease(id string) {
	if j.opts.Leases == nil {
		return
	}
	j.opts.Leases.Finish(id)
	j.mu.Lock()
	delete(j.mine, id)
	j.mu.Unlock()
}
