package config

import (
	"cmp"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
	"github.com/fuseboxhq/fusebox/retry"
)

// validate checks c, defaults filled, and reports every problem to r.
func (c *Config) validate(r *report) {
	c.checkListen(r)
	c.checkState(r)
	c.checkCORS(r)
	negatives(r, "responses", reflect.ValueOf(c.Responses))
	if negatives(r, "batch", reflect.ValueOf(c.Batch)); c.Batch.Dir == "" && c.Batch != (Batch{}) {
		r.field("batch", "set without a dir, so the Files and Batch APIs stay off; give batch.dir")
	}
	negatives(r, "otel", reflect.ValueOf(c.OTel))
	c.checkKeysAndLog(r)
	if sr := c.OTel.SampleRatio; sr > 1 {
		r.field("otel.sample_ratio", "must be at most 1 (every trace), got "+strconv.FormatFloat(sr, 'g', -1, 64))
	}
	if p := c.OTel.Protocol; p != "" && p != "http/protobuf" {
		r.field("otel.protocol", "unknown protocol "+strconv.Quote(p)+" (built in: http/protobuf)")
	}
	if len(c.Providers) == 0 {
		r.field("providers", "no providers configured (want at least one)")
	}
	if len(c.Models) == 0 {
		r.field("models", "at least one model alias is required")
	}
	for _, name := range sortedKeys(c.Providers) {
		c.checkProvider(r, name)
	}
	c.checkTimeouts(r, "defaults.timeouts", c.Defaults.Timeouts)
	before := len(r.errs)
	checkBreaker(r, "defaults.breaker", c.Defaults.Breaker)
	checkRetry(r, "defaults.retry", c.Defaults.Retry)
	defaultsOK := len(r.errs) == before
	aliases := map[string]string{} // name → path
	for i := range c.Models {
		c.checkModel(r, i, aliases, defaultsOK)
	}
	for i := range c.Jobs {
		c.checkJob(r, i, aliases, defaultsOK)
	}
	c.checkJobsDir(r)
	c.checkModelIDs(r)
	c.checkClients(r, aliases)
	c.checkMCP(r)
	negatives(r, "cache", reflect.ValueOf(c.Cache))
	negatives(r, "idempotency", reflect.ValueOf(c.Idempotency))
	negatives(r, "server", reflect.ValueOf(c.Server))
}

// checkClients checks the clients; aliases are the alias names, to path.
func (c *Config) checkClients(r *report, aliases map[string]string) {
	clientNames, clientKeys := map[string]string{}, map[Secret]string{}
	for i, cl := range c.Clients {
		p := "clients[" + strconv.Itoa(i) + "]"
		switch {
		case cl.Name == "":
			r.field(p+".name", "client has no name")
		case clientNames[cl.Name] != "":
			r.field(p+".name", "duplicate client "+quote(cl.Name)+" (first "+r.place(clientNames[cl.Name])+")")
		default:
			clientNames[cl.Name] = p + ".name"
		}
		switch {
		case cl.Key == "":
			r.field(p+".key", "client has no key")
		case clientKeys[cl.Key] != "":
			r.field(p+".key", "same key as "+strings.TrimSuffix(clientKeys[cl.Key], ".key")+" ("+r.place(clientKeys[cl.Key])+")")
		default:
			clientKeys[cl.Key] = p + ".key"
		}
		if cl.Weight < 1 {
			r.field(p+".weight", "must be at least 1")
		}
		for j, m := range cl.Models {
			if msg := c.checkModelRef(r, m, aliases); msg != "" {
				r.field(p+".models["+strconv.Itoa(j)+"]", msg)
			}
		}
		checkLimits(r, p+".limits", cl.Limits)
		negatives(r, p+".budget", reflect.ValueOf(cl.Budget))
	}
}

// place says where a field is, "on line N", for "first …" messages.
func (r *report) place(field string) string {
	return "on line " + strconv.Itoa(r.lines.of(field))
}

func (c *Config) checkCORS(r *report) {
	negatives(r, "cors", reflect.ValueOf(c.CORS))
	for i, o := range c.CORS.Origins {
		path := "cors.origins[" + strconv.Itoa(i) + "]"
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			r.field(path, "bad origin "+strconv.Quote(o)+" (want \"*\" or scheme://host[:port], e.g. https://app.example.com)")
		}
	}
	for i, h := range c.CORS.Headers {
		if !validHeaderName(h) {
			r.field("cors.headers["+strconv.Itoa(i)+"]", "not a header name: "+strconv.Quote(h))
		}
	}
	if len(c.CORS.Origins) == 0 && (len(c.CORS.Headers) > 0 || c.CORS.MaxAge != 0) {
		r.field("cors", "set without origins, so it allows nothing; list the origins (or \"*\")")
	}
	for i, h := range c.Server.ForwardHeaders {
		switch path := "server.forward_headers[" + strconv.Itoa(i) + "]"; {
		case !validHeaderName(h):
			r.field(path, "not a header name: "+strconv.Quote(h))
		case NeverForwarded(textproto.CanonicalMIMEHeaderKey(h)):
			r.field(path, h+" is never passed to an upstream (a credential, the connection's own, or the gateway's)")
		}
	}
}

func (c *Config) checkListen(r *report) {
	host, port, err := net.SplitHostPort(c.Listen)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsAny(host, " /") {
		r.field("listen", "bad listen address "+quote(c.Listen)+" (want host:port, e.g. 127.0.0.1:8080 or :8080)")
	}
}

func (c *Config) checkState(r *report) {
	if c.State == "memory" {
		if r.failed("state") {
			return // the file meant another state
		}
		if f := c.Fleet; f.Prefix != "" || f.Timeout != 0 || f.Sync != 0 || len(f.Addrs) > 0 || f.Cluster || f.MasterName != "" || f.Lease != 0 {
			r.field("fleet", "set with state: memory, where nothing is shared; set state: redis://host:port/db, or remove fleet")
		}
		return
	}
	negatives(r, "fleet", reflect.ValueOf(c.Fleet))
	if sync := cmp.Or(c.Fleet.Sync, 50*time.Millisecond); c.Fleet.Lease > 0 && c.Fleet.Lease < 2*sync {
		r.field("fleet.lease", "must be at least twice fleet.sync ("+sync.String()+"), or a live replica loses its work between two renewals; got "+c.Fleet.Lease.String())
	}
	if c.Fleet.Cluster && c.Fleet.MasterName != "" {
		r.field("fleet.master_name", "set with fleet.cluster: a Redis Cluster has no Sentinel master; choose one")
	}
	u, err := url.Parse(string(c.State))
	ok := err == nil && (u.Scheme == "redis" || u.Scheme == "rediss") && u.Host != "" && u.Opaque == ""
	if ok && u.Path != "" && u.Path != "/" {
		_, derr := strconv.Atoi(strings.TrimPrefix(u.Path, "/"))
		ok = derr == nil
	}
	if !ok {
		r.field("state", "bad state "+quote(c.State.String())+" (want memory, or redis://host:port/db, or rediss://… for TLS)")
	}
}

// UnsupportableFields are the request fields a provider may be said not
// to serve (Provider.Unsupported).
var UnsupportableFields = []string{"n", "response_format", "logprobs", "top_logprobs", "tools", "tool_choice",
	"parallel_tool_calls", "reasoning_effort", "audio", "modalities", "prediction", "seed"}

func (c *Config) checkProvider(r *report, name string) {
	p := c.Providers[name]
	path := "providers." + name
	for i, f := range p.Unsupported {
		if !slices.Contains(UnsupportableFields, f) {
			r.field(path+".unsupported["+strconv.Itoa(i)+"]", "unknown field "+strconv.Quote(f)+" (known: "+strings.Join(UnsupportableFields, ", ")+")")
		}
	}
	switch {
	case name == "":
		r.field(path, "provider has an empty name")
	case !printableASCII(name) || len(name) > maxNameLen:
		checkName(r, path, "provider name", name)
	case strings.ContainsAny(name, "/ "):
		r.field(path, "provider name "+quote(name)+" cannot contain \"/\" or spaces")
	}
	switch {
	case slices.Contains(providerTypes, p.Type):
	case p.Type == "":
		r.field(path+".type", "provider has no type (want "+typeNames(", ")+")")
	case isGoogle(string(p.Type)):
		r.field(path+".type", "unknown provider type "+quote(string(p.Type))+" (known: "+typeNames(", ")+"); Google AI Studio is type: gemini, Vertex AI type: vertex")
	default:
		r.field(path+".type", "unknown provider type "+quote(string(p.Type))+" (known: "+typeNames(", ")+")")
	}
	if p.BaseURL != "" || p.Type == TypeOpenAI || p.Type == TypeAnthropic || p.Type == TypeGemini {
		checkURL(r, path+".base_url", p.BaseURL)
	}
	checkCloud(r, path, p)
	for i, k := range p.Keys {
		if strings.TrimSpace(string(k)) == "" {
			r.field(path+".keys["+strconv.Itoa(i)+"]", "empty key")
		}
	}
	c.checkTimeouts(r, path+".timeouts", p.Timeouts)
	if r.lines.has(path + ".timeouts.deadline") {
		r.field(path+".timeouts.deadline", "deadline bounds a whole request, across targets: set it in the alias's timeouts or in defaults.timeouts")
	}
	checkAuthRest(r, path, p)
	checkLimits(r, path+".limits", p.Limits)
	for _, status := range sortedKeys(p.Overrides.Status) {
		if status < 100 || status > 599 {
			r.field(path+".overrides.status."+strconv.Itoa(status), "not an HTTP status (want 100 to 599)")
		}
	}
}

// checkAuthRest checks how long a refused key rests and how often it is
// checked meanwhile.
func checkAuthRest(r *report, path string, p Provider) {
	switch {
	case p.AuthRest < 0:
		r.field(path+".auth_rest", "must not be negative, got "+p.AuthRest.String())
	case p.AuthRest == 0:
		r.field(path+".auth_rest", "must be above 0: a refused key stays out this long (default 5m)")
	}
	switch probe := p.AuthProbe; {
	case probe < 0:
		r.field(path+".auth_probe", "must not be negative, got "+probe.String())
	case probe > 0 && probe < time.Second:
		r.field(path+".auth_probe", "must be at least 1s, or 0 for no checks, got "+probe.String())
	case probe > 0 && p.AuthRest > 0 && probe >= p.AuthRest:
		r.field(path+".auth_probe", "auth_probe ("+probe.String()+") is not below auth_rest ("+p.AuthRest.String()+"): the key would be back before its first check")
	}
}

func checkURL(r *report, path, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.field(path, "bad URL "+quote(redactURL(s))+" (want http://host/… or https://host/…)")
	}
}

// isGoogle reports whether a provider type means one of Google's APIs.
func isGoogle(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "google", "googleai", "google-ai", "google_ai", "vertexai", "vertex-ai", "vertex_ai", "aistudio":
		return true
	}
	return false
}

// typeNames lists the provider types, joined by sep.
func typeNames(sep string) string {
	names := make([]string, len(providerTypes))
	for i, t := range providerTypes {
		names[i] = string(t)
	}
	return strings.Join(names, sep)
}

// validHeaderName reports whether s is an HTTP header field name (a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// checkModel checks models[i]. aliases collects the alias names seen so far.
func (c *Config) checkModel(r *report, i int, aliases map[string]string, defaultsOK bool) {
	m := c.Models[i]
	path := "models[" + strconv.Itoa(i) + "]"
	switch {
	case m.Name == "":
		r.field(path+".name", "alias has no name")
	case aliases[m.Name] != "":
		r.field(path+".name", "duplicate alias "+quote(m.Name)+" (first "+r.place(aliases[m.Name])+")")
	default:
		aliases[m.Name] = path + ".name"
	}
	if !slices.Contains(strategies, m.Strategy) {
		r.field(path+".strategy", "unknown strategy "+quote(string(m.Strategy))+" (known: fallback, weighted, least-latency, cheapest-healthy)")
	}
	if len(m.Targets) == 0 {
		r.field(path+".targets", "alias "+quote(m.Name)+" has no targets")
	}
	weights := 0
	for j, t := range m.Targets {
		c.checkTarget(r, path+".targets["+strconv.Itoa(j)+"]", t)
		weights += max(t.Weight, 0)
	}
	if m.Strategy == Weighted && len(m.Targets) > 0 && weights == 0 {
		r.field(path+".targets", "the weighted strategy needs a target with a weight above 0")
	}
	for j, f := range m.FailoverOn {
		if f != FailoverContextLength && f != FailoverContentFilter {
			r.field(path+".failover_on["+strconv.Itoa(j)+"]", "unknown failover condition "+quote(string(f))+" (known: context_length, content_filter)")
		}
	}
	if defaultsOK || r.lines.has(path+".breaker") {
		checkBreaker(r, path+".breaker", m.Breaker)
	}
	if defaultsOK || r.lines.has(path+".retry") {
		checkRetry(r, path+".retry", m.Retry)
	}
	c.checkTimeouts(r, path+".timeouts", m.Timeouts)
	c.checkCache(r, path+".cache", m.Cache)
	if st := m.Degraded.Status; st != 0 && (st < 400 || st > 599) {
		r.field(path+".degraded.status", "must be an error status (400-599), got "+strconv.Itoa(st))
	}
	if r.lines.has(path+".hedge") && !r.failed(path+".hedge") {
		checkHedge(r, path, m)
	}
	if m.ContinueOnFailure && len(m.Targets) == 1 {
		r.field(path+".continue_on_failure", "alias "+quote(m.Name)+" has one target: a broken stream is continued on the next target, so it needs at least two")
	}
}

// checkCache checks the cache block mc of an alias, at path.
func (c *Config) checkCache(r *report, path string, mc ModelCache) {
	negatives(r, path, reflect.ValueOf(mc))
	if sc := mc.Scope; sc != "" && sc != "client" && sc != "global" {
		r.field(path+".scope", "unknown scope "+quote(sc)+" (known: client, global)")
	}
	noTTL := mc.TTL == 0 && !r.failed(path+".ttl")
	switch st := mc.Store; {
	case st != "" && st != "memory" && st != "redis":
		r.field(path+".store", "unknown store "+quote(st)+" (known: memory, redis)")
	case st == "redis" && c.State == "memory" && !r.failed("state"):
		r.field(path+".store", "redis needs the fleet's state: set state: redis://host:port/db, or store: memory")
	case st != "" && noTTL:
		r.field(path+".store", "needs a ttl: nothing is cached without one")
	}
	if mc.StaleFor > 0 && noTTL {
		r.field(path+".stale_for", "needs a ttl: stale answers come from the cache")
	}
}

// checkHedge checks the hedge block of the alias m at path.
func checkHedge(r *report, path string, m Model) {
	h, hp := m.Hedge, path+".hedge"
	negatives(r, hp, reflect.ValueOf(h))
	if len(m.Targets) == 1 {
		r.field(hp, "alias "+quote(m.Name)+" has one target: a hedge is sent to the next target, so it needs at least two")
	}
	if !h.Enabled() {
		r.field(hp+".after", "hedge needs after: a duration such as 800ms, or a percentile such as p95")
	}
	if t, ok := firstTimeout(m); ok && h.After > 0 && h.After >= t.Timeouts.TTFB {
		r.field(hp+".after", "after ("+h.After.String()+") is not below the ttfb of "+t.Provider+"/"+t.Model+" ("+t.Timeouts.TTFB.String()+"): its attempt would time out before the hedge is sent")
	}
	switch n := len(m.Targets); {
	case h.Max < 1 || h.Max > 3:
		r.field(hp+".max", "must be from 1 to 3, got "+strconv.Itoa(h.Max))
	case n > 1 && h.Max > n-1:
		r.field(hp+".max", "max "+strconv.Itoa(h.Max)+" needs "+strconv.Itoa(h.Max+1)+" targets (each hedge goes to the next one), the alias has "+strconv.Itoa(n))
	}
	if !(h.Budget > 0 && h.Budget <= 1) {
		r.field(hp+".budget", "must be a fraction in (0, 1], got "+strconv.FormatFloat(h.Budget, 'g', -1, 64))
	}
}

// firstTimeout returns, among the targets that may take an alias's first
// attempt (the first one under fallback, any other way), the one with the
// shortest fixed ttfb; false when none has one.
func firstTimeout(m Model) (Target, bool) {
	candidates := m.Targets
	if m.Strategy == Fallback && len(candidates) > 1 {
		candidates = candidates[:1]
	}
	var best Target
	found := false
	for _, t := range candidates {
		if tt := t.Timeouts; !tt.AutoTTFB && tt.TTFB > 0 && (!found || tt.TTFB < best.Timeouts.TTFB) {
			best, found = t, true
		}
	}
	return best, found
}

var strategies = []Strategy{Fallback, Weighted, LeastLatency, CheapestHealthy}

func (c *Config) checkTarget(r *report, path string, t Target) {
	switch _, ok := c.Providers[t.Provider]; {
	case t.Provider == "":
		r.field(path+".provider", "target has no provider")
	case !ok && !r.failed("providers"):
		r.field(path+".provider", "unknown provider "+quote(t.Provider)+" (known: "+names(sortedKeys(c.Providers))+")")
	}
	if t.Model == "" {
		r.field(path+".model", "target has no model")
	}
	checkName(r, path+".model", "model name", t.Model)
	if t.Weight < 0 {
		r.field(path+".weight", "must not be negative")
	}
	if p, ok := c.Providers[t.Provider]; ok {
		checkCloudTarget(r, path, t, p)
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

// checkModelRef checks a client's allowed model: an alias, or
// provider/model for a configured provider. It returns what is wrong; ""
// also when the providers or an alias's name did not decode, or were
// misspelled, as the reference may be to what the file meant.
func (c *Config) checkModelRef(r *report, m string, aliases map[string]string) string {
	if _, ok := aliases[m]; ok {
		return ""
	}
	if prov, _, ok := strings.Cut(m, "/"); ok {
		if _, known := c.Providers[prov]; known || r.failed("providers") {
			return ""
		}
		return "unknown provider " + quote(prov) + " in " + quote(m) + " (known: " + names(sortedKeys(c.Providers)) + ")"
	}
	if !c.aliasesComplete(r) {
		return ""
	}
	return "unknown model alias " + quote(m) + " (known: " + names(sortedKeys(aliases)) + "; or provider/model)"
}

// aliasesComplete reports whether every alias the file meant has its name:
// the models decoded, none misspelled, each with a name that decoded.
func (c *Config) aliasesComplete(r *report) bool {
	if r.failed("models") {
		return false
	}
	for i, m := range c.Models {
		if m.Name == "" || r.failed("models["+strconv.Itoa(i)+"].name") {
			return false
		}
	}
	if r.failed("jobs") {
		return false
	}
	for i, a := range c.Jobs {
		if a.Name == "" || r.failed("jobs["+strconv.Itoa(i)+"].name") {
			return false
		}
	}
	return true
}

// names joins names for a "known: …" list, each that looks like a secret
// replaced.
func names(list []string) string {
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = n
		if looksSecret(n) {
			out[i] = notShown
		}
	}
	return strings.Join(out, ", ")
}

func (c *Config) checkTimeouts(r *report, path string, t Timeouts) {
	negatives(r, path, reflect.ValueOf(t))
	if r.brokenWithin(path) {
		return
	}
	own := r.lines.has(path+".ttfb") || r.lines.has(path+".total")
	if own && !t.AutoTTFB && t.Total > 0 && t.TTFB > t.Total {
		r.field(path+".ttfb", "ttfb ("+t.TTFB.String()+") exceeds total ("+t.Total.String()+")")
	}
	if r.lines.has(path+".suspect_after") && t.SuspectAfter > 0 && t.Idle > 0 && t.SuspectAfter >= t.Idle {
		r.field(path+".suspect_after", "suspect_after ("+t.SuspectAfter.String()+") is not below idle ("+t.Idle.String()+"): streams would time out before the target is suspected")
	}
	if r.lines.has(path+".commit_after") && t.CommitAfter > MaxCommitAfter {
		r.field(path+".commit_after", fmt.Sprintf("commit_after (%d) is above %d: a held stream's events are kept in memory until it commits", t.CommitAfter, MaxCommitAfter))
	}
}

// MaxCommitAfter is the most content events timeouts.commit_after may
// hold.
const MaxCommitAfter = 32

func checkLimits(r *report, path string, l Limits) {
	if negatives(r, path, reflect.ValueOf(l)) || r.brokenWithin(path) {
		return
	}
	if _, err := limit.NewPacer(l.Pacer()); err != nil {
		r.field(path, err.Error())
	}
	if _, err := limit.NewBulkhead(l.Bulkhead()); err != nil {
		r.field(path, err.Error())
	}
}

func checkRetry(r *report, path string, rt Retry) {
	negatives(r, path, reflect.ValueOf(rt))
	if rt.Multiplier != 0 && rt.Multiplier < 1 {
		r.field(path+".multiplier", "must be at least 1 (or 0 for the default, 2)")
	}
	checkRate(r, path+".budget", rt.Budget)
	if r.brokenWithin(path) {
		return
	}
	if rt.Base > 0 && rt.Max > 0 && rt.Max < rt.Base {
		r.field(path+".max", "max ("+rt.Max.String()+") is below base ("+rt.Base.String()+")")
	}
	if _, err := retry.NewBudget(rt.BudgetConfig()); err != nil {
		r.field(path, err.Error())
	}
}

func checkBreaker(r *report, path string, b Breaker) {
	negatives(r, path, reflect.ValueOf(b))
	checkRate(r, path+".failure_rate", b.FailureRate)
	checkRate(r, path+".slow_call_rate", b.SlowCallRate)
	if r.brokenWithin(path) {
		return
	}
	_, err := breaker.New(b.Settings())
	if err == nil {
		return
	}
	for line := range strings.SplitSeq(err.Error(), "\n") {
		field, msg := translateBreakerError(line)
		if field == "" {
			r.field(path, msg)
		} else {
			r.field(path+"."+field, msg)
		}
	}
}

// breakerError matches one line of breaker.New's error:
// breaker "name": Field = value: why.
var breakerError = regexp.MustCompile(`^breaker ".*?": (\w+) = .*?: (.*)$`)

var goFieldName = regexp.MustCompile(`\b[A-Z][A-Za-z]+\b`)

// translateBreakerError turns a line of breaker.New's error into a field of
// Breaker and a message in the file's own names.
func translateBreakerError(line string) (field, msg string) {
	sub := breakerError.FindStringSubmatch(line)
	if sub == nil {
		return "", line
	}
	msg = goFieldName.ReplaceAllStringFunc(sub[2], func(s string) string {
		if name, ok := breakerFields[s]; ok {
			return name
		}
		return s
	})
	return breakerFields[sub[1]], msg
}

// checkRate checks that a fraction, when set, is in (0, 1]. A value not set
// at path was inherited and is checked where it was set.
func checkRate(r *report, path string, v float64) {
	if r.lines.has(path) && v != 0 && !(v > 0 && v <= 1) {
		r.field(path, "must be a fraction in (0, 1], got "+strconv.FormatFloat(v, 'g', -1, 64))
	}
}

// negatives reports each negative number or duration among the fields of
// the flat block v that are set under path (an inherited value is checked
// where it was set), and whether there was one.
func negatives(r *report, path string, v reflect.Value) bool {
	found := false
	for i := range v.NumField() {
		f, name := v.Field(i), yamlName(v.Type().Field(i))
		neg := false
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			neg = f.Int() < 0
		case reflect.Float64:
			neg = f.Float() < 0
		}
		if neg && name != "" && r.lines.has(path+"."+name) {
			found = true
			r.field(path+"."+name, "must not be negative, got "+formatValue(f))
		}
	}
	return found
}

// formatValue writes a number or duration as the file would.
func formatValue(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	if v.Kind() == reflect.Float64 {
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return strconv.FormatInt(v.Int(), 10)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
