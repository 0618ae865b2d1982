package sim

import (
	"cmp"
	"crypto/rsa"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Config describes a simulated provider. The zero Config is a valid,
// instant, fault-free provider with no rate limits.
type Config struct {
	// Name labels the provider in /sim/stats and error messages; "" is "sim".
	Name string
	// Seed seeds the random source behind reply text, latency draws and
	// fault draws: two Servers with the same Config, given the same
	// requests in the same order at the same (fake) times, give the same
	// answers.
	Seed uint64
	// Latency shapes how long calls take.
	Latency Latency
	// Output shapes the replies.
	Output Output
	// Limits sets the rate limits reported in headers and enforced with 429s.
	Limits Limits
	// Jobs shapes the job API (videos).
	Jobs Jobs
	// Faults are the scheduled faults; their From and To count from Start.
	Faults []Fault
	// Models are the model ids listed by GET /v1/models and accepted by the
	// API (any other is a 404 model_not_found). nil: DefaultModels are listed
	// and any model is accepted.
	Models []string
	// AWS sets the Bedrock paths' credentials and the AWS credential
	// services.
	AWS AWS
	// Google sets the Gemini and Vertex AI paths' credentials and the
	// Google credential services.
	Google Google
	// Azure sets the Azure OpenAI paths' credentials.
	Azure Azure
	// Clock is the time source for latency, schedules, limits, signatures
	// and credential lifetimes. nil: the system clock.
	Clock clock.Clock
	// Start is the instant fault schedules count from. Zero: when New is
	// called.
	Start time.Time
}

// Latency is the timing of a call. Every duration is at least 0.
type Latency struct {
	// Median is the median duration of a non-streamed call. 0: no wait.
	Median time.Duration
	// P99 is the 99th percentile: durations are log-normal with this median
	// and this p99, capped at 4×P99. 0 or ≤ Median: always Median.
	P99 time.Duration
	// TTFB is the median time before a stream sends its headers and first
	// chunk, drawn with the same spread as Median. 0: Median.
	TTFB time.Duration
	// TokensPerSecond is the rate at which a stream sends its tokens after
	// the first chunk. 0: as fast as the connection allows.
	TokensPerSecond float64
}

// Output shapes the replies. Reply text is lorem-ipsum words, one token
// each, drawn from the seed.
type Output struct {
	// Tokens is the length of a reply; a request's max_tokens (or
	// max_completion_tokens) below it cuts the reply, with finish_reason
	// "length". 0: 20.
	Tokens int
	// ChunkTokens is how many tokens each stream chunk carries. 0: 3.
	ChunkTokens int
	// Dimensions is the length of embedding vectors when the request does
	// not ask for one. 0: 16.
	Dimensions int
}

// Limits are the provider's rate limits per minute. Each is a bucket that
// holds a minute's worth and refills continuously, as OpenAI's do; a call
// takes one request and its prompt plus reply tokens.
type Limits struct {
	// RPM is requests per minute. 0: unlimited, and no request headers.
	RPM int
	// TPM is tokens per minute. 0: unlimited, and no token headers.
	TPM int
	// HeadersOnly reports the limits in x-ratelimit-* headers but never
	// refuses a call. false: a call over a limit gets a 429
	// rate_limit_exceeded with Retry-After.
	HeadersOnly bool
}

// DefaultModels are the models listed when Config.Models is nil.
var DefaultModels = []string{"sim-large", "sim-small", "sim-embed"}

// Server is a simulated provider: an http.Handler for the OpenAI and
// Anthropic APIs, the Bedrock, Gemini, Vertex AI and Azure OpenAI paths,
// the clouds' credential services and the control endpoints. It is safe
// for concurrent use.
type Server struct {
	name   string
	cfg    Config
	clk    clock.Clock
	start  time.Time
	models map[string]bool // nil: any model
	mux    *http.ServeMux
	stats  counters
	// done is closed by Close, to release hung and stalled calls.
	done      chan struct{}
	closeOnce sync.Once

	// mu guards rng, faults, limits and seq: every decision that draws a
	// random number or reads the limits is made under it, in request
	// order, so that a seed gives the same answers.
	mu     sync.Mutex
	rng    *rand.Rand
	faults []*entry // scheduled first, then live
	limits limiter
	seq    uint64 // calls decided so far, for ids

	// jobs are the job API's jobs and idempotency keys; see jobs.go.
	jobs jobTable

	// issued are the credentials the credential services issued, and
	// saKeys the service accounts' public keys; see creds.go.
	issued issued
	saKeys map[string]*rsa.PublicKey
}

// New returns a Server for c, or an error naming the first bad field.
func New(c Config) (*Server, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	s := &Server{name: c.Name, cfg: c, clk: clock.Or(c.Clock), start: c.Start, done: make(chan struct{})}
	if s.name == "" {
		s.name = "sim"
	}
	if s.start.IsZero() {
		s.start = s.clk.Now()
	}
	if c.Models != nil {
		s.models = make(map[string]bool, len(c.Models))
		for _, m := range c.Models {
			s.models[m] = true
		}
	}
	s.rng = rand.New(rand.NewPCG(c.Seed, c.Seed^0x5eed5eed5eed5eed))
	for _, f := range c.Faults {
		s.faults = append(s.faults, &entry{Fault: f})
	}
	s.limits = newLimiter(c.Limits, s.start)
	s.jobs = newJobTable()
	s.saKeys = c.cloudProblems(func(string, string) {})
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("POST /v1/messages", s.handleMessages)
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.handleCountTokens)
	s.mux.HandleFunc("POST /v1/responses", s.handleResponses)
	s.mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	s.mux.HandleFunc("POST /v1/videos", s.handleVideoSubmit)
	s.mux.HandleFunc("GET /v1/videos", s.handleVideoList)
	s.mux.HandleFunc("GET /v1/videos/{id}", s.handleVideoGet)
	s.mux.HandleFunc("DELETE /v1/videos/{id}", s.handleVideoDelete)
	s.mux.HandleFunc("GET /v1/videos/{id}/content", s.handleVideoContent)
	s.mux.HandleFunc("GET /v1/video_keys/{key}", s.handleVideoByKey)
	s.mux.HandleFunc("POST /v1/images/generations", s.handleImages)
	s.mux.HandleFunc("GET /sim/jobs", s.handleJobs)
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /v1/models/{model}", s.handleModel)
	s.mux.HandleFunc("GET /sim/faults", s.handleGetFaults)
	s.mux.HandleFunc("POST /sim/faults", s.handleSetFaults)
	s.mux.HandleFunc("DELETE /sim/faults", s.handleDeleteFaults)
	s.mux.HandleFunc("GET /sim/stats", s.handleStats)
	s.routeClouds()
	s.mux.HandleFunc("/", s.handleNotFound)
	return s, nil
}

// Handler returns the http.Handler that serves the APIs (see the package
// documentation for every path) and the control endpoints under /sim/.
func (s *Server) Handler() http.Handler { return s.mux }

// ServeHTTP serves a request, as Handler does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Name returns the Server's name.
func (s *Server) Name() string { return s.name }

// Elapsed returns the time passed on the Server's clock since Start: the
// time fault schedules are measured in.
func (s *Server) Elapsed() time.Duration { return s.clk.Now().Sub(s.start) }

// Close releases every call that is hanging or stalled (they end at once,
// sending nothing more) and makes later hangs and stalls end at once too,
// so that an http.Server or httptest.Server in front can shut down. The
// Server still answers other calls. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

// problem is one thing wrong with a Config: the field, named as in the
// scenario format (latency.median, faults[2].status), and what is wrong.
type problem struct{ field, msg string }

// problems lists what is wrong with c, in field order.
func (c *Config) problems() []problem {
	var ps []problem
	add := func(field, msg string) { ps = append(ps, problem{field, msg}) }
	nonNeg := func(field string, d time.Duration) {
		if d < 0 {
			add(field, "is "+d.String()+", want 0 or more")
		}
	}
	count := func(field string, n int) {
		if n < 0 {
			add(field, "is "+strconv.Itoa(n)+", want 0 or more")
		}
	}
	l := c.Latency
	nonNeg("latency.median", l.Median)
	nonNeg("latency.p99", l.P99)
	nonNeg("latency.ttfb", l.TTFB)
	if !(l.TokensPerSecond >= 0) || math.IsInf(l.TokensPerSecond, 0) {
		add("latency.tokens_per_second", "is "+strconv.FormatFloat(l.TokensPerSecond, 'g', -1, 64)+", want a finite number, 0 or more")
	}
	count("output.tokens", c.Output.Tokens)
	count("output.chunk_tokens", c.Output.ChunkTokens)
	count("output.dimensions", c.Output.Dimensions)
	count("limits.rpm", c.Limits.RPM)
	count("limits.tpm", c.Limits.TPM)
	nonNeg("jobs.queue_time", c.Jobs.QueueTime)
	nonNeg("jobs.run_time", c.Jobs.RunTime)
	count("jobs.max_queued", c.Jobs.MaxQueued)
	for i, m := range c.Models {
		if m == "" {
			add("models["+strconv.Itoa(i)+"]", "is empty, want a model id")
		}
	}
	c.cloudProblems(add)
	for i, f := range c.Faults {
		at := "faults[" + strconv.Itoa(i) + "]"
		for _, p := range f.problems() {
			add(join(at, p.field), p.msg)
		}
	}
	return ps
}

// validate returns the first problem of c as an error.
func (c *Config) validate() error {
	if ps := c.problems(); len(ps) > 0 {
		return fmt.Errorf("sim: %s: %s", ps[0].field, ps[0].msg)
	}
	return nil
}

// join appends a field name to a path.
func join(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}

func (o Output) tokens() int      { return cmp.Or(o.Tokens, 20) }
func (o Output) chunkTokens() int { return cmp.Or(o.ChunkTokens, 3) }
func (o Output) dimensions() int  { return cmp.Or(o.Dimensions, 16) }
