package config

import (
	"cmp"
	"reflect"
	"strconv"
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
	DefaultState             = "memory"
	DefaultOpenAIBaseURL     = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL  = "https://api.anthropic.com"
	DefaultStrategy          = Fallback
	DefaultWeight            = 1
	DefaultConnectTimeout    = 5 * time.Second
	DefaultTTFBTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultTotalTimeout      = 10 * time.Minute
)

// defaultBaseURL returns the API root of a provider type; "" for an unknown
// type.
func defaultBaseURL(t ProviderType) string {
	switch t {
	case TypeOpenAI:
		return DefaultOpenAIBaseURL
	case TypeAnthropic:
		return DefaultAnthropicBaseURL
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
	for i := range c.Clients {
		if p := "clients[" + strconv.Itoa(i) + "]"; !l.has(p + ".weight") {
			c.Clients[i].Weight = DefaultWeight
		}
	}
	builtin := Timeouts{Connect: DefaultConnectTimeout, TTFB: DefaultTTFBTimeout,
		Idle: DefaultIdleTimeout, Total: DefaultTotalTimeout}
	inherit(&c.Defaults.Timeouts, builtin, "defaults.timeouts", l)
	for name, p := range c.Providers {
		p.Name = name
		if p.Type == "" && (name == string(TypeOpenAI) || name == string(TypeAnthropic)) {
			p.Type = ProviderType(name)
		}
		if p.BaseURL == "" {
			p.BaseURL = defaultBaseURL(p.Type)
		}
		inherit(&p.Timeouts, c.Defaults.Timeouts, "providers."+name+".timeouts", l)
		c.Providers[name] = p
	}
	for i := range c.Models {
		c.modelDefaults(i)
	}
}

// modelDefaults fills the defaults of models[i] and its targets.
func (c *Config) modelDefaults(i int) {
	l, m := c.lines, &c.Models[i]
	path := "models[" + strconv.Itoa(i) + "]"
	if m.Strategy == "" {
		m.Strategy = DefaultStrategy
	}
	inherit(&m.Breaker, c.Defaults.Breaker, path+".breaker", l)
	inherit(&m.Retry, c.Defaults.Retry, path+".retry", l)
	own := m.Timeouts
	inherit(&m.Timeouts, c.Defaults.Timeouts, path+".timeouts", l)
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
	}
}

// inherit copies into *dst each field of src that the file did not set under
// path. dst and src are flat blocks: Breaker, Retry, Timeouts.
func inherit[T any](dst *T, src T, path string, l lines) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range d.NumField() {
		name := yamlName(d.Type().Field(i))
		if name != "" && !l.has(path+"."+name) {
			d.Field(i).Set(s.Field(i))
		}
	}
}
