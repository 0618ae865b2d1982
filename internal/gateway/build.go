package gateway

import (
	"context"
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
			up, err = openai.New(openai.Config{BaseURL: p.BaseURL, Header: header, Connect: p.Timeouts.Connect, Transport: transport,
				Responses: p.Responses, Unsupported: p.Unsupported})
		case config.TypeAnthropic:
			up, err = anthropic.New(anthropic.Config{BaseURL: p.BaseURL, Header: header, Connect: p.Timeouts.Connect, Transport: transport})
		case config.TypeBedrock, config.TypeVertex, config.TypeGemini, config.TypeAzure:
			up, err = cloudUpstream(cfg, p, header, transport)
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
			Classifier: &aierr.Classifier{Overrides: p.Overrides.Settings()},
			Price:      router.Price{Input: p.Price.Input, Output: p.Price.Output, CachedInput: p.Price.CachedInput},
			AuthRest:   p.AuthRest, AuthProbe: p.AuthProbe,
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
			SameTargetWait: m.Retry.SameTargetWait, Deadline: m.Timeouts.Deadline,
			Budgets:         budgets(m.Timeouts),
			BackgroundProbe: m.Breaker.BackgroundProbe, Continue: m.ContinueOnFailure,
			Hedge: router.Hedge{After: m.Hedge.After, AfterQuantile: m.Hedge.AfterQuantile,
				Max: m.Hedge.Max, Budget: m.Hedge.Budget},
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
		for _, t := range m.Targets {
			as.Targets = append(as.Targets, router.TargetSpec{
				Provider: t.Provider, Model: targetModel(t, cfg.Providers[t.Provider]), Weight: float64(t.Weight),
				Price:   targetPrice(t, cfg.Providers[t.Provider]),
				Budgets: budgets(t.Timeouts),
				Keys:    ownKeys(t, cfg.Providers[t.Provider]),
			})
		}
		spec.Aliases = append(spec.Aliases, as)
	}
	d := cfg.Defaults
	spec.Direct = router.AliasSpec{Breaker: d.Breaker.Settings(), Retry: d.Retry.Policy(), Budget: d.Retry.BudgetConfig(),
		SameTargetWait: d.Retry.SameTargetWait, Deadline: d.Timeouts.Deadline, Budgets: budgets(d.Timeouts),
		BackgroundProbe: d.Breaker.BackgroundProbe, Fingerprint: config.Fingerprint(d.Breaker)}
	return spec, nil
}

// ownKeys returns a target's keys when they are its own, not its
// provider's.
func ownKeys(t config.Target, p config.Provider) []string {
	same := len(t.Keys) == len(p.Keys)
	keys := make([]string, len(t.Keys))
	for i, k := range t.Keys {
		keys[i] = k.Value()
		same = same && k.Value() == p.Keys[i].Value()
	}
	if same {
		return nil
	}
	return keys
}

// budgets returns a timeouts block as an attempt's budgets.
func budgets(t config.Timeouts) router.Budgets {
	return router.Budgets{TTFB: t.TTFB, Idle: t.Idle, Total: t.Total, AutoTTFB: t.AutoTTFB, AutoIdle: t.AutoIdle,
		SuspectAfter: t.SuspectAfter, AutoSuspect: t.AutoSuspect, MinRate: t.MinRate, AutoRate: t.AutoRate,
		CommitAfter: t.CommitAfter}
}

// since returns the time from start on the server's clock.
func (s *Server) since(start time.Time) time.Duration { return s.clk.Now().Sub(start) }

// deadline returns a context that ends d from now on the server's clock,
// with context.DeadlineExceeded, and says so through Deadline.
func (s *Server) deadline(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := s.clk.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return deadlineCtx{Context: ctx, at: s.clk.Now().Add(d)}, func() { t.Stop(); cancel(context.Canceled) }
}

// deadlineCtx is a context with a deadline on an injected clock.
type deadlineCtx struct {
	context.Context
	at time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

func (c deadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}
