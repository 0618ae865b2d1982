package config

import (
	"cmp"
	"strconv"
)

// jobDefaults fills the defaults of jobs[i] and its targets; breaker is
// defaults.breaker as the file wrote it.
func (c *Config) jobDefaults(i int, breaker Breaker) {
	l, a := c.lines, &c.Jobs[i]
	path := "jobs[" + strconv.Itoa(i) + "]"
	a.API = cmp.Or(a.API, JobVideos)
	inherit(&a.Breaker, breaker, path+".breaker", l)
	breakerDefaults(&a.Breaker)
	breakerDefaults(&a.ResubmitBreaker)
	if !l.has(path + ".resubmits") {
		a.Resubmits = DefaultJobResubmits
	}
	a.MaxInFlight = cmp.Or(a.MaxInFlight, DefaultJobMaxInFlight)
	a.MinInFlight = cmp.Or(a.MinInFlight, DefaultJobMinInFlight)
	a.PollInterval = cmp.Or(a.PollInterval, DefaultJobPollInterval)
	a.Retention = cmp.Or(a.Retention, DefaultJobRetention)
	a.Timeouts.Submit = cmp.Or(a.Timeouts.Submit, DefaultJobSubmit)
	a.Timeouts.Poll = cmp.Or(a.Timeouts.Poll, DefaultJobPoll)
	a.Timeouts.Idle = cmp.Or(a.Timeouts.Idle, DefaultJobIdle)
	submit := "/videos"
	if a.API == JobImages {
		submit = "/images/generations"
	}
	for j := range a.Targets {
		t := &a.Targets[j]
		t.SubmitPath = cmp.Or(t.SubmitPath, submit)
		t.PollPath = cmp.Or(t.PollPath, "/videos/{id}")
		t.ContentPath = cmp.Or(t.ContentPath, "/videos/{id}/content")
		if p, ok := c.Providers[t.Provider]; ok && len(t.Keys) == 0 {
			t.Keys = p.Keys
		}
	}
}
