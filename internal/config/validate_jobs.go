package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// checkJob checks jobs[i]. aliases holds the alias names seen so far, the
// models' included: a job alias may not share a name with one.
func (c *Config) checkJob(r *report, i int, aliases map[string]string, defaultsOK bool) {
	a := c.Jobs[i]
	path := "jobs[" + strconv.Itoa(i) + "]"
	switch {
	case a.Name == "":
		r.field(path+".name", "job alias has no name")
	case aliases[a.Name] != "":
		r.field(path+".name", "duplicate alias "+quote(a.Name)+" (first "+r.place(aliases[a.Name])+")")
	case strings.Contains(a.Name, "/"):
		r.field(path+".name", "alias "+quote(a.Name)+" has a \"/\", which names provider/model")
	default:
		aliases[a.Name] = path + ".name"
	}
	if !slices.Contains(jobAPIs, a.API) {
		r.field(path+".api", "unknown job API "+quote(string(a.API))+" (known: videos, images)")
	}
	if len(a.Targets) == 0 {
		r.field(path+".targets", "job alias "+quote(a.Name)+" has no targets")
	}
	for j, t := range a.Targets {
		c.checkJobTarget(r, path+".targets["+strconv.Itoa(j)+"]", t, a.API)
	}
	if defaultsOK || r.lines.has(path+".breaker") {
		checkBreaker(r, path+".breaker", a.Breaker)
	}
	checkBreaker(r, path+".resubmit_breaker", a.ResubmitBreaker)
	negatives(r, path, reflect.ValueOf(a))
	negatives(r, path+".timeouts", reflect.ValueOf(a.Timeouts))
	if a.MinInFlight > a.MaxInFlight && !r.failed(path+".max_in_flight") {
		r.field(path+".min_in_flight", "is "+strconv.Itoa(a.MinInFlight)+", above max_in_flight ("+strconv.Itoa(a.MaxInFlight)+")")
	}
}

// checkJobsDir checks jobs_dir: set, it is needed by a job alias.
func (c *Config) checkJobsDir(r *report) {
	if c.JobsDir != "" && len(c.Jobs) == 0 {
		r.field("jobs_dir", "is set, but there are no job aliases (jobs) to record")
	}
}

// checkJobTarget checks a job alias's target at path.
func (c *Config) checkJobTarget(r *report, path string, t JobTarget, api JobAPI) {
	switch p, ok := c.Providers[t.Provider]; {
	case t.Provider == "":
		r.field(path+".provider", "target has no provider")
	case !ok && !r.failed("providers"):
		r.field(path+".provider", "unknown provider "+quote(t.Provider)+" (known: "+names(sortedKeys(c.Providers))+")")
	case ok && p.Type != TypeOpenAI && !r.failed("providers."+t.Provider+".type"):
		r.field(path+".provider", "provider "+quote(t.Provider)+" is of type "+string(p.Type)+"; job APIs need type openai")
	}
	if t.Model == "" {
		r.field(path+".model", "target has no model")
	}
	checkName(r, path+".model", "model name", t.Model)
	checkJobPath(r, path+".submit_path", t.SubmitPath, "")
	if api == JobImages {
		for _, f := range []string{"poll_path", "content_path", "lookup_path"} {
			if r.lines.has(path + "." + f) {
				r.field(path+"."+f, "does not apply to the images API, which answers at once")
			}
		}
	} else {
		checkJobPath(r, path+".poll_path", t.PollPath, "{id}")
		checkJobPath(r, path+".content_path", t.ContentPath, "{id}")
		if t.LookupPath != "" {
			checkJobPath(r, path+".lookup_path", t.LookupPath, "{key}")
		}
	}
	negatives(r, path+".price", reflect.ValueOf(t.Price))
	if r.lines.has(path + ".keys") {
		for i, k := range t.Keys {
			if strings.TrimSpace(string(k)) == "" {
				r.field(path+".keys["+strconv.Itoa(i)+"]", "empty key")
			}
		}
	}
}

// checkJobPath checks a path of a job API: it starts with "/", holds no
// query or fragment, and holds the placeholder want once ("" for none).
func checkJobPath(r *report, path, p, want string) {
	switch {
	case !strings.HasPrefix(p, "/"):
		r.field(path, "must start with \"/\" (it is joined to the provider's base_url), got "+quote(p))
	case strings.ContainsAny(p, "?#"):
		r.field(path, "must be a path, without a query or fragment, got "+quote(p))
	case want != "" && strings.Count(p, want) != 1:
		r.field(path, "must hold "+want+" once, got "+quote(p))
	case want == "" && strings.ContainsAny(p, "{}"):
		r.field(path, "takes no placeholder, got "+quote(p))
	}
}
