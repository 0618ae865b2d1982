package catalog

// The figures. Prices are the makers' list prices, standard (not batch,
// not priority) tier, in US dollars per million tokens; each source says
// the day they are from. The clouds' own list prices for the same models
// are the same on their global endpoints (Bedrock's global profiles,
// Vertex's global endpoint, Azure's Global Standard deployments); regional
// and geographic endpoints of newer models cost more (10% for Claude
// Sonnet 4.5, Haiku 4.5 and later on Bedrock and Vertex; Azure's Data
// Zone and Regional deployments likewise), which the catalog does not
// model.
var (
	// openaiPricing: OpenAI's figures as published with each model up to
	// GPT-5.2 (December 2025); copies of the page from 2026 give the same
	// figures for GPT-5.1, GPT-5.2, GPT-5 and GPT-4.1.
	openaiPricing = &Source{Name: "OpenAI API pricing", URL: "https://openai.com/api/pricing/", AsOf: "2025-12-11"}
	// anthropicPricing: checked against the page's model table (Opus 4.5
	// to 4.7 at $5/$25 with $0.50 cache hits, Opus 4 and 4.1 at $15/$75
	// with $1.50); Sonnet's $3/$15 and Haiku 4.5's $1/$5 are the
	// figures Anthropic published with those models.
	anthropicPricing = &Source{Name: "Claude API pricing", URL: "https://platform.claude.com/docs/en/about-claude/pricing", AsOf: "2026-12-02"}
	// geminiPricing: Google's figures as of Gemini 3 Pro's preview
	// (November 2025), after the 2.5 models' cached-input cuts; copies of
	// the page from 2026 give the same figures for the 2.5 models.
	geminiPricing = &Source{Name: "Gemini Developer API pricing", URL: "https://ai.google.dev/gemini-api/docs/pricing", AsOf: "2025-11-18"}
)

func oa(id string, aliases ...string) Offer {
	return Offer{Provider: OpenAI, ID: id, Aliases: aliases}
}
func az(id string) Offer { return Offer{Provider: Azure, ID: id} }
func an(id string, aliases ...string) Offer {
	return Offer{Provider: Anthropic, ID: id, Aliases: aliases}
}
func vx(id string) Offer { return Offer{Provider: Vertex, ID: id} }
func gm(id string) Offer { return Offer{Provider: Gemini, ID: id} }

// br is a Bedrock model that needs an inference profile, with its
// profiles' geographies.
func br(id string, profiles ...string) Offer {
	return Offer{Provider: Bedrock, ID: id, Profiles: profiles, NeedsProfile: true}
}

func retired(o Offer) Offer { o.Retired = true; return o }

// Capability sets.
var (
	chatCaps      = Capabilities{Tools: true, Vision: true, JSON: true, Caching: true}
	reasoningCaps = Capabilities{Tools: true, Vision: true, JSON: true, Reasoning: true, Caching: true}
	// claudeCaps: JSON is Anthropic's structured outputs, which came with
	// Sonnet 4.5 and Opus 4.1; earlier Claude models reach JSON through
	// a tool.
	claudeCaps       = Capabilities{Tools: true, Vision: true, JSON: true, Reasoning: true, Caching: true}
	claudeCapsNoJSON = Capabilities{Tools: true, Vision: true, Reasoning: true, Caching: true}
)

// Prices above 200K tokens of prompt in the 1M-token context beta of
// Sonnet 4, 4.5 and 4.6 and Opus 4.6: input twice, output one and a half
// times the standard price.
var (
	sonnetLong = &LongContext{Over: 200_000, Price: Price{Input: 6, Output: 22.5, CachedInput: 0.6}}
	opusLong   = &LongContext{Over: 200_000, Price: Price{Input: 10, Output: 37.5, CachedInput: 1}}
)

var models = []Model{
	// OpenAI.
	{Name: "gpt-5.2", Display: "GPT-5.2", Maker: OpenAI, Offers: []Offer{oa("gpt-5.2", "gpt-5.2-2025-12-11"), az("gpt-5.2")},
		Context: 400_000, MaxOutput: 128_000, Capabilities: reasoningCaps,
		Price: Price{Input: 1.75, Output: 14, CachedInput: 0.175}, Source: openaiPricing},
	{Name: "gpt-5.1", Display: "GPT-5.1", Maker: OpenAI, Offers: []Offer{oa("gpt-5.1", "gpt-5.1-2025-11-13"), az("gpt-5.1")},
		Context: 400_000, MaxOutput: 128_000, Capabilities: reasoningCaps,
		Price: Price{Input: 1.25, Output: 10, CachedInput: 0.125}, Source: openaiPricing},
	{Name: "gpt-5", Display: "GPT-5", Maker: OpenAI, Offers: []Offer{oa("gpt-5", "gpt-5-2025-08-07"), az("gpt-5")},
		Context: 400_000, MaxOutput: 128_000, Capabilities: reasoningCaps,
		Price: Price{Input: 1.25, Output: 10, CachedInput: 0.125}, Source: openaiPricing},
	{Name: "gpt-5-mini", Display: "GPT-5 mini", Maker: OpenAI, Offers: []Offer{oa("gpt-5-mini", "gpt-5-mini-2025-08-07"), az("gpt-5-mini")},
		Context: 400_000, MaxOutput: 128_000, Capabilities: reasoningCaps,
		Price: Price{Input: 0.25, Output: 2, CachedInput: 0.025}, Source: openaiPricing},
	{Name: "gpt-5-nano", Display: "GPT-5 nano", Maker: OpenAI, Offers: []Offer{oa("gpt-5-nano", "gpt-5-nano-2025-08-07"), az("gpt-5-nano")},
		Context: 400_000, MaxOutput: 128_000, Capabilities: reasoningCaps,
		Price: Price{Input: 0.05, Output: 0.4, CachedInput: 0.005}, Source: openaiPricing},
	{Name: "gpt-4.1", Display: "GPT-4.1", Maker: OpenAI, Offers: []Offer{oa("gpt-4.1", "gpt-4.1-2025-04-14"), az("gpt-4.1")},
		Context: 1_047_576, MaxOutput: 32_768, Capabilities: chatCaps,
		Price: Price{Input: 2, Output: 8, CachedInput: 0.5}, Source: openaiPricing},
	{Name: "gpt-4.1-mini", Display: "GPT-4.1 mini", Maker: OpenAI, Offers: []Offer{oa("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"), az("gpt-4.1-mini")},
		Context: 1_047_576, MaxOutput: 32_768, Capabilities: chatCaps,
		Price: Price{Input: 0.4, Output: 1.6, CachedInput: 0.1}, Source: openaiPricing},
	{Name: "gpt-4.1-nano", Display: "GPT-4.1 nano", Maker: OpenAI, Offers: []Offer{oa("gpt-4.1-nano", "gpt-4.1-nano-2025-04-14"), az("gpt-4.1-nano")},
		Context: 1_047_576, MaxOutput: 32_768, Capabilities: chatCaps,
		Price: Price{Input: 0.1, Output: 0.4, CachedInput: 0.025}, Source: openaiPricing},
	{Name: "gpt-4o", Display: "GPT-4o", Maker: OpenAI, Offers: []Offer{oa("gpt-4o", "gpt-4o-2024-11-20", "gpt-4o-2024-08-06"), az("gpt-4o")},
		Context: 128_000, MaxOutput: 16_384, Capabilities: chatCaps,
		Price: Price{Input: 2.5, Output: 10, CachedInput: 1.25}, Source: openaiPricing,
		Note: "gpt-4o-2024-05-13 is priced apart ($5/$15) and is not this entry"},
	{Name: "gpt-4o-mini", Display: "GPT-4o mini", Maker: OpenAI, Offers: []Offer{oa("gpt-4o-mini", "gpt-4o-mini-2024-07-18"), az("gpt-4o-mini")},
		Context: 128_000, MaxOutput: 16_384, Capabilities: chatCaps,
		Price: Price{Input: 0.15, Output: 0.6, CachedInput: 0.075}, Source: openaiPricing},
	{Name: "o3", Display: "o3", Maker: OpenAI, Offers: []Offer{oa("o3", "o3-2025-04-16"), az("o3")},
		Context: 200_000, MaxOutput: 100_000, Capabilities: reasoningCaps,
		Price: Price{Input: 2, Output: 8, CachedInput: 0.5}, Source: openaiPricing},
	{Name: "o4-mini", Display: "o4-mini", Maker: OpenAI, Offers: []Offer{oa("o4-mini", "o4-mini-2025-04-16"), az("o4-mini")},
		Context: 200_000, MaxOutput: 100_000, Capabilities: reasoningCaps,
		Price: Price{Input: 1.1, Output: 4.4, CachedInput: 0.275}, Source: openaiPricing},

	// Anthropic. From the 4.6 models on, ids carry no date and Vertex's
	// equal the Claude API's; Bedrock's profiles are those of Anthropic's
	// Bedrock page (global, us, eu, jp, apac).
	{Name: "claude-opus-4-7", Display: "Claude Opus 4.7", Maker: Anthropic,
		Offers:  []Offer{an("claude-opus-4-7"), vx("claude-opus-4-7")},
		Context: 1_000_000, MaxOutput: 128_000, Capabilities: claudeCaps,
		Price: Price{Input: 5, Output: 25, CachedInput: 0.5}, Source: anthropicPricing,
		Note: "on AWS through the Messages-API Bedrock endpoint only, with no Bedrock model id in the standard catalog; figures for the window and output from third-party copies of Anthropic's models page"},
	{Name: "claude-opus-4-6", Display: "Claude Opus 4.6", Maker: Anthropic,
		Offers: []Offer{an("claude-opus-4-6"), br("anthropic.claude-opus-4-6-v1", "global", "us", "eu", "jp", "apac"),
			vx("claude-opus-4-6")},
		Context: 200_000, MaxOutput: 128_000, Capabilities: claudeCaps,
		Price: Price{Input: 5, Output: 25, CachedInput: 0.5}, LongContext: opusLong, Source: anthropicPricing,
		Note: "a 1M-token window in beta, priced as LongContext above 200K"},
	{Name: "claude-sonnet-4-6", Display: "Claude Sonnet 4.6", Maker: Anthropic,
		Offers: []Offer{an("claude-sonnet-4-6"), br("anthropic.claude-sonnet-4-6", "global", "us", "eu", "jp"),
			vx("claude-sonnet-4-6")},
		Context: 200_000, MaxOutput: 64_000, Capabilities: claudeCaps,
		Price: Price{Input: 3, Output: 15, CachedInput: 0.3}, LongContext: sonnetLong, Source: anthropicPricing,
		Note: "a 1M-token window in beta (generally available in later copies of Anthropic's models page), priced as LongContext above 200K"},
	{Name: "claude-opus-4-5", Display: "Claude Opus 4.5", Maker: Anthropic,
		Offers: []Offer{an("claude-opus-4-5-20251101", "claude-opus-4-5"),
			br("anthropic.claude-opus-4-5-20251101-v1:0", "global", "us", "eu"), vx("claude-opus-4-5@20251101")},
		Context: 200_000, MaxOutput: 64_000, Capabilities: claudeCaps,
		Price: Price{Input: 5, Output: 25, CachedInput: 0.5}, Source: anthropicPricing},
	{Name: "claude-sonnet-4-5", Display: "Claude Sonnet 4.5", Maker: Anthropic,
		Offers: []Offer{an("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
			br("anthropic.claude-sonnet-4-5-20250929-v1:0", "global", "us", "eu", "jp"), vx("claude-sonnet-4-5@20250929")},
		Context: 200_000, MaxOutput: 64_000, Capabilities: claudeCaps,
		Price: Price{Input: 3, Output: 15, CachedInput: 0.3}, LongContext: sonnetLong, Source: anthropicPricing,
		Note: "a 1M-token window in beta, priced as LongContext above 200K"},
	{Name: "claude-haiku-4-5", Display: "Claude Haiku 4.5", Maker: Anthropic,
		Offers: []Offer{an("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
			br("anthropic.claude-haiku-4-5-20251001-v1:0", "global", "us", "eu"), vx("claude-haiku-4-5@20251001")},
		Context: 200_000, MaxOutput: 64_000, Capabilities: claudeCaps,
		Price: Price{Input: 1, Output: 5, CachedInput: 0.1}, Source: anthropicPricing},
	{Name: "claude-opus-4-1", Display: "Claude Opus 4.1", Maker: Anthropic,
		Offers: []Offer{retired(an("claude-opus-4-1-20250805", "claude-opus-4-1")),
			br("anthropic.claude-opus-4-1-20250805-v1:0", "us"), vx("claude-opus-4-1@20250805")},
		Context: 200_000, MaxOutput: 32_000, Capabilities: claudeCaps,
		Price: Price{Input: 15, Output: 75, CachedInput: 1.5}, Source: anthropicPricing,
		Note: "retired on the Claude API; deprecated on Bedrock"},
	{Name: "claude-opus-4", Display: "Claude Opus 4", Maker: Anthropic,
		Offers: []Offer{retired(an("claude-opus-4-20250514", "claude-opus-4-0")),
			retired(br("anthropic.claude-opus-4-20250514-v1:0", "us")), vx("claude-opus-4@20250514")},
		Context: 200_000, MaxOutput: 32_000, Capabilities: claudeCapsNoJSON,
		Price: Price{Input: 15, Output: 75, CachedInput: 1.5}, Source: anthropicPricing,
		Note: "retired on the Claude API and Bedrock; still on Vertex AI"},
	{Name: "claude-sonnet-4", Display: "Claude Sonnet 4", Maker: Anthropic,
		Offers: []Offer{an("claude-sonnet-4-20250514", "claude-sonnet-4-0"),
			br("anthropic.claude-sonnet-4-20250514-v1:0", "global", "us", "eu", "apac"), vx("claude-sonnet-4@20250514")},
		Context: 200_000, MaxOutput: 64_000, Capabilities: claudeCapsNoJSON,
		Price: Price{Input: 3, Output: 15, CachedInput: 0.3}, LongContext: sonnetLong, Source: anthropicPricing,
		Note: "deprecated on Bedrock; a 1M-token window in beta"},
	{Name: "claude-3-7-sonnet", Display: "Claude Sonnet 3.7", Maker: Anthropic,
		Offers: []Offer{retired(an("claude-3-7-sonnet-20250219", "claude-3-7-sonnet-latest")),
			retired(br("anthropic.claude-3-7-sonnet-20250219-v1:0", "us", "eu", "apac")), vx("claude-3-7-sonnet@20250219")},
		Context: 200_000, MaxOutput: 64_000, Capabilities: claudeCapsNoJSON,
		Price: Price{Input: 3, Output: 15, CachedInput: 0.3}, Source: anthropicPricing,
		Note: "retired on the Claude API (2026-02-19) and Bedrock; Vertex AI's retirement date not confirmed"},
	{Name: "claude-3-5-sonnet", Display: "Claude Sonnet 3.5 (v2)", Maker: Anthropic,
		Offers: []Offer{retired(an("claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest")),
			{Provider: Bedrock, ID: "anthropic.claude-3-5-sonnet-20241022-v2:0", Profiles: []string{"us", "apac"}},
			vx("claude-3-5-sonnet-v2@20241022")},
		Context: 200_000, MaxOutput: 8_192, Capabilities: Capabilities{Tools: true, Vision: true, Caching: true},
		Price: Price{Input: 3, Output: 15, CachedInput: 0.3}, Source: anthropicPricing,
		Note: "retired on the Claude API (2025-10-22); its Bedrock profiles and the clouds' retirement dates not confirmed"},

	// Google. The Gemini API and Vertex AI share the ids.
	{Name: "gemini-3-pro-preview", Display: "Gemini 3 Pro (preview)", Maker: Gemini,
		Offers:  []Offer{gm("gemini-3-pro-preview"), vx("gemini-3-pro-preview")},
		Context: 1_048_576, MaxOutput: 65_536, Capabilities: reasoningCaps,
		Price:       Price{Input: 2, Output: 12, CachedInput: 0.2},
		LongContext: &LongContext{Over: 200_000, Price: Price{Input: 4, Output: 18, CachedInput: 0.4}}, Source: geminiPricing,
		Note: "a preview: Google may replace it (Gemini 3.1 Pro) at short notice"},
	{Name: "gemini-2.5-pro", Display: "Gemini 2.5 Pro", Maker: Gemini,
		Offers:  []Offer{gm("gemini-2.5-pro"), vx("gemini-2.5-pro")},
		Context: 1_048_576, MaxOutput: 65_536, Capabilities: reasoningCaps,
		Price:       Price{Input: 1.25, Output: 10, CachedInput: 0.125},
		LongContext: &LongContext{Over: 200_000, Price: Price{Input: 2.5, Output: 15, CachedInput: 0.25}}, Source: geminiPricing},
	{Name: "gemini-2.5-flash", Display: "Gemini 2.5 Flash", Maker: Gemini,
		Offers:  []Offer{gm("gemini-2.5-flash"), vx("gemini-2.5-flash")},
		Context: 1_048_576, MaxOutput: 65_536, Capabilities: reasoningCaps,
		Price: Price{Input: 0.3, Output: 2.5, CachedInput: 0.03}, Source: geminiPricing,
		Note: "text, image and video input; audio input costs more"},
	{Name: "gemini-2.5-flash-lite", Display: "Gemini 2.5 Flash-Lite", Maker: Gemini,
		Offers:  []Offer{gm("gemini-2.5-flash-lite"), vx("gemini-2.5-flash-lite")},
		Context: 1_048_576, MaxOutput: 65_536, Capabilities: reasoningCaps,
		Price: Price{Input: 0.1, Output: 0.4, CachedInput: 0.01}, Source: geminiPricing,
		Note: "text, image and video input; audio input costs more"},
	{Name: "gemini-2.0-flash", Display: "Gemini 2.0 Flash", Maker: Gemini,
		Offers:  []Offer{retired(Offer{Provider: Gemini, ID: "gemini-2.0-flash", Aliases: []string{"gemini-2.0-flash-001"}}), vx("gemini-2.0-flash-001")},
		Context: 1_048_576, MaxOutput: 8_192, Capabilities: chatCaps,
		Price: Price{Input: 0.1, Output: 0.4, CachedInput: 0.025}, Source: geminiPricing,
		Note: "shut down on the Gemini API (2026-06-01, per copies of Google's deprecation notice); Vertex AI's date not confirmed"},
}
