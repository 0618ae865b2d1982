package jobs

import (
	"io"
	"net/http"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// handleImages serves POST /v1/images/generations, answered when the
// images are made, through the alias's ladder with chat's semantics: an
// outage, a throttle or a capacity refusal before the answer goes to the
// next target; the answer streams through once its headers are in. The
// images asked for (n) are priced when the answer comes, against the
// reservation made at admission.
func (j *Jobs) handleImages(w http.ResponseWriter, r *http.Request) {
	client, ok := j.identify(w, r)
	if !ok {
		return
	}
	s, e := j.readSubmission(w, r, client, config.JobImages)
	if e != nil {
		e.write(w)
		return
	}
	rec := record{ID: "image_" + newID()[len("video_"):], Client: client, Alias: s.alias.cfg.Name, Gens: map[string]int{}}
	if j.opts.Reserve != nil {
		est := s.alias.estimate(0, s.body.images)
		release, ok := j.opts.Reserve(client, est)
		if !ok {
			errorf(http.StatusTooManyRequests, "insufficient_quota", "budget_exceeded", "",
				"This request would exceed the client's budget.").write(w)
			return
		}
		j.mu.Lock()
		j.reservations[rec.ID] = release
		j.mu.Unlock()
	}
	t, whole, e := j.generate(w, r, s, &rec)
	cost := 0.0
	if t != nil {
		cost = t.price(0, s.body.images)
		j.observe(Event{Kind: "cost", Client: client, Alias: rec.Alias, Target: t.name, USD: cost})
	}
	j.settle(&rec, cost)
	switch {
	case e != nil:
		e.write(w)
	case !whole:
		panic(http.ErrAbortHandler) // the answer was cut after its headers went out
	}
}

// generate walks the ladder for an images request. It returns the target
// that answered and whether its answer went through whole, or the error
// to answer when none did.
func (j *Jobs) generate(w http.ResponseWriter, r *http.Request, s *submission, rec *record) (*target, bool, *apiError) {
	al := s.alias
	last := errorf(http.StatusServiceUnavailable, "server_error", "no_target", "",
		"No target of model `"+al.cfg.Name+"` can take the request now.")
	for _, t := range al.targets {
		if !t.slots.TryAcquire() {
			last = capError(t, "the gateway's cap on its requests in flight is reached")
			continue
		}
		permit, err := t.submit.Allow()
		if err != nil {
			t.slots.Release()
			continue
		}
		body, ct := s.body.forTarget(t.cfg.Model)
		idem := ""
		if s.idem != "" {
			idem = upstreamKey(s.client+"\x00"+s.idem, t.name, rec.Gens[t.name])
		}
		o, a := j.open(r.Context(), t, call{method: http.MethodPost, url: t.url(t.cfg.SubmitPath, ""), body: body,
			contentType: ct, key: t.pickKey(), idem: idem, timeout: al.cfg.Timeouts.Submit})
		if a.err != nil {
			t.slots.Release()
			if r.Context().Err() != nil {
				permit.Ignore() // the client left
				return nil, true, nil
			}
			permit.Failure()
			last = upstreamError(&a, t.classify.ClassifyError(a.err))
			continue
		}
		if o.resp.StatusCode/100 == 2 {
			permit.Success()
			whole := stream(w, o, al.cfg.Timeouts.Idle)
			o.close()
			t.slots.Release()
			return t, whole, nil
		}
		b, _ := io.ReadAll(io.LimitReader(o.resp.Body, maxAnswer))
		o.close()
		res := answer{status: o.resp.StatusCode, header: o.resp.Header, body: b, sent: true}
		out, e := j.refused(rec, t, permit, &res, t.classify.Classify(res.status, res.header, b))
		last = e
		if out == stopHere {
			return nil, true, e
		}
	}
	return nil, true, last
}
