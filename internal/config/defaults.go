package config

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The built-in defaults for fields a file leaves out.
const (
	DefaultListen = "127.0.0.1:8080"
	// The server block's defaults.
	DefaultMaxBodyBytes      = 16 << 20
	DefaultBodyTimeout       = 60 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleConnTimeout   = 120 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultUsageDrain        = 5 * time.Second
	DefaultCORSMaxAge        = 10 * time.Minute
	DefaultState             = "memory"
	DefaultOpenAIBaseURL     = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL  = "https://api.anthropic.com"
	DefaultGeminiBaseURL     = "https://generativelanguage.googleapis.com"
	// DefaultAzureAPIVersion is an azure provider's api-version.
	DefaultAzureAPIVersion = "2024-10-21"
	DefaultStrategy        = Fallback
	DefaultWeight          = 1
	DefaultConnectTimeout  = 5 * time.Second
	DefaultTTFBTimeout     = 60 * time.Second
	DefaultIdleTimeout     = 30 * time.Second
	DefaultTotalTimeout    = 10 * time.Minute
	// DefaultMinSuspectAfter is the least suspect_after derived from idle
	// (idle/8).
	DefaultMinSuspectAfter = 250 * time.Millisecond
	// The breaker block's defaults, for recovery within about 8 s.
	DefaultBreakerOpen = 5 * time.Second
	DefaultOpenBackoff = 1.5
	DefaultMaxOpen     = 8 * time.Second
	// DefaultSameTargetWait is retry.same_target_wait's default.
	DefaultSameTargetWait = 2 * time.Second
	// DefaultAuthRest is how long a refused key stays out of the rotation.
	DefaultAuthRest = 5 * time.Minute
	// The hedge block's defaults.
	DefaultHedgeMax    = 1
	DefaultHedgeBudget = 0.1
)

// defaultBaseURL returns the API root of a provider type; "" for an unknown
// type.
func defaultBaseURL(t ProviderType) string {
	switch t {
	case TypeOpenAI:
		return DefaultOpenAIBaseURL
	case TypeAnthropic:
		return DefaultAnthropicBaseURL
	case TypeGemini:
		return DefaultGeminiBaseURL
	}
	return ""
}

// setDefaults fills the fields the file left out and merges inherited
// blocks. Whether a field was set is read from c.lines, so a field set to
// zero on purpose keeps its zero.
func (c *Config) setDefaults() {
	l := c.lines
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.State == "" {
		c.State = DefaultState
	}
	srv := &c.Server
	srv.MaxBodyBytes = cmp.Or(srv.MaxBodyBytes, DefaultMaxBodyBytes)
	srv.BodyTimeout = cmp.Or(srv.BodyTimeout, DefaultBodyTimeout)
	srv.ReadHeaderTimeout = cmp.Or(srv.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	srv.IdleTimeout = cmp.Or(srv.IdleTimeout, DefaultIdleConnTimeout)
	srv.WriteTimeout = cmp.Or(srv.WriteTimeout, DefaultWriteTimeout)
	if !l.has("server.usage_drain") {
		srv.UsageDrain = DefaultUsageDrain
	}
	if len(c.CORS.Origins) > 0 {
		c.CORS.MaxAge = cmp.Or(c.CORS.MaxAge, DefaultCORSMaxAge)
	}
	for i := range c.Clients {
		if p := "clients[" + strconv.Itoa(i) + "]"; !l.has(p + ".weight") {
			c.Clients[i].Weight = DefaultWeight
		}
	}
	builtin := Timeouts{Connect: DefaultConnectTimeout, TTFB: DefaultTTFBTimeout,
		Idle: DefaultIdleTimeout, Total: DefaultTotalTimeout}
	inherit(&c.Defaults.Timeouts, builtin, "defaults.timeouts", l)
	suspectDefault(&c.Defaults.Timeouts, l, "defaults.timeouts")
	inherit(&c.Defaults.Retry, Retry{SameTargetWait: DefaultSameTargetWait}, "defaults.retry", l)
	for name, p := range c.Providers {
		p.Name = name
		if p.Type == "" && slices.Contains(providerTypes, ProviderType(name)) {
			p.Type = ProviderType(name)
		}
		if p.BaseURL == "" {
			p.BaseURL = defaultBaseURL(p.Type)
		}
		path := "providers." + name
		inherit(&p.Timeouts, c.Defaults.Timeouts, path+".timeouts", l)
		suspectDefault(&p.Timeouts, l, path+".timeouts", "defaults.timeouts")
		if !l.has(path + ".auth_rest") {
			p.AuthRest = DefaultAuthRest
		}
		if p.Type == TypeAzure && p.APIVersion == "" {
			p.APIVersion = DefaultAzureAPIVersion
		}
		if !l.has(path + ".responses") {
			p.Responses = p.Type == TypeOpenAI && strings.TrimSuffix(p.BaseURL, "/") == DefaultOpenAIBaseURL
		}
		if !l.has(path + ".price.cached_input") {
			p.Price.CachedInput = p.Price.Input
		}
		c.Providers[name] = p
	}
	// Aliases inherit the breaker block as written, then fill what is
	// left: max_open's default depends on the alias's own open.
	written := c.Defaults.Breaker
	breakerDefaults(&c.Defaults.Breaker)
	for i := range c.Models {
		c.modelDefaults(i, written)
	}
	for i := range c.Jobs {
		c.jobDefaults(i, written)
	}
	c.mcpDefaults(written)
}

// breakerDefaults fills the open period's fields left zero: open 5s,
// open_backoff 1.5, max_open 8s or open when that is longer, so that an
// explicit open above 8s is never above its cap.
func breakerDefaults(b *Breaker) {
	b.Open = cmp.Or(b.Open, DefaultBreakerOpen)
	b.OpenBackoff = cmp.Or(b.OpenBackoff, DefaultOpenBackoff)
	b.MaxOpen = cmp.Or(b.MaxOpen, max(DefaultMaxOpen, b.Open))
}

// suspectDefault sets t.SuspectAfter from t.Idle, idle/8 and at least
// 250ms (0 when idle is 0), adaptive below that (AutoSuspect), unless a
// block of t's inheritance chain, at paths, sets suspect_after.
func suspectDefault(t *Timeouts, l lines, paths ...string) {
	for _, p := range paths {
		if l.has(p + ".suspect_after") {
			return
		}
	}
	t.SuspectAfter, t.AutoSuspect = 0, false
	if t.Idle > 0 {
		t.SuspectAfter, t.AutoSuspect = max(t.Idle/8, DefaultMinSuspectAfter), true
	}
}

// modelDefaults fills the defaults of models[i] and its targets; breaker is
// defaults.breaker as the file wrote it.
func (c *Config) modelDefaults(i int, breaker Breaker) {
	l, m := c.lines, &c.Models[i]
	path := "models[" + strconv.Itoa(i) + "]"
	if m.Strategy == "" {
		m.Strategy = DefaultStrategy
	}
	inherit(&m.Breaker, breaker, path+".breaker", l)
	breakerDefaults(&m.Breaker)
	inherit(&m.Retry, c.Defaults.Retry, path+".retry", l)
	if l.has(path + ".hedge") {
		if !l.has(path + ".hedge.max") {
			m.Hedge.Max = DefaultHedgeMax
		}
		if !l.has(path + ".hedge.budget") {
			m.Hedge.Budget = DefaultHedgeBudget
		}
	}
	own := m.Timeouts
	inherit(&m.Timeouts, c.Defaults.Timeouts, path+".timeouts", l)
	suspectDefault(&m.Timeouts, l, path+".timeouts", "defaults.timeouts")
	for j := range m.Targets {
		t := &m.Targets[j]
		tp := path + ".targets[" + strconv.Itoa(j) + "]"
		if !l.has(tp + ".weight") {
			t.Weight = DefaultWeight
		}
		if !l.has(tp + ".price.cached_input") {
			t.Price.CachedInput = t.Price.Input
		}
		p, ok := c.Providers[t.Provider]
		if !ok {
			t.Timeouts = m.Timeouts
			continue
		}
		if len(t.Keys) == 0 {
			t.Keys = p.Keys
		}
		t.Timeouts = own
		inherit(&t.Timeouts, p.Timeouts, path+".timeouts", l)
		suspectDefault(&t.Timeouts, l, path+".timeouts", "providers."+t.Provider+".timeouts", "defaults.timeouts")
	}
}

// inherit copies into *dst each field of src that the file did not set under
// path. dst and src are flat blocks: Breaker, Retry, Timeouts. A field with
// an auto companion (see wordOr) brings its flag along; one the file set to
// auto takes src's value, its ceiling, and keeps its flag.
func inherit[T any](dst *T, src T, path string, l lines) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range d.NumField() {
		f := d.Type().Field(i)
		name, flag := yamlName(f), f.Tag.Get("auto")
		switch {
		case name == "":
		case !l.has(path + "." + name):
			d.Field(i).Set(s.Field(i))
			if flag != "" {
				d.FieldByName(flag).Set(s.FieldByName(flag))
			}
		case flag != "" && d.FieldByName(flag).Bool():
			d.Field(i).Set(s.Field(i))
		}
	}
}
