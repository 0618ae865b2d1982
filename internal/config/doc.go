// Package config reads the gateway's YAML configuration: the schema (whose
// doc comments are the field reference), defaults, ${VAR} expansion, and
// validation that reports every problem as "file:line: field: what is wrong".
//
// # Loading
//
// Load reads a file and Parse takes bytes. Both return a *Config with every
// default filled in and every inherited block merged, or an Errors listing
// all the problems in line order, one per line when printed:
//
//	fusebox.yaml:12: models[0].targets[1].provider: unknown provider "opneai" (known: anthropic, openai)
//	fusebox.yaml:14: models[0].breaker.failure_rate: must be a fraction in (0, 1], got 1.5
//
// A Config that Parse returns is valid: its blocks convert to library
// settings that the library constructors accept (Breaker.Settings for
// breaker.New, Retry.Policy and Retry.BudgetConfig for package retry,
// Limits.Pacer and Limits.Bulkhead for package limit, Overrides.Settings
// for an aierr.Classifier). Parse builds each of them once to be sure.
//
// # A complete file
//
//	listen: 127.0.0.1:8080             # host:port; default 127.0.0.1:8080
//	state: redis://127.0.0.1:6379/0    # memory (default) | redis://[user:pass@]host:port/db | rediss://… (TLS)
//	fleet:                             # with state: redis://…, replicas share breakers, budgets, idempotency keys, rpm/tpm
//	  prefix: "fusebox:"               # of every key and channel
//	  timeout: 20ms                    # a Redis call on the request path (reservation, idempotency claim, probe permit)
//	  sync: 50ms                       # outcomes published, fleet state read; trips arrive at once
//	  addrs: []                        # more nodes: Cluster seeds or Sentinels
//	  cluster: false                   # the nodes are a Redis Cluster
//	  master_name: ""                  # Sentinel master; the URL's host and addrs are Sentinels
//	  lease: 10s                       # a replica's claim on running work (idempotency key, job, batch) after its last renewal
//	clients:                           # gateway API keys; none = open
//	  - name: web                      # required, unique
//	    key: "${FUSEBOX_KEY_WEB}"      # required, unique; Bearer or x-api-key
//	    weight: 2                      # fair-queueing share; default 1
//	    models: [smart, openai/gpt-4.1] # allowed aliases or provider/model; default all
//	    limits: {rpm: 60, tpm: 100000} # same block as a provider's limits
//	    budget: {daily: 20, monthly: 300} # USD at the targets' prices; over it, 429
//	    mcp: {servers: [search], tools: ["files__read_*"], rpm: 600} # /mcp rights (globs); default every server
//	admin_token: "${FUSEBOX_ADMIN_TOKEN:-}" # empty = admin API off
//	metrics_token: "${FUSEBOX_METRICS_TOKEN:-}" # empty = /metrics open
//	providers:
//	  openai:                          # the name targets use; no "/"
//	    type: openai                   # openai | anthropic | bedrock | vertex | gemini | azure; default: the name, if it is one of them
//	    base_url: https://api.openai.com/v1 # default per type
//	    responses: true                # serves the Responses API itself; default: true at OpenAI's own base_url
//	    unsupported: [prediction]      # request fields this host cannot serve: its targets are passed over for them
//	    keys: ["${OPENAI_API_KEY}"]    # rotated; none = no auth header
//	    headers: {OpenAI-Organization: org-123} # extra headers, values secret
//	    timeouts: {connect: 5s, ttfb: 60s, idle: 30s, total: 10m} # default: defaults.timeouts; no deadline here
//	    limits: {rpm: 500, tpm: 200000, max_in_flight: 64, max_wait: 2s} # per key; 0 = none
//	    auth_rest: 5m                  # a refused key (401, 403, quota) is out this long; default 5m, > 0
//	    auth_probe: 30s                # check a resting key with GET /models this often; default 0 = off; ≥ 1s
//	    price: {input: 2, output: 8}   # of provider/model requests; aliases price their targets
//	    overrides:                     # verdict kinds: outage throttle capacity auth quota client_error canceled success
//	      status: {429: outage}
//	      code: {queue_full: outage}
//	  gemini: {keys: ["${GEMINI_API_KEY}"]} # Google AI Studio's native API
//	  bedrock:                         # AWS Bedrock, SigV4; keys: Bedrock API keys instead
//	    region: us-east-1              # required; its geography picks a catalog model's inference profile
//	    aws: {profile: prod}           # a shared config profile; default: the AWS credential chain
//	  bedrock-eu:
//	    type: bedrock
//	    region: eu-west-1
//	    aws: {access_key_id: "${AWS_ACCESS_KEY_ID}", secret_access_key: "${AWS_SECRET_ACCESS_KEY}", session_token: "${AWS_SESSION_TOKEN}"} # static keys
//	  vertex:                          # Google Cloud Vertex AI: Gemini and Claude
//	    project: my-project            # required
//	    region: us-east5               # required; or global
//	    credentials_file: /etc/fusebox/sa.json # default: application default credentials
//	  azure:                           # Azure OpenAI
//	    base_url: https://my-resource.openai.azure.com # required
//	    api_version: 2024-10-21        # default 2024-10-21; v1 for the v1 API
//	    entra: {tenant_id: t, client_id: c, client_secret: "${AZURE_CLIENT_SECRET}", federated_token_file: "", authority_host: https://login.microsoftonline.com} # or keys: api-keys
//	server:                            # against slow or oversized clients; 0 = default
//	  max_body_bytes: 16777216         # larger bodies get a 413; default 16 MiB
//	  body_timeout: 60s                # reading a request body; slower gets a 408
//	  read_header_timeout: 10s         # restart to change
//	  write_timeout: 30s               # one write to a client; a client that stops reading is dropped
//	  usage_drain: 5s                  # a budgeted client's answer is read this long after it left, to price it; 0 = cancel at once
//	  idle_timeout: 120s               # keep-alive connections; restart to change
//	  forward_headers: [OpenAI-Organization] # client headers passed upstream besides OpenAI-Beta, anthropic-beta/-version
//	cors: {origins: ["https://app.example.com"], headers: [x-my-header], max_age: 10m} # browser apps; off without origins
//	otel: {enabled: true, endpoint: "http://collector:4318", service_name: fusebox, headers: {x-api-key: "${OTEL_KEY}"}, sample_ratio: 0.5, capture_content: false, timeout: 10s, protocol: http/protobuf}
//	responses: {dir: /var/lib/fusebox/responses, max_entries: 1000, max_bytes: 268435456, ttl: 720h} # stored Responses API answers; no dir: in memory
//	batch: {dir: /var/lib/fusebox/batches, max_file_bytes: 209715200, max_files: 500, max_client_bytes: 10737418240, max_in_progress: 10, concurrency: 32, line_deadline: 1h} # the Files and Batch APIs; off without a dir
//	keys: {file: /var/lib/fusebox/keys.json, poll: 500ms} # keys minted at runtime (POST /fusebox/keys); in Redis with a fleet
//	request_log: {path: /var/lib/fusebox/requests.db, max_rows: 1000000, max_bytes: 1073741824, max_age: 168h, queue: 8192, log_content: false} # GET /fusebox/requests; off without a path
//	cache: {max_entries: 10000, max_bytes: 67108864} # the response cache of every alias, together
//	idempotency: {ttl: 24h, max_records: 10000, max_bytes: 4194304, max_client_bytes: 67108864}
//	defaults:                          # inherited field by field by every alias
//	  breaker: {consecutive: 5, open: 5s, open_backoff: 1.5, max_open: 8s} # built-in open values shown
//	  retry: {attempts: 3, base: 100ms, max: 10s, same_target_wait: 2s}
//	  timeouts: {connect: 5s, ttfb: 60s, idle: 30s, total: 10m, deadline: 0} # built-in values shown
//	models:
//	  - name: smart                    # what clients put in "model"; required, unique
//	    strategy: fallback             # fallback (default) | weighted | least-latency | cheapest-healthy
//	    failover_on: [context_length, content_filter] # client errors that may go to the next target
//	    hedge: {after: 800ms, max: 1, budget: 0.1} # or after: p95; also ask the next target when slow; off unless set
//	    continue_on_failure: false     # continue a broken stream on the next target; default false
//	    cache: {ttl: 10m, stale_for: 1h, scope: client, store: redis} # exact-match answers; store redis needs state redis://…
//	    degraded: {status: 503, message: "busy, try again", content: ""} # when nothing can answer
//	    targets:                       # at least one, best first
//	      - provider: openai           # a key of providers
//	        model: gpt-4.1             # the provider's model name
//	        weight: 1                  # for weighted; default 1
//	        price: {input: 2, output: 8, cached_input: 0.5} # USD per million tokens; cached_input defaults to input
//	        keys: ["${OPENAI_KEY_2}"]  # instead of the provider's keys; default: the provider's
//	      - {provider: openai, model: gpt-4.1-mini} # hedge and continue_on_failure need a next target
//	      - {provider: bedrock, model: claude-sonnet-4-5, model_id: "us.anthropic.claude-sonnet-4-5-20250929-v1:0"} # model_id: sent instead of the catalog's id
//	      - {provider: azure, model: gpt-4.1, deployment: prod-gpt-41} # azure: the deployment's name
//	    breaker:                       # see Breaker; every rule off when 0
//	      window: 10s                  # a time window
//	      window_calls: 0              # or a count window, the last N calls, instead
//	      buckets: 10
//	      min_calls: 20                # before rates count
//	      failure_threshold: 10        # failures in the window
//	      failure_rate: 0.5            # fraction in (0, 1]
//	      consecutive: 5               # failures in a row
//	      slow_call: 30s               # a call this slow is slow
//	      slow_call_rate: 0.8          # fraction in (0, 1]
//	      open: 5s                     # open period; default 5s
//	      open_backoff: 2              # grow the open period on failed probes; default 1.5
//	      max_open: 1m                 # default 8s, or open when longer
//	      open_jitter: 0.1             # fraction in [0, 1)
//	      probes: 2                    # half-open calls admitted
//	      probe_successes: 2           # to close
//	      half_open_max_wait: 60s
//	      background_probe: true       # probe with max_tokens 1 when the open period ends; default false
//	    retry:                         # on the same target; see Retry
//	      attempts: 2                  # calls in all; 1 = no retry; default 3
//	      base: 200ms                  # default 100ms
//	      max: 5s                      # default 10s
//	      multiplier: 2                # default 2
//	      max_wait: 30s                # longest Retry-After honoured; default 30s
//	      budget: 0.2                  # retries per request, (0, 1]; default 0.2
//	      budget_min_per_second: 10    # default 10
//	      same_target_wait: 2s         # retry one transient failure on the same target; 0 = fail over at once
//	    timeouts:                      # over the provider's, per field
//	      ttfb: 2s                     # per attempt, to the first content; or auto: max(1s, 3 × p99), at most the inherited ttfb
//	      idle: 10s                    # between chunks; or auto, as ttfb
//	      total: 120s                  # one attempt
//	      deadline: 30s                # the whole request, failovers included; default none
//	      suspect_after: 1s            # every stream silent this long: skip the target; default adaptive (4 × p99 gap, 250ms to idle/8); 0 = off
//	      min_rate: 5                  # content events a second a stream must keep after its first (2s slack); default 0 = no floor
//	      commit_after: 4              # hold a stream's first 4 content events: one that stalls before then fails over unseen; default 0
//	jobs_dir: /var/lib/fusebox/jobs    # job records, kept across restarts; default none: in memory
//	jobs:                              # long-running generation (docs/JOBS.md); names share the models' namespace
//	  - name: video                    # what clients put in "model"; required, unique
//	    api: videos                    # videos (default: POST /v1/videos, polled) | images (/v1/images/generations)
//	    max_in_flight: 16              # jobs queued or in progress per target, the cap's ceiling; default 16
//	    min_in_flight: 1               # the floor queue_full lowers the cap to; default 1
//	    resubmits: 1                   # a job failed with runtime_unavailable is submitted again; default 1
//	    poll_interval: 10s             # jobs no client polled this long are polled by the gateway
//	    retention: 168h                # a finished job stays known this long
//	    timeouts: {submit: 60s, poll: 10s, idle: 30s} # built-in values shown
//	    breaker: {consecutive: 3, open: 30s, max_open: 5m} # the submit breaker: outages only; inherits defaults.breaker
//	    resubmit_breaker: {consecutive: 3, open: 5m, max_open: 30m} # fed by jobs that failed after they were accepted
//	    targets:                       # at least one, best first; providers of type openai
//	      - provider: openai
//	        model: sora-2
//	        submit_path: /videos       # POST; default /videos (images: /images/generations)
//	        poll_path: /videos/{id}    # GET and DELETE; default /videos/{id}
//	        content_path: /videos/{id}/content # default /videos/{id}/content
//	        lookup_path: /video_keys/{key} # GET a job by its Idempotency-Key; default none
//	        keys: ["${OPENAI_VIDEO_KEY}"] # instead of the provider's keys
//	        price: {per_second: 0.1, per_job: 0, per_image: 0} # USD, priced when the job completes
//	mcp:                               # MCP servers federated at /mcp (docs/MCP.md); tools named server__tool
//	  max_body_bytes: 1048576          # one client message, arguments included; default 1 MiB
//	  session_idle: 30m                # a client session without requests is closed
//	  servers:
//	    - name: search                 # required, unique; prefixes its tools and prompts
//	      transport: http              # http (Streamable HTTP, default) | sse | stdio (default with command)
//	      replicas: [http://10.0.0.5:9000/mcp, http://10.0.0.6:9000/mcp] # or url:; first closed breaker wins
//	      headers: {Authorization: "Bearer ${SEARCH_TOKEN}"} # sent upstream, never shown
//	      breaker: {consecutive: 3, open: 5s} # per replica; inherits defaults.breaker
//	      breaker_per_tool: false      # also a breaker per tool of each replica
//	      timeouts: {connect: 10s, total: 30s, deadline: 0s} # a session's start, one attempt, the whole call
//	      attempts: 2                  # replicas a repeatable call may be sent to
//	      tools:
//	        create_item: {retry: "no", timeouts: {total: 60s}} # auto (the tool's hints) | yes | no
//	    - name: files
//	      url: ""
//	      command: [mcp-server-filesystem, /srv/data] # a stdio server, started and supervised
//	      env: {FILES_TOKEN: "${FILES_TOKEN}"} # its credentials, never shown
//
// Durations are Go durations (200ms, 5s, 1m30s); rates are fractions; counts
// and limits are whole numbers and never negative; switches are true or
// false (yes/no and on/off are accepted too).
//
// # Inheritance
//
// An alias's breaker, retry and timeouts blocks inherit from the defaults
// block field by field: a field the alias names wins, even when it is 0 (so
// "consecutive: 0" turns off a rule the defaults set); a field it leaves out,
// or leaves empty ("ttfb:"), comes from defaults. A target's effective
// timeouts, Target.Timeouts, take each field from the alias if the alias set
// it, else from the provider, which itself inherits defaults.timeouts.
// ttfb: auto and idle: auto are inherited the same way, and keep the
// inherited duration as their ceiling. suspect_after, unless a block of the
// chain sets it, is worked out last from the idle that applies. The hedge
// block and continue_on_failure belong to the alias and are not inherited.
//
// # Environment variables
//
// ${VAR} and ${VAR:-default} are expanded in values, never in field names,
// after the YAML is parsed, so line numbers always refer to the file as
// written. ${VAR:-default} gives default when VAR is unset or empty; ${VAR}
// with VAR unset is an error naming the line and the variable (an empty VAR
// is allowed, but an empty key is then reported). $$ is a literal $. A
// ${VAR} may stand unquoted inside a flow list or mapping, as in
// keys: [${OPENAI_API_KEY}]. The value is used as text, never parsed as YAML.
//
// YAML anchors, aliases and merge keys (<<: *base) work as usual; a mapping
// key set twice is an error.
//
// # Errors
//
// Every problem found is reported, not only the first: unknown fields (with
// "did you mean" for a likely typo), values of the wrong type, bad
// durations, negative numbers, rates outside (0, 1], duplicate aliases,
// clients and mapping keys, unknown providers and provider types, targets
// without a provider or model, aliases without targets, a file without
// providers or without aliases, unknown strategies, bad URLs, listen
// addresses and state URLs, and whatever the breaker, retry and limit
// constructors refuse. A value that fails to decode gets one error, not a
// second one for being missing, nor any for what it holds; a misspelled
// field gets one error, naming the field it was likely meant to be, and
// none that only follows from that one being unset (modle: in a target
// is not also "target has no model").
//
// A YAML syntax error is reported at its line and column, as
// file:line:column. The YAML parser stops at the first one, so a file that
// does not parse gets that one error; its values are checked once it
// parses.
//
// No error shows a secret: a value meant for a key, a token or a header
// shows as "a secret", or as the ${VAR} it was written as; a name or value
// that looks like a key pasted in the wrong place is not shown either.
//
// Google's Gemini has no provider type of its own yet: a provider of type
// openai with base_url https://generativelanguage.googleapis.com/v1beta/openai/
// reaches it through Gemini's OpenAI-compatible endpoint.
//
// # Secrets
//
// Keys, tokens and header values are of type Secret, which prints and
// marshals as "***"; Config.Redacted and Config.String hide them too (and a
// Redis password in state). Secret.Value returns the secret for the one
// place that sends it.
//
// # Later fields
//
// Every block is a mapping decoded into a struct, so a new setting is a new
// documented field with a default; files written for this version stay
// valid.
package config
