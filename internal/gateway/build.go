package gateway

import (
	"fmt"
	"net/http"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/provider/openai"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// routerSpec turns a configuration into the router's settings, with an
// upstream adapter per provider.
func routerSpec(cfg *config.Config, transport http.RoundTripper) (router.Spec, error) {
	var spec router.Spec
	for name, p := range cfg.Providers {
		header := http.Header{}
		for k, v := range p.Headers {
			header.Set(k, v.Value())
		}
		var up router.Upstream
		var err error
		switch p.Type {
		case config.TypeOpenAI:
			up, err = openai.New(openai.Config{BaseURL: p.BaseURL, Header: header, Connect: p.Timeouts.Connect, Transport: transport})
		case config.TypeAnthropic:
			up, err = anthropic.New(anthropic.Config{BaseURL: p.BaseURL, Header: header, Connect: p.Timeouts.Connect, Transport: transport})
		default:
			err = fmt.Errorf("type %s is not supported", p.Type)
		}
		if err != nil {
			return spec, fmt.Errorf("provider %s: %w", name, err)
		}
		var keys []string
		for _, k := range p.Keys {
			keys = append(keys, k.Value())
		}
		spec.Providers = append(spec.Providers, router.ProviderSpec{
			Name: name, Upstream: up, Keys: keys,
			Limits: router.Limits{RequestsPerMinute: float64(p.Limits.RPM), TokensPerMinute: float64(p.Limits.TPM),
				MaxInFlight: p.Limits.MaxInFlight, MaxWait: p.Limits.MaxWait},
			Classifier:  &aierr.Classifier{Overrides: p.Overrides.Settings()},
			Fingerprint: config.Fingerprint(p),
		})
	}
	for _, m := range cfg.Models {
		strategy, err := router.ParseStrategy(string(m.Strategy))
		if err != nil {
			return spec, fmt.Errorf("model %s: %w", m.Name, err)
		}
		as := router.AliasSpec{
			Name: m.Name, Strategy: strategy,
			Breaker: m.Breaker.Settings(), Retry: m.Retry.Policy(), Budget: m.Retry.BudgetConfig(),
			Fingerprint: config.Fingerprint(m.Breaker),
		}
		for _, f := range m.FailoverOn {
			switch f {
			case config.FailoverContextLength:
				as.FailoverOn = append(as.FailoverOn, aierr.ContextLength)
			case config.FailoverContentFilter:
				as.FailoverOn = append(as.FailoverOn, aierr.ContentFilter)
			}
		}
		for i, t := range m.Targets {
			if i == 0 {
				as.Total = t.Timeouts.Total
			}
			as.Targets = append(as.Targets, router.TargetSpec{
				Provider: t.Provider, Model: t.Model, Weight: float64(t.Weight),
				Price: router.Price{Input: t.Price.Input, Output: t.Price.Output, CachedInput: t.Price.CachedInput},
				TTFB:  t.Timeouts.TTFB, Idle: t.Timeouts.Idle,
			})
		}
		spec.Aliases = append(spec.Aliases, as)
	}
	d := cfg.Defaults
	spec.Direct = router.AliasSpec{Breaker: d.Breaker.Settings(), Retry: d.Retry.Policy(), Budget: d.Retry.BudgetConfig(),
		TTFB: d.Timeouts.TTFB, Idle: d.Timeouts.Idle, Total: d.Timeouts.Total, Fingerprint: config.Fingerprint(d.Breaker)}
	return spec, nil
}

// since returns the time from start on the server's clock.
func (s *Server) since(start time.Time) time.Duration { return s.clk.Now().Sub(start) }
