package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/fuseboxhq/fusebox/internal/catalog"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/provider/azure"
	"github.com/fuseboxhq/fusebox/internal/provider/bedrock"
	"github.com/fuseboxhq/fusebox/internal/provider/gemini"
	"github.com/fuseboxhq/fusebox/internal/provider/vertex"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// cloudUpstream builds the upstream of a bedrock, vertex, gemini or azure
// provider. Bedrock and Vertex name their models their own way: their
// targets' models are sent as the catalog's id for the provider's region
// (or the target's model_id), and keep their configured names everywhere
// else (metrics, logs, headers).
func cloudUpstream(cfg *config.Config, p config.Provider, header http.Header, transport http.RoundTripper) (router.Upstream, error) {
	switch p.Type {
	case config.TypeBedrock:
		up, err := bedrock.New(context.Background(), bedrock.Config{Region: p.Region, BaseURL: p.BaseURL, Profile: p.AWS.Profile,
			AccessKeyID: p.AWS.AccessKeyID.Value(), SecretAccessKey: p.AWS.SecretAccessKey.Value(), SessionToken: p.AWS.SessionToken.Value(),
			Header: header, Connect: p.Timeouts.Connect, Transport: transport})
		if err != nil {
			return nil, err
		}
		return newModelIDs(up, cfg, p), nil
	case config.TypeVertex:
		if f := p.CredentialsFile; f != "" {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("credentials_file: cannot read %q: %w", f, errors.Unwrap(err))
			}
		}
		up, err := vertex.New(vertex.Config{Project: p.Project, Location: p.Region, BaseURL: p.BaseURL,
			CredentialsFile: p.CredentialsFile, Header: header, Connect: p.Timeouts.Connect, Transport: transport})
		if err != nil {
			return nil, err
		}
		return newModelIDs(up, cfg, p), nil
	case config.TypeGemini:
		return gemini.New(gemini.Config{BaseURL: p.BaseURL, Header: header, Connect: p.Timeouts.Connect, Transport: transport})
	default: // azure
		c := azure.Config{Endpoint: p.BaseURL, APIVersion: p.APIVersion, Header: header, Connect: p.Timeouts.Connect,
			Transport: transport, Responses: p.Responses, Unsupported: p.Unsupported}
		if e := p.Entra; e != (config.Entra{}) {
			c.Entra = &azure.Entra{TenantID: e.TenantID, ClientID: e.ClientID, ClientSecret: e.ClientSecret.Value(),
				FederatedTokenFile: e.FederatedTokenFile, AuthorityHost: e.AuthorityHost}
		}
		return azure.New(c)
	}
}

// targetModel is the model a target is named and routed by: an azure
// target's deployment (what Azure is sent), else its model.
func targetModel(t config.Target, p config.Provider) string {
	if p.Type == config.TypeAzure && t.Deployment != "" {
		return t.Deployment
	}
	return t.Model
}

// modelIDs sends a cloud's targets' models by the cloud's ids. It is safe
// for concurrent use.
type modelIDs struct {
	up     messagesUpstream
	typ    config.ProviderType
	region string
	// ids are the configured targets' (model → id); resolved caches the
	// catalog's answers for models named directly (provider/model), one
	// entry per model asked, bounded by maxResolved.
	ids      map[string]string
	resolved sync.Map
	n        int64
	mu       sync.Mutex
}

// messagesUpstream is a cloud upstream that speaks Messages for Claude.
type messagesUpstream interface {
	router.Upstream
	SpeaksMessages(model string) bool
	CloseIdle()
}

// maxResolved bounds the models resolved for direct requests: a client
// naming endless models must not grow the map.
const maxResolved = 1024

func newModelIDs(up messagesUpstream, cfg *config.Config, p config.Provider) *modelIDs {
	m := &modelIDs{up: up, typ: p.Type, region: p.Region, ids: map[string]string{}}
	for _, a := range cfg.Models {
		for _, t := range a.Targets {
			if t.Provider == p.Name {
				m.ids[t.Model] = cloudModelID(t, p)
			}
		}
	}
	return m
}

// id returns the id model is sent as.
func (m *modelIDs) id(model string) string {
	if id, ok := m.ids[model]; ok {
		return id
	}
	if id, ok := m.resolved.Load(model); ok {
		return id.(string)
	}
	id := catalogID(m.typ, model, m.region)
	m.mu.Lock()
	if m.n < maxResolved {
		m.n++
		m.resolved.Store(model, id)
	}
	m.mu.Unlock()
	return id
}

// Send sends c with the cloud's id of its model.
func (m *modelIDs) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	if id := m.id(c.Model); id != c.Model {
		cc := *c
		cc.Model = id
		c = &cc
	}
	return m.up.Send(ctx, c)
}

// SpeaksMessages reports whether the cloud serves model with Anthropic's
// Messages body.
func (m *modelIDs) SpeaksMessages(model string) bool { return m.up.SpeaksMessages(m.id(model)) }

// CloseIdle closes idle connections, for shutdown and tests.
func (m *modelIDs) CloseIdle() { m.up.CloseIdle() }

// cloudModelID is the id a configured target's model is sent as.
func cloudModelID(t config.Target, p config.Provider) string {
	if t.ModelID != "" {
		return t.ModelID
	}
	return catalogID(p.Type, t.Model, p.Region)
}

// catalogID is the id model is sent to a cloud as: the catalog's for the
// region, or model as it is when the catalog does not know it there.
func catalogID(typ config.ProviderType, model, region string) string {
	if id, _, ok := catalog.Resolve(string(typ), model, region); ok {
		return id
	}
	return model
}

// targetPrice is a target's price: its own, or, when it sets none, the
// catalog's list price of its model.
func targetPrice(t config.Target, p config.Provider) router.Price {
	if t.Price != (config.Price{}) {
		return router.Price{Input: t.Price.Input, Output: t.Price.Output, CachedInput: t.Price.CachedInput}
	}
	model := cmp.Or(t.ModelID, t.Model)
	m, ok := catalog.Lookup(string(p.Type), model)
	if !ok {
		return router.Price{}
	}
	return router.Price{Input: m.Price.Input, Output: m.Price.Output, CachedInput: m.Price.CachedInput}
}
