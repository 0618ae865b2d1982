package gateway

import (
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/jobs"
)

// startJobs serves the configuration's job aliases (jobs:) beside the
// chat routes: OpenAI's /v1/videos routes and /v1/images/generations, for
// the same clients, their model lists and their budgets. Job aliases are
// read at start: a reload does not change them (their records and the
// jobs in flight belong to the running instance).
func (s *Server) startJobs(cfg *config.Config) error {
	if len(cfg.Jobs) == 0 {
		return nil
	}
	var shared jobs.Shared
	var leases jobs.Leases
	if s.fleet != nil {
		shared = s.fleet                        // any replica answers for any job
		leases = jobLeases{s.fleet.Work("job")} // and adopts it when its replica dies
	}
	j, err := jobs.New(jobs.Options{
		Aliases: cfg.Jobs, Providers: cfg.Providers, Dir: cfg.JobsDir, Shared: shared, Leases: leases,
		Clock: s.opts.Clock, Logger: s.log, Transport: s.opts.Transport, MaxBody: int64(cfg.Server.MaxBodyBytes),
		Identify: s.Identify,
		Allowed:  func(client, alias string) bool { return s.state().clientNamed(client).allows(alias) },
		Reserve:  s.reserveFor,
	})
	if err != nil {
		return err
	}
	s.jobs = j
	j.Register(s.mux)
	return nil
}

// reserveFor holds up to usd of client's budget until the returned
// release settles it with what was spent; false when it does not fit.
// A client without a budget (or none configured) always fits.
func (s *Server) reserveFor(client string, usd float64) (release func(actual float64), ok bool) {
	c := s.state().clientNamed(client)
	if c == nil || c.budget == nil {
		return func(float64) {}, true
	}
	b := c.budget
	res, which, _ := b.reserve(usd)
	if which != "" {
		return nil, false
	}
	return func(actual float64) { b.settleReservation(res, usd, actual) }, true
}

// clientNamed returns the configured client called name, or nil.
func (st *state) clientNamed(name string) *client {
	for i := range st.clients {
		if st.clients[i].name == name && name != "" {
			return &st.clients[i]
		}
	}
	return nil
}

// jobLeases are the fleet's leases on jobs, as package jobs asks for them.
type jobLeases struct{ *fleet.Work }

func (l jobLeases) Adopt(id string, known int64) (epoch int64, adopted bool, holder int64, gone bool) {
	a := l.Work.Adopt(id, known)
	return a.Epoch, a.Adopted, a.Holder, a.Gone
}
