package config

import (
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
)

// Config is a whole gateway configuration, as Parse returns it: defaults
// filled, inherited blocks merged, validated. Treat it as read-only once
// loaded; a reload builds a new one.
type Config struct {
	// Listen is the address the gateway serves on, host:port.
	// Default: 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// State is where shared state lives: "memory" (this process only) or a
	// Redis URL, redis://[user:password@]host:port/db or rediss://… for
	// TLS, so that replicas share breakers, limits and idempotency records.
	// Default: memory.
	State StateURL `yaml:"state"`
	// Fleet tunes how replicas share state when State is a Redis URL.
	Fleet Fleet `yaml:"fleet"`
	// Clients are the gateway's API keys. None: the gateway is open to
	// anyone who can reach it.
	Clients []Client `yaml:"clients"`
	// AdminToken guards the admin API, sent as Authorization: Bearer (the
	// dashboard asks for it once). Empty: the admin API is off.
	AdminToken Secret `yaml:"admin_token"`
	// MetricsToken, if set, guards /metrics (which names clients and
	// their spending): scrapers send it as Authorization: Bearer
	// (Prometheus: authorization: {credentials: …}). Empty: /metrics is
	// open to whoever can reach the gateway.
	MetricsToken Secret `yaml:"metrics_token"`
	// Providers are the upstream hosts, by name; targets refer to them by
	// that name, and a request for "name/model" goes straight to them. At
	// least one. A name is printable ASCII without "/" or spaces, at most
	// 256 bytes: it is sent in the X-Fusebox-Target header.
	Providers map[string]Provider `yaml:"providers"`
	// Defaults are the blocks an alias inherits, field by field, where it
	// does not set them itself.
	Defaults Defaults `yaml:"defaults"`
	// Models are the aliases clients put in a request's "model". At least
	// one.
	Models []Model `yaml:"models"`
	// Jobs are the aliases of long-running generation APIs (video, image),
	// served on OpenAI's /v1/videos and /v1/images/generations routes.
	// Their names share the models' namespace. Default: none.
	Jobs []JobAlias `yaml:"jobs"`
	// JobsDir is the directory where the job aliases' jobs are recorded,
	// one file each, so that a job submitted before a restart is polled
	// and downloaded after it. Default: "", in memory, lost at a restart.
	JobsDir string `yaml:"jobs_dir"`
	// Cache bounds the response cache shared by every alias that caches.
	Cache CacheLimits `yaml:"cache"`
	// Idempotency sets how long answers to requests with an
	// Idempotency-Key are kept for replay.
	Idempotency Idempotency `yaml:"idempotency"`
	// Server bounds what one client connection may cost the gateway.
	Server Server `yaml:"server"`
	// CORS lets browser apps call the gateway; off by default.
	CORS CORS `yaml:"cors"`
	// Responses bounds the store of the Responses API's stored responses
	// (store: true, previous_response_id, GET /v1/responses/{id}).
	Responses ResponseStore `yaml:"responses"`
	// OTel exports OpenTelemetry traces and GenAI metrics over OTLP/HTTP;
	// off by default.
	OTel OTel `yaml:"otel"`
	// Batch serves OpenAI's Files and Batch APIs (/v1/files, /v1/batches)
	// from a data directory; off unless its dir is set.
	Batch Batch `yaml:"batch"`
	// Keys keeps the client keys minted at runtime (POST /fusebox/keys).
	Keys KeyStore `yaml:"keys"`
	// RequestLog keeps each request's metadata for GET /fusebox/requests
	// and the dashboard; off unless its path is set.
	RequestLog RequestLog `yaml:"request_log"`
	// MCP federates MCP servers at /mcp (see schema_mcp.go); off unless
	// it has servers.
	MCP MCP `yaml:"mcp"`

	// File is the name the configuration was parsed under, for messages.
	File string `yaml:"-"`

	lines lines // where each field was set
}

// Client is one gateway API key. For example:
//
//	clients:
//	  - name: web
//	    key: ${FUSEBOX_KEY_WEB}
//	    weight: 2
//	    models: [smart, openai/gpt-4.1-mini]
//	    limits: {rpm: 600, tpm: 200000}
//	    budget: {daily: 20, monthly: 300}
type Client struct {
	// Name names the client in logs and metrics. Required, unique.
	Name string `yaml:"name"`
	// Key is the secret the client sends as "Authorization: Bearer KEY" or
	// "x-api-key: KEY". Required, unique.
	Key Secret `yaml:"key"`
	// Weight is the client's share when requests queue for a saturated
	// target (weighted fair queueing). Default: 1.
	Weight int `yaml:"weight"`
	// Models are the aliases (or "provider/model" names) the client may
	// use. Empty: all of them.
	Models []string `yaml:"models"`
	// Limits cap the client's own traffic. Zero: no limit.
	Limits Limits `yaml:"limits"`
	// Budget caps the client's spend in USD, at the configured prices.
	// Zero: no budget.
	Budget Budget `yaml:"budget"`
	// MCP are the client's rights at /mcp. Default: every MCP server.
	MCP ClientMCP `yaml:"mcp"`
}

// Budget is a spend limit in USD per UTC day and per UTC month. Over it,
// the client's requests are refused with a 429 until the period resets.
// Requests are priced at their targets' prices. For example:
//
//	budget: {daily: 20, monthly: 300}
type Budget struct {
	// Daily is the most the client may spend in a UTC day, in USD.
	// 0: no daily limit.
	Daily float64 `yaml:"daily"`
	// Monthly is the most the client may spend in a UTC month, in USD.
	// 0: no monthly limit.
	Monthly float64 `yaml:"monthly"`
}

// ProviderType is the wire protocol a provider speaks.
type ProviderType string

// The provider types.
const (
	// TypeOpenAI is OpenAI's API and every host compatible with it (Azure
	// OpenAI's /openai/v1, DeepSeek, Together, Groq, vLLM, Ollama, …).
	TypeOpenAI ProviderType = "openai"
	// TypeAnthropic is Anthropic's Messages API.
	TypeAnthropic ProviderType = "anthropic"
	// TypeBedrock is AWS Bedrock: Converse for every model, InvokeModel
	// with Anthropic's Messages body for Claude; SigV4-signed with the
	// AWS SDK's credential chain, or a Bedrock API key in keys.
	TypeBedrock ProviderType = "bedrock"
	// TypeVertex is Google Cloud's Vertex AI: Gemini (generateContent) and
	// Claude (rawPredict), with Google credentials.
	TypeVertex ProviderType = "vertex"
	// TypeGemini is Google AI Studio's native Gemini API, with an API key.
	TypeGemini ProviderType = "gemini"
	// TypeAzure is Azure OpenAI: deployments (or the v1 API) with an
	// api-key or an Entra ID token.
	TypeAzure ProviderType = "azure"
)

// providerTypes are the known provider types, in the order messages list
// them.
var providerTypes = []ProviderType{TypeAnthropic, TypeAzure, TypeBedrock, TypeGemini, TypeOpenAI, TypeVertex}

// Provider is one upstream host and how to reach it. For example, a host
// that speaks OpenAI's API:
//
//	providers:
//	  deepseek:
//	    type: openai
//	    base_url: https://api.deepseek.com/v1
//	    keys: ["${DEEPSEEK_API_KEY}"]
//	    limits: {rpm: 300, max_in_flight: 16}
//	    overrides: {status: {429: outage}}
//
// and the clouds (docs/PROVIDERS.md has each one's credentials):
//
//	providers:
//	  bedrock: {type: bedrock, region: us-east-1}   # the AWS credential chain
//	  vertex:  {type: vertex, project: my-project, region: us-east5}
//	  gemini:  {type: gemini, keys: ["${GEMINI_API_KEY}"]}
//	  azure-eu: {type: azure, base_url: https://my-resource.openai.azure.com, keys: ["${AZURE_OPENAI_API_KEY}"]}
type Provider struct {
	// Name is the provider's key in the providers map (filled in by Parse).
	Name string `yaml:"-"`
	// Type is the protocol: openai, anthropic, bedrock, vertex, gemini or
	// azure. Default: the provider's name when that is one of them;
	// required otherwise.
	Type ProviderType `yaml:"type"`
	// BaseURL is the API root. Default: per type, openai
	// https://api.openai.com/v1, anthropic https://api.anthropic.com,
	// gemini https://generativelanguage.googleapis.com, bedrock
	// https://bedrock-runtime.{region}.amazonaws.com, vertex
	// https://{region}-aiplatform.googleapis.com (aiplatform.googleapis.com
	// for region global). Required for azure: the resource's endpoint,
	// such as https://my-resource.openai.azure.com.
	BaseURL string `yaml:"base_url"`
	// Region is the cloud region: bedrock's AWS region (us-east-1; its
	// geography picks the cross-region inference profile of a catalog
	// model that needs one) and vertex's location (us-east5,
	// europe-west1, global). Required for bedrock and vertex.
	Region string `yaml:"region"`
	// Project is the Google Cloud project of a vertex provider. Required
	// for vertex.
	Project string `yaml:"project"`
	// CredentialsFile is a Google credentials JSON file (a service
	// account key, or any file that application default credentials
	// read) for a vertex provider. Default: application default
	// credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, workload
	// identity, the metadata server).
	CredentialsFile string `yaml:"credentials_file"`
	// AWS are a bedrock provider's credentials when they are not the
	// credential chain's. Default: the AWS SDK's default chain (env, the
	// shared config's profile, web identity, container and instance
	// roles).
	AWS AWSCredentials `yaml:"aws"`
	// APIVersion is an azure provider's api-version, or v1 for the v1 API
	// (the deployment then goes in the body's model). Default: 2024-10-21.
	APIVersion string `yaml:"api_version"`
	// Entra authenticates an azure provider with Entra ID tokens instead
	// of keys: a client secret, or workload identity's federated token
	// file. Default: none, keys are api-keys.
	Entra Entra `yaml:"entra"`
	// Responses says that the host serves OpenAI's Responses API
	// (/responses): a Responses request goes to it as it is, built-in
	// tools included, instead of translated to chat. Default: true for
	// type openai at OpenAI's own base_url, false elsewhere (Azure OpenAI
	// v1 serves it too: set true).
	Responses bool `yaml:"responses"`
	// Unsupported lists request fields the host cannot serve, for a type
	// openai host that lacks some of OpenAI's (known: n, response_format,
	// logprobs, top_logprobs, tools, tool_choice, parallel_tool_calls,
	// reasoning_effort, audio, modalities, prediction, seed). A request
	// that sets one (to other than its neutral value) passes this
	// provider's targets over for the next, as an Anthropic target's
	// refusals do, and gets a 400 naming the field only when no target of
	// its model can serve it.
	Unsupported []string `yaml:"unsupported"`
	// Keys are the API keys, used in rotation; a key the provider refuses
	// (auth or quota) leaves the rotation for AuthRest. Empty: requests
	// carry no key (local hosts such as Ollama). For bedrock, Bedrock API
	// keys (sent as bearer tokens, instead of SigV4); for azure, api-keys;
	// vertex takes none (its credentials are Google's).
	Keys []Secret `yaml:"keys"`
	// Headers are extra request headers (an organisation, an API version,
	// Azure's api-key). Their values are treated as secrets.
	Headers map[string]Secret `yaml:"headers"`
	// Timeouts for calls to this provider; a target's alias may override
	// each one. Unset fields come from defaults.timeouts.
	Timeouts Timeouts `yaml:"timeouts"`
	// Limits cap the traffic sent with each of the provider's keys (rate
	// limits are counted per key by providers). Zero: no limit.
	Limits Limits `yaml:"limits"`
	// Overrides change how this provider's answers are classified.
	Overrides Overrides `yaml:"overrides"`
	// Price is the price of a request that names this provider directly
	// ("provider/model" as its model); aliases price their own targets.
	// Default: none, and a client with a budget may then not make such
	// requests (they could not be counted against it).
	Price Price `yaml:"price"`
	// AuthRest is how long a key refused with a 401 or 403, or a quota
	// error, stays out of the rotation; a target's own keys included. Must
	// be above 0. Default: 5m.
	AuthRest time.Duration `yaml:"auth_rest"`
	// AuthProbe, when set, checks a key that is out after a refusal this
	// often, with a cheap request that costs no tokens (GET /models), and
	// brings the key back as soon as it works, before AuthRest ends. At
	// least 1s, and below AuthRest. Default: 0, off.
	AuthProbe time.Duration `yaml:"auth_probe"`
}

// AWSCredentials name a bedrock provider's AWS credentials: a profile, or
// static keys (access_key_id: "${AWS_ACCESS_KEY_ID}", …).
type AWSCredentials struct {
	// Profile is a profile of the shared config and credentials files.
	// Default: AWS_PROFILE, else default.
	Profile string `yaml:"profile"`
	// AccessKeyID and SecretAccessKey are static keys, both or neither;
	// SessionToken goes with temporary ones. Default: none.
	AccessKeyID     Secret `yaml:"access_key_id"`
	SecretAccessKey Secret `yaml:"secret_access_key"`
	SessionToken    Secret `yaml:"session_token"`
}

// Entra is an Azure OpenAI provider's Entra ID application: tenant_id,
// client_id, and client_secret (or federated_token_file).
type Entra struct {
	// TenantID and ClientID name the application. Required.
	TenantID string `yaml:"tenant_id"`
	ClientID string `yaml:"client_id"`
	// ClientSecret is the application's secret; or FederatedTokenFile,
	// workload identity's token file (AZURE_FEDERATED_TOKEN_FILE), read
	// anew for each token. One of the two is required.
	ClientSecret       Secret `yaml:"client_secret"`
	FederatedTokenFile string `yaml:"federated_token_file"`
	// AuthorityHost is the token service. Default:
	// https://login.microsoftonline.com.
	AuthorityHost string `yaml:"authority_host"`
}

// Timeouts bound upstream calls. A zero duration means no bound; the
// built-in defaults (see defaults.timeouts) keep connect, ttfb, idle and
// total bounded unless set to 0 explicitly.
//
// The block is inherited field by field: defaults.timeouts, then the
// provider's, then the alias's (see Target.Timeouts). Connect, TTFB, Idle,
// Total and SuspectAfter apply per target; Deadline applies per request.
// For example:
//
//	timeouts: {connect: 3s, ttfb: auto, idle: 15s, total: 5m}
type Timeouts struct {
	// Connect bounds dialling the provider, TCP and TLS. Default: 5s.
	Connect time.Duration `yaml:"connect"`
	// TTFB bounds, per attempt and counted from when the request is sent,
	// the wait for the response headers and the first content: for a
	// non-streamed answer its first byte, which most providers send only
	// once the whole answer is generated, so ttfb must cover generation
	// time; for a stream, the first event that carries content.
	// Default: 60s.
	//
	// ttfb: auto makes the budget follow the target's own recent
	// distribution, max(1s, 3 × p99) of the last two minutes, never above
	// the value inherited: TTFB then holds that inherited value (or the
	// built-in 60s), the ceiling, and AutoTTFB is set. With an inherited 0
	// there is no ceiling. Like any field, auto is inherited: a provider's
	// ttfb: auto applies to its targets unless the alias sets ttfb.
	TTFB time.Duration `yaml:"ttfb" auto:"AutoTTFB"`
	// AutoTTFB is set when the file says ttfb: auto; see TTFB.
	AutoTTFB bool `yaml:"-"`
	// Idle bounds the silence between two chunks of a stream. Default: 30s.
	//
	// idle: auto works as ttfb: auto does, on the gaps between chunks: the
	// budget follows the target's own recent distribution, max(1s, 3 × p99)
	// of the last two minutes, never above the value inherited, which Idle
	// keeps (or the built-in 30s); AutoIdle is set.
	Idle time.Duration `yaml:"idle" auto:"AutoIdle"`
	// AutoIdle is set when the file says idle: auto; see Idle.
	AutoIdle bool `yaml:"-"`
	// Total bounds one attempt from start to end. Default: 10m.
	Total time.Duration `yaml:"total"`
	// Deadline bounds a whole client request, all attempts and failovers
	// included. It is read per request: for an alias, from the alias's
	// timeouts (which inherit defaults.timeouts); for a provider/model
	// request, from defaults.timeouts. A provider's timeouts cannot set it.
	// Default: 0, no gateway bound (the client's own timeout applies).
	Deadline time.Duration `yaml:"deadline"`
	// SuspectAfter: when every stream of a target whose content has flowed
	// this long has then been silent this long, new requests skip the
	// target (one still goes to it now and then, to see it recover); it is
	// not tripped. Default: adaptive (AutoSuspect): 4 × the target's recent
	// p99 gap between chunks, at least 250ms, at most Idle/8 (of the
	// ceiling when idle is auto), and Idle/8 until the gaps are known;
	// computed from the block's own idle when no block in its chain sets
	// suspect_after; 0 when Idle is 0. A set value is used as it is. 0: off.
	SuspectAfter time.Duration `yaml:"suspect_after"`
	// AutoSuspect is set when suspect_after was left to its default; see
	// SuspectAfter.
	AutoSuspect bool `yaml:"-"`
	// MinRate is the least pace of a stream once its first content has
	// come, in content events per second (each carries at least one
	// token, so it is a floor on tokens per second): the k-th event after
	// the first is due 2s + k / min_rate after it, and the whole answer
	// within 2s + max_tokens / min_rate. A stream that falls behind is
	// cut as too slow, an outage of its target like a stall: it counts
	// for the breaker, fails over before anything reached the client, and
	// with continue_on_failure continues on the next target after. A
	// drip that never stalls long enough for idle is caught so. Default:
	// 0, no floor.
	//
	// min_rate: auto makes the floor follow the target's own pace: a third
	// of its recent pace (the p90 time per event of its last successful
	// streams of 8 events or more, once it has 20), never below the value
	// inherited, which MinRate keeps; AutoRate is set.
	MinRate float64 `yaml:"min_rate" auto:"AutoRate"`
	// AutoRate is set when the file says min_rate: auto; see MinRate.
	AutoRate bool `yaml:"-"`
	// CommitAfter holds a stream's first content events back from the
	// client until this many have come (or the answer ended), each within
	// suspect_after of the one before (idle when suspect_after is 0),
	// while a later target could take the request. A stream that stalls,
	// drips or breaks before then is an outage of its target that the
	// client never sees: the request fails over as if the stream had not
	// begun, without continue_on_failure's splice. It costs every held
	// stream's time to first token the time those events take (a few
	// tens of milliseconds for most providers' token-sized events; more
	// for providers that send few large events), and nothing on a
	// target's last rung. At most 32. Default: 0 (or 1), the first
	// content commits.
	CommitAfter int `yaml:"commit_after"`
}

// Limits cap request and token rates and concurrency. Zero fields mean no
// limit. For example:
//
//	limits: {rpm: 500, tpm: 200000, max_in_flight: 32, max_wait: 2s}
type Limits struct {
	// RPM is requests per minute. A provider's is paced with at most two
	// seconds' worth at once, so that no minute sees more than the limit
	// and a thirtieth (with state: redis://…, across the fleet). 0: no
	// limit.
	RPM int `yaml:"rpm"`
	// TPM is tokens per minute, estimated from the request and corrected
	// from the answer's usage. A provider's is paced with at most ten
	// seconds' worth at once (one larger request goes alone). 0: no limit.
	TPM int `yaml:"tpm"`
	// MaxInFlight is how many calls may run at once. 0: no limit.
	MaxInFlight int `yaml:"max_in_flight"`
	// MaxWait is the longest a request queues for the rate or concurrency
	// limit before it fails over (or fails). 0: only the request's own
	// deadline bounds the wait.
	MaxWait time.Duration `yaml:"max_wait"`
}

// Overrides remap the verdict on a provider's answers. Kinds are outage,
// throttle, capacity, auth, quota, client_error, canceled and success.
// For example:
//
//	overrides:
//	  status: {429: outage}
//	  code: {queue_full: outage}
type Overrides struct {
	// Status maps an HTTP status to a kind, e.g. {429: outage} to let
	// throttling trip the breaker.
	Status map[int]aierr.Kind `yaml:"status"`
	// Code maps a provider error code or type to a kind, e.g.
	// {queue_full: outage}. A code override beats a status override.
	Code map[string]aierr.Kind `yaml:"code"`
}

// Defaults are blocks that every alias inherits. An alias that sets a block
// keeps the fields it names (even when zero) and takes the others from here.
// For example:
//
//	defaults:
//	  breaker: {window: 30s, min_calls: 10, failure_rate: 0.5}
//	  retry: {attempts: 2, base: 200ms}
//	  timeouts: {ttfb: 30s, deadline: 2m}
type Defaults struct {
	// Breaker is the default circuit breaker of a target. Built in: open
	// 5s, open_backoff 1.5, max_open 8s (see Breaker).
	Breaker Breaker `yaml:"breaker"`
	// Retry is the default retry policy on one target. Built in:
	// same_target_wait 2s; the others are retry.Policy's defaults.
	Retry Retry `yaml:"retry"`
	// Timeouts are the default timeouts, also inherited by providers.
	// Built in: connect 5s, ttfb 60s, idle 30s, total 10m, deadline 0 (none),
	// suspect_after idle/8 (at least 250ms).
	Timeouts Timeouts `yaml:"timeouts"`
}

// Strategy picks the order in which an alias tries its targets.
type Strategy string

// The strategies.
const (
	// Fallback tries the targets in the order listed.
	Fallback Strategy = "fallback"
	// Weighted picks at random by weight among healthy targets.
	Weighted Strategy = "weighted"
	// LeastLatency prefers the target with the lowest recent latency.
	LeastLatency Strategy = "least-latency"
	// CheapestHealthy prefers the cheapest target whose breaker admits.
	CheapestHealthy Strategy = "cheapest-healthy"
)

// FailoverOn names a client error that may still go to another target.
type FailoverOn string

// The client errors an alias may fail over on.
const (
	// FailoverContextLength: the prompt did not fit the model's context.
	FailoverContextLength FailoverOn = "context_length"
	// FailoverContentFilter: the provider's safety filter refused.
	FailoverContentFilter FailoverOn = "content_filter"
)

// Model is an alias: a name clients ask for, and the targets behind it, a
// ladder tried in order. For example:
//
//	models:
//	  - name: smart
//	    targets:
//	      - {provider: anthropic, model: claude-sonnet-4-5}
//	      - {provider: openai, model: gpt-4.1}
//	    failover_on: [context_length]
//	    timeouts: {ttfb: 20s, deadline: 90s}
//	    cache: {ttl: 10m}
type Model struct {
	// Name is what clients put in "model". Required, unique.
	Name string `yaml:"name"`
	// Strategy orders the targets: fallback, weighted, least-latency or
	// cheapest-healthy. Default: fallback.
	Strategy Strategy `yaml:"strategy"`
	// Targets are the upstream models behind the alias. At least one.
	Targets []Target `yaml:"targets"`
	// Breaker configures each target's circuit breaker. Unset fields come
	// from defaults.breaker. The gateway keeps one breaker per
	// (provider, model); when two aliases list the same one, the first
	// alias in the file sets it.
	Breaker Breaker `yaml:"breaker"`
	// Retry configures retries on one target. Unset fields come from
	// defaults.retry.
	Retry Retry `yaml:"retry"`
	// Timeouts override the provider's timeouts for this alias's targets.
	// After Parse, unset fields hold defaults.timeouts; what applies to
	// each target (alias, then provider, then defaults) is Target.Timeouts.
	Timeouts Timeouts `yaml:"timeouts"`
	// FailoverOn lists the client errors that go to the next target instead
	// of back to the caller: context_length, content_filter. Default: none.
	FailoverOn []FailoverOn `yaml:"failover_on"`
	// Cache turns on the response cache for this alias when its ttl is set.
	Cache ModelCache `yaml:"cache"`
	// Degraded is the answer given when no target and no cached answer can
	// serve. Off unless content or message is set.
	Degraded Degraded `yaml:"degraded"`
	// Hedge sends a slow request to the next target as well, and keeps
	// whichever answer brings content first. Off unless the block is set;
	// not inherited from defaults. Needs at least two targets.
	Hedge Hedge `yaml:"hedge"`
	// ContinueOnFailure: a stream that breaks after content was sent to the
	// client is continued on the next target, asked to go on from the text
	// already delivered, instead of ending in an error. Needs at least two
	// targets. Default: false, because the continuation is another model's
	// words.
	ContinueOnFailure bool `yaml:"continue_on_failure"`
}

// Hedge configures an alias's hedged requests: when the first attempt has
// brought no content after a delay, the same request also goes to the next
// target, and the first of them to bring content wins; the others are
// cancelled. The zero value is off. For example:
//
//	hedge: {after: p95, max: 1, budget: 0.1}
type Hedge struct {
	// After is the delay before a hedge is sent, counted like ttfb from
	// when the first request was sent. The file gives it as a duration
	// (after: 800ms) or as a percentile (after: p95, see AfterQuantile);
	// one of the two is required.
	After time.Duration `yaml:"after" quantile:"AfterQuantile"`
	// AfterQuantile is set when the file gives after as a percentile, pNN
	// or pNN.N from p50 to p99.9 (p95 → 0.95): the delay is then that
	// quantile of the target's recent time to first content.
	AfterQuantile float64 `yaml:"-"`
	// Max is the most hedges for one request, each to the next target in
	// the alias's order: 1 to 3, and fewer than the alias's targets.
	// Default: 1.
	Max int `yaml:"max"`
	// Budget caps hedged requests at this fraction of the alias's recent
	// requests, in (0, 1], so that a slow provider does not double the
	// traffic. Default: 0.1.
	Budget float64 `yaml:"budget"`
}

// Enabled reports whether the alias hedges.
func (h Hedge) Enabled() bool { return h.After > 0 || h.AfterQuantile > 0 }

// Server bounds client connections and requests, against slow or
// oversized clients. For example:
//
//	server: {max_body_bytes: 4194304, body_timeout: 30s}
type Server struct {
	// MaxBodyBytes is the largest request body accepted; a larger one gets
	// a 413. Default: 16777216 (16 MiB).
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// BodyTimeout bounds reading a request's body; a client slower than
	// that gets a 408. It does not bound the answer, which may stream for
	// minutes. Default: 60s.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// ReadHeaderTimeout bounds reading a request's headers. Default: 10s.
	// A reload does not change it; restart for that.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// WriteTimeout bounds one write of an answer to a client (a stream's
	// event, a body): a client that stops reading for longer is dropped,
	// so it holds no goroutine and no buffers, and its upstream is not
	// blamed. It does not bound the answer, which may stream for minutes.
	// Default: 30s.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// UsageDrain is how long an answer whose client left goes on being
	// read (and not sent) so that its usage prices it — a stream's last
	// chunks, a body still arriving — for clients with a budget or
	// rpm/tpm limits, which are charged what they use. Past it, or with
	// 0, the upstream is canceled and the request is charged its
	// reservation. Draining lets the upstream finish what it was
	// generating, which the provider bills; the bound caps that. Other
	// clients' upstreams are canceled at once. Default: 5s.
	UsageDrain time.Duration `yaml:"usage_drain"`
	// IdleTimeout closes a keep-alive connection idle for longer.
	// Default: 120s. A reload does not change it; restart for that.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// ForwardHeaders are client headers passed to the upstream besides
	// OpenAI-Beta, anthropic-beta and anthropic-version (always passed, to
	// the providers that read them). Credentials (Authorization,
	// x-api-key, api-key, cookies), the connection's own headers and
	// x-fusebox-* are never passed, listed or not.
	ForwardHeaders []string `yaml:"forward_headers"`
}

// OTel exports traces (a span per request and per upstream attempt, after
// the OpenTelemetry GenAI conventions) and GenAI client metrics over
// OTLP/HTTP (docs/OBSERVABILITY.md). A field left unset defers to the
// standard OTEL_* environment variable. For example:
//
//	otel: {enabled: true, endpoint: "http://collector:4318", sample_ratio: 0.1}
type OTel struct {
	// Enabled turns it on. Off, it costs a request nothing.
	Enabled bool `yaml:"enabled"`
	// Endpoint is the collector's OTLP/HTTP base URL ("/v1/traces" and
	// "/v1/metrics" are added). "": OTEL_EXPORTER_OTLP_ENDPOINT, then
	// https://localhost:4318.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf, the only one built in. "":
	// OTEL_EXPORTER_OTLP_PROTOCOL.
	Protocol string `yaml:"protocol"`
	// ServiceName is the resource's service.name. "": OTEL_SERVICE_NAME,
	// then "fusebox".
	ServiceName string `yaml:"service_name"`
	// Headers are sent with every export (a collector's API key; values
	// are secrets). Set, they replace OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]Secret `yaml:"headers"`
	// SampleRatio is the share of new traces sampled, in (0, 1]; a
	// request with a traceparent follows its parent. 0: the OTEL_TRACES_*
	// variables, then every trace.
	SampleRatio float64 `yaml:"sample_ratio"`
	// CaptureContent records messages and answers on the spans (bounded).
	// Off: message contents are never recorded.
	CaptureContent bool `yaml:"capture_content"`
	// Timeout bounds each export. 0: OTEL_EXPORTER_OTLP_TIMEOUT, then 10s.
	Timeout time.Duration `yaml:"timeout"`
}

// ResponseStore is where the Responses API keeps the responses made with
// store: true, each readable only by the client key that made it, and
// bounded per client key. With state: redis://… they are the fleet's too
// (any replica finds them), each at most 4 MiB, kept ttl (default 30
// days), and bounded per client key in Redis as well, by max_entries and
// max_bytes, across all replicas. For example:
//
//	responses: {dir: /var/lib/fusebox/responses, max_bytes: 268435456, ttl: 720h}
type ResponseStore struct {
	// Dir keeps them in files there, one per response, written atomically,
	// so they survive a restart. "": in memory, lost at a restart.
	Dir string `yaml:"dir"`
	// MaxEntries bounds the responses kept per client key, in memory, in
	// a dir and in Redis (for the whole fleet); past it the oldest go (in
	// memory the least recently used), never another client's. 0: 1000.
	MaxEntries int `yaml:"max_entries"`
	// MaxBytes bounds their size per client key: 0 means 64 MiB in memory
	// (sizes estimated) and in Redis (bytes as stored), 256 MiB in a dir.
	// Past it the oldest go; a response over it alone is not stored.
	MaxBytes int `yaml:"max_bytes"`
	// TTL is how long a response is kept in a dir, or in Redis. 0: in a
	// dir until pushed out; in Redis 720h.
	TTL time.Duration `yaml:"ttl"`
}

// Batch serves OpenAI's Files and Batch APIs: a client uploads a JSONL
// file of requests (purpose batch) and creates a batch of it; the gateway
// runs its lines through the same ladders, breakers, limits and budgets
// as its own requests, as that client, in the background, and keeps the
// output and error files. Files and batches live in dir and survive a
// restart: a batch in progress resumes from its journal. They belong to
// the replica that runs them. For example:
//
//	batch: {dir: /var/lib/fusebox/batches, max_file_bytes: 209715200, concurrency: 32}
type Batch struct {
	// Dir is the data directory (files/ and batches/ under it). "": the
	// Files and Batch APIs are off.
	Dir string `yaml:"dir"`
	// MaxFileBytes is the largest upload. 0: 200 MiB, OpenAI's limit.
	MaxFileBytes int `yaml:"max_file_bytes"`
	// MaxFiles is how many files one client key may keep: its uploads,
	// each counted from before its first byte, and its batches' output
	// and error files, two held by each batch from its creation until it
	// ends, when it keeps those it produced (0 to 2). An upload with no
	// file free is refused (429), a batch without two free (400
	// file_limit_exceeded). 0: 500.
	MaxFiles int `yaml:"max_files"`
	// MaxClientBytes is how many bytes of files one client key may keep:
	// its uploads, as their bytes arrive, and its batches' output and
	// error files, as their lines are written. An upload that would pass
	// it is refused (429), and so is a batch created with no byte free
	// (400); a running batch that reaches it stops, failed with
	// storage_limit, keeping the lines it wrote. 0: 10 GiB.
	MaxClientBytes int `yaml:"max_client_bytes"`
	// MaxInProgress is how many batches one client key may have running
	// at once. 0: 10.
	MaxInProgress int `yaml:"max_in_progress"`
	// Concurrency is the most lines of one batch in flight; it adapts down
	// while targets refuse for load and back up after. 0: 32.
	Concurrency int `yaml:"concurrency"`
	// LineDeadline is how long a line is retried through outages before
	// it goes to the error file. 0: 1h.
	LineDeadline time.Duration `yaml:"line_deadline"`
}

// CORS lets browser apps on other origins call the gateway. Off unless
// origins is set. A preflight is answered without authentication, the
// same for any key or none. For example:
//
//	cors: {origins: ["https://app.example.com"], max_age: 10m}
type CORS struct {
	// Origins are the origins allowed, as a browser sends them
	// (scheme://host[:port]), or "*" for any.
	Origins []string `yaml:"origins"`
	// Headers are request headers allowed besides the ones the OpenAI and
	// Anthropic SDKs send (authorization, content-type, x-api-key,
	// anthropic-*, openai-*, idempotency-key, x-stainless-*,
	// x-fusebox-session, x-fusebox-cache, cache-control).
	Headers []string `yaml:"headers"`
	// MaxAge is how long a browser may keep a preflight's answer.
	// Default: 10m.
	MaxAge time.Duration `yaml:"max_age"`
}

// Fleet tunes the state replicas share through Redis (state: redis://…).
// What is shared: breakers (trips, the window rules over all replicas'
// outcomes, half-open probes), client budgets, idempotency records,
// rpm/tpm limits (each replica paces at its share of the replicas alive)
// and sticky sessions; max_in_flight and the cache stay per replica. A
// request waits on Redis only for a budget reservation, an idempotency
// claim, a half-open probe permit or the lookup of a conversation new to
// the replica, each bounded by Timeout; with Redis down each replica goes
// on with its own state. For example (with state: redis://…):
//
//	fleet: {prefix: "prod:", timeout: 20ms, sync: 50ms}
type Fleet struct {
	// Prefix starts every key and channel name, so that several fleets
	// can share one Redis. Default: "fusebox:".
	Prefix string `yaml:"prefix"`
	// Timeout is the least a Redis call on the request path may wait:
	// the bound adapts to 4 times the 99th percentile of recent round
	// trips when that is more, up to 5 times Timeout (at least 100ms).
	// Default: 20ms.
	Timeout time.Duration `yaml:"timeout"`
	// Sync is how often outcomes are published and the fleet's state read
	// (trips also arrive at once by pub/sub). Default: 50ms.
	Sync time.Duration `yaml:"sync"`
	// Addrs are more Redis nodes, host:port, beside the state URL's:
	// Cluster seeds (with Cluster) or Sentinels (with MasterName).
	Addrs []string `yaml:"addrs"`
	// Cluster: the nodes are a Redis Cluster.
	Cluster bool `yaml:"cluster"`
	// MasterName is the Sentinel master's name; set, the state URL's host
	// and Addrs are the Sentinels.
	MasterName string `yaml:"master_name"`
	// Lease is how long a replica's claim on running work (an
	// Idempotency-Key being answered, a video job, a Batch API batch)
	// outlives its last renewal: a replica that dies leaves its work to
	// the others after at most this long. At least twice sync.
	// Default: 10s.
	Lease time.Duration `yaml:"lease"`
}

// Idempotency configures replays of requests that carry an
// Idempotency-Key: the same key and body get the stored answer. For
// example:
//
//	idempotency: {ttl: 1h, max_records: 1000}
type Idempotency struct {
	// TTL is how long an answer is kept. Default, also for 0: 24h.
	TTL time.Duration `yaml:"ttl"`
	// MaxRecords bounds the records kept per client key; past it the
	// client's least recently used go (never another client's). Default,
	// also for 0: 10000.
	MaxRecords int `yaml:"max_records"`
	// MaxBytes bounds one stored answer; a larger one is not stored.
	// Default, also for 0: 4194304 (4 MiB).
	MaxBytes int `yaml:"max_bytes"`
	// MaxClientBytes bounds the answers kept per client key, in bytes;
	// past it the client's least recently used go. Default, also for 0:
	// 67108864 (64 MiB).
	MaxClientBytes int `yaml:"max_client_bytes"`
}

// CacheLimits bound the response cache's memory, shared by every alias
// that caches; past either bound the least recently used answers go. For
// example:
//
//	cache: {max_entries: 50000, max_bytes: 268435456}
type CacheLimits struct {
	// MaxEntries bounds the answers kept. Default, also for 0: 10000.
	MaxEntries int `yaml:"max_entries"`
	// MaxBytes bounds the bytes of the answers kept. Default, also for 0:
	// 67108864 (64 MiB).
	MaxBytes int `yaml:"max_bytes"`
}

// ModelCache is an alias's response cache: exact-match answers to identical
// requests (the same messages, tools and sampling parameters). For
// example:
//
//	cache: {ttl: 10m, stale_for: 1h, scope: global}
type ModelCache struct {
	// TTL is how long an answer is served from the cache. 0: no cache.
	TTL time.Duration `yaml:"ttl"`
	// StaleFor is how much longer an expired answer may be served, marked
	// stale, when no target can answer (stale-if-error). 0: never.
	StaleFor time.Duration `yaml:"stale_for"`
	// Scope is who may share an answer: client (only the client key that
	// asked) or global (every client). Default: client.
	Scope string `yaml:"scope"`
	// Store is where answers are kept: memory (this replica's own) or
	// redis (the fleet's, with state: redis://…; each replica keeps a
	// local copy of what it served). In Redis an answer lives ttl +
	// stale_for. Default: memory.
	Store string `yaml:"store"`
}

// Degraded is a static answer for when nothing else can serve. For
// example:
//
//	degraded: {content: "We are busy; please try again in a minute."}
type Degraded struct {
	// Content, if set, is answered as the assistant's message of a normal
	// chat completion (status 200), marked with x-fusebox-degraded.
	Content string `yaml:"content"`
	// Status is the status of the error answered, with Message, when
	// Content is empty: 400 to 599. Default, also for 0: 503.
	Status int `yaml:"status"`
	// Message, if Content is empty, is answered as an error of Status
	// instead of the usual one.
	Message string `yaml:"message"`
}

// Enabled reports whether the alias answers degraded.
func (d Degraded) Enabled() bool { return d.Content != "" || d.Message != "" }

// Target is one upstream model behind an alias. For example:
//
//	targets:
//	  - {provider: openai, model: gpt-4.1, weight: 2, price: {input: 2, output: 8}}
type Target struct {
	// Provider is the name of a configured provider. Required.
	Provider string `yaml:"provider"`
	// Model is the provider's model name: printable ASCII, at most 256
	// bytes (it is sent in the X-Fusebox-Target header). Required. A
	// model of the built-in catalog (fusebox models) may be named by its
	// catalog name on every cloud: claude-sonnet-4-5 on bedrock is sent as
	// its Bedrock id or inference profile, and priced from the catalog
	// when the target sets no price.
	Model string `yaml:"model"`
	// ModelID, when set, is sent instead of the catalog's id for Model:
	// a Bedrock inference profile or ARN, a Vertex model version.
	ModelID string `yaml:"model_id"`
	// Deployment is an azure target's deployment name. Required for azure
	// targets, but with api_version v1, where it defaults to Model.
	Deployment string `yaml:"deployment"`
	// Weight is the target's share under the weighted strategy. Default: 1.
	Weight int `yaml:"weight"`
	// Price is what the target costs, for cost accounting and the
	// cheapest-healthy strategy.
	Price Price `yaml:"price"`
	// Keys, when set, are the API keys this target uses instead of the
	// provider's (a subset, or others). Default: the provider's keys.
	Keys []Secret `yaml:"keys"`

	// Timeouts are the target's effective timeouts, computed by Parse: the
	// alias's, then the provider's, then defaults.timeouts, field by field
	// (AutoTTFB and AutoIdle with their fields; SuspectAfter, when no block
	// sets it, from the resulting Idle). Deadline is the alias's.
	Timeouts Timeouts `yaml:"-"`
}

// Price is what tokens cost, in US dollars per million. For example:
//
//	price: {input: 2, output: 8, cached_input: 0.5}
type Price struct {
	// Input is the price of prompt tokens. Default: 0 (free, or unknown).
	Input float64 `yaml:"input"`
	// Output is the price of completion tokens. Default: 0.
	Output float64 `yaml:"output"`
	// CachedInput is the price of prompt tokens read from the provider's
	// prompt cache. Default: the input price.
	CachedInput float64 `yaml:"cached_input"`
}

// Breaker configures a circuit breaker; see breaker.Config for the full
// semantics. Every trip rule is off when zero; with no rule set the breaker
// trips after 5 consecutive failures. Rates are fractions in (0, 1]. For
// example, to trip when half the calls of the last 30s failed, once there
// were 20:
//
//	breaker: {window: 30s, min_calls: 20, failure_rate: 0.5, open: 10s}
type Breaker struct {
	// Window is a time-based sliding window, e.g. 10s. Default: none.
	Window time.Duration `yaml:"window"`
	// Buckets is how many buckets the time window has. Default: 10.
	Buckets int `yaml:"buckets"`
	// WindowCalls makes the window count-based: the last N calls. Not with
	// Window. Default: none.
	WindowCalls int `yaml:"window_calls"`
	// MinCalls is how many calls the window needs before rates count.
	// Default: 1.
	MinCalls int `yaml:"min_calls"`
	// FailureThreshold trips on this many failures in the window.
	FailureThreshold int `yaml:"failure_threshold"`
	// FailureRate trips when failures/calls in the window reach it.
	FailureRate float64 `yaml:"failure_rate"`
	// Consecutive trips after this many failures in a row. 0: off; but
	// with no rule set at all, the breaker trips after 5.
	Consecutive int `yaml:"consecutive"`
	// SlowCall makes a call that takes longer than this slow (one of
	// exactly this long is not). Default: none.
	SlowCall time.Duration `yaml:"slow_call"`
	// SlowCallRate trips when slow calls/calls in the window reach it;
	// needs SlowCall.
	SlowCallRate float64 `yaml:"slow_call_rate"`
	// Open is how long the breaker stays open before probing. Default,
	// also for 0: 5s (the gateway's default; breaker.Config alone would
	// take 30s).
	Open time.Duration `yaml:"open"`
	// OpenBackoff multiplies the open period on each failed probe round;
	// 1 keeps it fixed. Default, also for 0: 1.5.
	OpenBackoff float64 `yaml:"open_backoff"`
	// MaxOpen caps the grown open period, and the open period a provider's
	// Retry-After may ask for. Default, also for 0: 8s, or Open when that
	// is longer (the period then stays fixed). With the defaults, 5s
	// growing by 1.5 to 8s, a target that recovers gets traffic back
	// within about 8s.
	MaxOpen time.Duration `yaml:"max_open"`
	// OpenJitter spreads open periods by ± this fraction, in [0, 1).
	// Default: 0.
	OpenJitter float64 `yaml:"open_jitter"`
	// Probes is how many calls a half-open breaker admits.
	// Default: ProbeSuccesses, or 1.
	Probes int `yaml:"probes"`
	// ProbeSuccesses is how many probe successes close it. Default: Probes.
	ProbeSuccesses int `yaml:"probe_successes"`
	// HalfOpenMaxWait reopens a half-open breaker when a probe has not
	// answered this long after it was sent, whether or not other probe
	// slots are free. Default: 60s.
	HalfOpenMaxWait time.Duration `yaml:"half_open_max_wait"`
	// BackgroundProbe: while the breaker is open, the gateway sends the
	// target a cheap request (max_tokens 1) when the open period ends, off
	// the client path, so that recovery is noticed even when no client
	// request comes. Default: false (the next client request is the probe).
	BackgroundProbe bool `yaml:"background_probe"`
}

// Retry configures retries on the same target; see retry.Policy. Failing
// over to the next target is not a retry and is not bounded by it. For
// example:
//
//	retry: {attempts: 2, base: 200ms, max: 2s, same_target_wait: 1s}
type Retry struct {
	// Attempts is the most calls to one target, the first included; 1: no
	// retry. Default: 3.
	Attempts int `yaml:"attempts"`
	// Base is the backoff ceiling after the first failure. Default: 100ms.
	Base time.Duration `yaml:"base"`
	// Max caps the backoff. Default: 10s.
	Max time.Duration `yaml:"max"`
	// Multiplier grows the backoff after each failure; at least 1.
	// Default: 2.
	Multiplier float64 `yaml:"multiplier"`
	// MaxWait is the longest Retry-After honoured on the same target; a
	// longer one fails over at once. Default: 30s.
	MaxWait time.Duration `yaml:"max_wait"`
	// Budget caps retries at this fraction of recent requests, in (0, 1].
	// Default: 0.2.
	Budget float64 `yaml:"budget"`
	// BudgetMinPerSecond lets this many retries per second through
	// whatever the traffic. Default: 10.
	BudgetMinPerSecond float64 `yaml:"budget_min_per_second"`
	// SameTargetWait: a transient failure (one 5xx, a reset, or a 429 whose
	// wait is at most this) on a target whose breaker is still closed is
	// retried once on the same target before the walk fails over. 0: fail
	// over at once (latency over keeping the model). Default: 2s.
	SameTargetWait time.Duration `yaml:"same_target_wait"`
}
