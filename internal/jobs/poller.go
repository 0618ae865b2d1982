package jobs

// resume takes up the jobs recorded before a restart: a job in flight
// takes its slot on its target again, and a submit cut by the restart is
// a job whose answer was lost (it may exist; a retry with its key
// resumes it). With leases the records wait to be adopted (takeUp): the
// fleet may have given them to another replica meanwhile.
func (j *Jobs) resume() {
	if j.opts.Leases != nil {
		return
	}
	for _, rec := range j.store.all(func(r *record) bool { return !ended(r.State) }) {
		t := j.targets[rec.Target]
		switch {
		case live(rec.State) && t != nil:
			t.slots.TryAcquire() // the cap may have no room for every job: they run all the same
		case rec.State == stateSubmitting:
			rec.State = stateUnknown
			rec.Error = lostError(&rec)
			j.persist(&rec)
		}
	}
}

// pollLoop polls, every pollEvery, the jobs no client has polled for
// their alias's poll interval, and forgets the jobs past retention. It
// runs until Close.
func (j *Jobs) pollLoop() {
	defer close(j.done)
	every := j.pollEvery()
	timer := j.clk.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-j.ctx.Done():
			return
		case <-timer.C():
		}
		j.sweep()
		timer.Reset(every)
	}
}

// sweep is one round of pollLoop; with leases it first adopts the jobs
// whose owner stopped.
func (j *Jobs) sweep() {
	j.adoptOrphans()
	now := j.clk.Now()
	for _, rec := range j.store.all(func(*record) bool { return true }) {
		if j.ctx.Err() != nil {
			return
		}
		al := j.aliases[rec.Alias]
		if al == nil {
			continue
		}
		past := ended(rec.State) && now.Sub(rec.Finished) >= al.cfg.Retention ||
			!ended(rec.State) && !live(rec.State) && now.Sub(rec.Created) >= al.cfg.Retention
		if !j.holding(rec.ID) {
			if past {
				j.store.remove(rec.ID) // another's, or no one's: only this copy goes
				continue
			}
			if rec.State == stateDeleted {
				continue
			}
			var runs bool
			if rec, runs = j.takeUp(rec); !runs {
				continue
			}
		}
		switch {
		case live(rec.State) && now.Sub(rec.Polled) >= al.cfg.PollInterval:
			j.refresh(j.ctx, rec)
		case past:
			j.expire(rec)
		case ended(rec.State) && !rec.Settled:
			j.finish(&rec, j.targets[rec.Target], rec.Cost) // Redis could not confirm it before
		}
	}
}

// expire forgets a record past retention. A job never settled (its
// answer lost, never resumed) is charged its reservation: it may have
// run.
func (j *Jobs) expire(rec record) {
	if !rec.Settled {
		cost := 0.0
		if rec.State == stateUnknown {
			cost = rec.Reserved
		}
		if charge, _ := j.settleOnce(&rec); !charge {
			cost = 0
		}
		j.settle(&rec, cost)
	}
	j.forgetLease(rec.ID)
	if err := j.store.remove(rec.ID); err != nil {
		j.log.Error("jobs: forgetting a job", "id", rec.ID, "err", err)
	}
}
