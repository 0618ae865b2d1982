package jobs

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/limit"
)

// alias is a job alias: its settings and its ladder.
type alias struct {
	cfg     config.JobAlias
	targets []*target
}

// target is one upstream model of a job API with its breakers and cap. Two
// aliases that list the same provider/model share it; the first sets it up.
type target struct {
	name     string // provider/model
	cfg      config.JobTarget
	base     string // the provider's base URL, without a trailing "/"
	header   http.Header
	keys     []string
	classify aierr.Classifier

	// submit is fed by submits' outcomes: outages fail, refusals are
	// ignored.
	submit *breaker.Breaker
	// resubmit is fed by the jobs that ended: completed succeeds, failed
	// with an outage category fails. It gates resubmits.
	resubmit *breaker.Breaker
	// slots holds a slot per job in flight; cap drives its limit.
	slots *limit.Bulkhead
	cap   *limit.Adaptive

	next atomic.Uint64 // key rotation
}

// newAlias builds a's targets, reusing those another alias built.
func (j *Jobs) newAlias(a config.JobAlias) (*alias, error) {
	al := &alias{cfg: a}
	for _, tc := range a.Targets {
		name := tc.Provider + "/" + tc.Model
		if t, ok := j.targets[name]; ok {
			al.targets = append(al.targets, t)
			continue
		}
		t, err := j.newTarget(a, tc, name)
		if err != nil {
			return nil, err
		}
		j.targets[name] = t
		al.targets = append(al.targets, t)
	}
	if len(al.targets) == 0 {
		return nil, fmt.Errorf("jobs: alias %q has no targets", a.Name)
	}
	return al, nil
}

func (j *Jobs) newTarget(a config.JobAlias, tc config.JobTarget, name string) (*target, error) {
	p, ok := j.opts.Providers[tc.Provider]
	if !ok {
		return nil, fmt.Errorf("jobs: alias %q: unknown provider %q", a.Name, tc.Provider)
	}
	t := &target{name: name, cfg: tc, base: strings.TrimSuffix(p.BaseURL, "/"), header: http.Header{}}
	for k, v := range p.Headers {
		t.header.Set(k, v.Value())
	}
	for _, k := range tc.Keys {
		t.keys = append(t.keys, k.Value())
	}
	t.classify = aierr.Classifier{Overrides: p.Overrides.Settings(), Now: j.clk.Now}
	sb := a.Breaker.Settings()
	sb.Name, sb.Clock = "submit "+name, j.clk
	rb := a.ResubmitBreaker.Settings()
	rb.Name, rb.Clock = "resubmit "+name, j.clk
	var err error
	if t.submit, err = breaker.New(sb); err != nil {
		return nil, fmt.Errorf("jobs: alias %q: %w", a.Name, err)
	}
	if t.resubmit, err = breaker.New(rb); err != nil {
		return nil, fmt.Errorf("jobs: alias %q: %w", a.Name, err)
	}
	ceiling := a.MaxInFlight
	if ceiling <= 0 {
		ceiling = config.DefaultJobMaxInFlight
	}
	if t.slots, err = limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: ceiling}); err != nil {
		return nil, fmt.Errorf("jobs: alias %q: %w", a.Name, err)
	}
	if t.cap, err = limit.NewAdaptive(limit.AdaptiveSettings{Min: min(max(a.MinInFlight, 1), ceiling), Max: ceiling,
		Target: t.slots, Clock: j.clk}); err != nil {
		return nil, fmt.Errorf("jobs: alias %q: %w", a.Name, err)
	}
	return t, nil
}

// pickKey returns the index of the key a new job is submitted with; -1
// when the target sends none.
func (t *target) pickKey() int {
	if len(t.keys) == 0 {
		return -1
	}
	return int(t.next.Add(1)-1) % len(t.keys)
}

// url returns the URL of path with {id} or {key} set to v.
func (t *target) url(path, v string) string {
	path = strings.Replace(path, "{id}", url.PathEscape(v), 1)
	path = strings.Replace(path, "{key}", url.PathEscape(v), 1)
	return t.base + path
}

// authorize sets the target's headers and the key at index k on h.
func (t *target) authorize(h http.Header, k int) {
	for name, v := range t.header {
		h[name] = v
	}
	if k >= 0 && k < len(t.keys) {
		h.Set("Authorization", "Bearer "+t.keys[k])
	}
}

// feedResubmit reports a job's end to the resubmit breaker: failed is an
// outage-class failure; ignored ends change nothing.
func (t *target) feedResubmit(v aierr.Verdict) {
	p, err := t.resubmit.Allow()
	if err != nil {
		return // open: the outcome has no window to go to
	}
	switch {
	case v.Kind == aierr.Success:
		p.Success()
	case v.Kind == aierr.Outage:
		p.Failure()
	default:
		p.Ignore()
	}
}

// mayResubmit reports whether the resubmit breaker lets a failed job be
// submitted again.
func (t *target) mayResubmit() bool {
	switch t.resubmit.State() {
	case breaker.StateOpen, breaker.StateForcedOpen:
		return false
	}
	return true
}

// price is what a completed job of secs seconds and n images costs.
func (t *target) price(secs, images int) float64 {
	p := t.cfg.Price
	return p.PerSecond*float64(secs) + p.PerJob + p.PerImage*float64(images)
}
