package catalog

import (
	"slices"
	"strings"
)

// Provider types, as the configuration names them.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Bedrock   = "bedrock"
	Vertex    = "vertex"
	Gemini    = "gemini"
	Azure     = "azure"
)

// Providers are the provider types the catalog knows, in display order.
var Providers = []string{OpenAI, Anthropic, Gemini, Bedrock, Vertex, Azure}

// Model is one model as the catalog knows it: what it is called on each
// cloud, what it can do and what it costs.
type Model struct {
	// Name is the catalog's name for the model, the same on every cloud:
	// "claude-sonnet-4-5", "gpt-4.1", "gemini-2.5-pro".
	Name string `json:"name"`
	// Display is the maker's name for it: "Claude Sonnet 4.5".
	Display string `json:"display"`
	// Maker is the provider type of the model's maker: "openai",
	// "anthropic" or "gemini" (Google).
	Maker string `json:"maker"`
	// Offers are the clouds that serve it, with its id on each.
	Offers []Offer `json:"offers"`
	// Context is the context window in tokens (input and output), as
	// generally available: a larger window in beta is in Note.
	Context int `json:"context_window"`
	// MaxOutput is the most output tokens one answer may have.
	MaxOutput int `json:"max_output_tokens"`
	// Capabilities says what the model can do.
	Capabilities Capabilities `json:"capabilities"`
	// Price is the maker's list price, standard tier, for prompts up to
	// LongContext.Over tokens (all prompts when LongContext is nil).
	Price Price `json:"price"`
	// LongContext, when set, is the price of a prompt longer than Over
	// tokens (every token of that request).
	LongContext *LongContext `json:"long_context,omitempty"`
	// Source is where Price comes from and of when.
	Source *Source `json:"source"`
	// Note is what a user should know: lifecycle, a beta window, figures
	// that could not be confirmed.
	Note string `json:"note,omitempty"`
}

// Offer is a model on one cloud.
type Offer struct {
	// Provider is the cloud's provider type.
	Provider string `json:"provider"`
	// ID is the model's id there: what goes in "model" (openai, anthropic,
	// gemini, azure), the Bedrock model id, the Vertex model name. On
	// Azure the deployment is named by its owner; ID is the model the
	// deployment serves.
	ID string `json:"id"`
	// Aliases are other ids the cloud accepts for the same model at the
	// same price (dated snapshots, "-latest" aliases).
	Aliases []string `json:"aliases,omitempty"`
	// Profiles are the Bedrock cross-region inference profiles of the
	// model, by geography prefix: "us", "eu", "jp", "apac", "global". The
	// profile's id is the prefix, a dot and ID.
	Profiles []string `json:"profiles,omitempty"`
	// NeedsProfile says that Bedrock serves the model on demand only
	// through an inference profile, not by its plain id.
	NeedsProfile bool `json:"needs_profile,omitempty"`
	// Retired says that the cloud no longer serves the model: Lookup
	// still finds it (its prices stay true of past usage), Resolve does
	// not give its id.
	Retired bool `json:"retired,omitempty"`
}

// Capabilities are what a model can do through the gateway.
type Capabilities struct {
	Tools     bool `json:"tools"`     // function calling
	Vision    bool `json:"vision"`    // image input
	JSON      bool `json:"json"`      // structured (schema) or JSON-mode output
	Reasoning bool `json:"reasoning"` // reasoning effort or extended thinking
	Caching   bool `json:"caching"`   // prompt caching, priced at CachedInput
}

// Price is in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput is the price of input read from the prompt cache. Cache
	// writes, where charged (Anthropic: 1.25× input for five minutes),
	// are not in the catalog.
	CachedInput float64 `json:"cached_input"`
}

// LongContext is the price of long prompts.
type LongContext struct {
	// Over is the prompt length, in tokens, above which Price applies.
	Over  int   `json:"over"`
	Price Price `json:"price"`
}

// Source is a public price list.
type Source struct {
	// Name is the page's name: "OpenAI API pricing".
	Name string `json:"name"`
	URL  string `json:"url"`
	// AsOf is the day the figures are from (YYYY-MM-DD).
	AsOf string `json:"as_of"`
}

// All returns the catalog, newest families first within each maker. The
// models are copies: changing them changes nothing in the catalog.
func All() []Model {
	out := make([]Model, len(models))
	for i := range models {
		out[i] = models[i].clone()
	}
	return out
}

// clone copies m with its slices, so that no caller shares them.
func (m *Model) clone() Model {
	c := *m
	c.Offers = slices.Clone(m.Offers)
	for i := range c.Offers {
		c.Offers[i].Aliases = slices.Clone(c.Offers[i].Aliases)
		c.Offers[i].Profiles = slices.Clone(c.Offers[i].Profiles)
	}
	if m.LongContext != nil {
		lc := *m.LongContext
		c.LongContext = &lc
	}
	return c
}

// Offer returns the model's offer on providerType.
func (m Model) Offer(providerType string) (Offer, bool) {
	for _, o := range m.Offers {
		if o.Provider == providerType {
			return o, true
		}
	}
	return Offer{}, false
}

// Lookup finds a model by its catalog name or by any id any cloud knows it
// by (a Bedrock inference profile included), and reports whether it is
// offered on providerType ("" for any cloud).
func Lookup(providerType, model string) (Model, bool) {
	i, ok := index[model]
	if !ok {
		return Model{}, false
	}
	m := &models[i]
	if providerType != "" {
		if _, ok := m.Offer(providerType); !ok {
			return Model{}, false
		}
	}
	return m.clone(), true
}

// Resolve gives the id to send to providerType for model (a catalog name
// or any cloud's id), with the model. For Bedrock it is the inference
// profile of region's geography when the model has one (us-* → "us.",
// eu-* → "eu.", Tokyo and Osaka → "jp." else "apac.", other ap-* →
// "apac."), else its global profile, else its plain id; a model Bedrock
// serves only through profiles, with none for the region, is not
// resolved. A model already given as a Bedrock profile id is kept. An
// empty region takes the global profile where there is one. ok is false
// when the model is unknown or not offered on providerType.
func Resolve(providerType, model, region string) (id string, m Model, ok bool) {
	m, ok = Lookup(providerType, model)
	if !ok {
		return "", Model{}, false
	}
	o, _ := m.Offer(providerType)
	if o.Retired {
		return "", Model{}, false
	}
	switch providerType {
	case "":
		return m.Name, m, true
	case Bedrock:
	default:
		return o.ID, m, true
	}
	if geo, rest, found := strings.Cut(model, "."); found && rest == o.ID && slices.Contains(o.Profiles, geo) {
		return model, m, true
	}
	if id, ok := profile(o, region); ok {
		return id, m, true
	}
	if o.NeedsProfile {
		return "", Model{}, false
	}
	return o.ID, m, true
}
