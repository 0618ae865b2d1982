// Package catalog is the gateway's built-in model catalog: one model,
// many clouds. For the current major models of OpenAI, Anthropic and
// Google it gives the id each cloud knows the model by (the OpenAI,
// Anthropic and Gemini APIs, Amazon Bedrock with its cross-region
// inference profiles, Vertex AI, Azure OpenAI), the context window, the
// output limit, what the model can do (tools, vision, JSON output,
// reasoning, prompt caching) and its list price per million tokens
// (input, output, cached input, and long-prompt prices where the maker
// charges more).
//
// Lookup finds a model by its catalog name ("claude-sonnet-4-5") or any
// of its ids ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5@20250929",
// "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"); Resolve gives the id to
// send to one cloud, choosing on Bedrock the inference profile of the
// region's geography (newer Claude models are invoked on demand only
// through a profile); All lists the catalog.
//
// # Where the figures come from
//
// All figures are in models.go, next to their sources:
//
//   - OpenAI: "OpenAI API pricing" (openai.com/api/pricing), figures as
//     published up to GPT-5.2, 2025-12-11; windows and output limits from
//     OpenAI's model pages.
//   - Anthropic: "Claude API pricing" (platform.claude.com, about-claude/
//     pricing), checked 2026-12-02; ids, windows and output limits from
//     Anthropic's models overview and its Bedrock and Vertex AI pages,
//     which also list each model's Bedrock profiles.
//   - Google: "Gemini Developer API pricing" (ai.google.dev), figures as
//     of Gemini 3 Pro's preview, 2025-11-18.
//
// Prices are the makers' standard tier (not batch, flex or priority). The
// clouds list the same prices on their global endpoints; their regional
// and geographic endpoints of newer models cost about 10% more, which the
// catalog does not model. Where a figure could not be confirmed the
// model's Note says so. A cloud that has retired a model keeps its offer,
// marked Retired, so usage of the past can still be priced; Resolve does
// not send to it. Prices change: a target's price in the configuration
// overrides the catalog's.
package catalog
