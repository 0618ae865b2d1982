package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// Options configure a Jobs. Aliases and Providers are required; every
// other zero value is a documented default.
type Options struct {
	// Aliases are the job aliases of the configuration (config.Config.Jobs).
	Aliases []config.JobAlias
	// Providers are the configuration's providers, by name: the targets'
	// base URLs, keys, headers and verdict overrides.
	Providers map[string]config.Provider
	// Dir is the data directory where jobs are recorded, one file each, so
	// that a job submitted before a restart is still found after it (its
	// id, owner, target and upstream id). "": in memory only.
	Dir string
	// Clock times the watchdogs, the breakers, the cap's cooldown and the
	// background polls. nil: the system clock.
	Clock clock.Clock
	// Logger receives what goes wrong off a client's request (a record
	// that cannot be written, a background poll that fails). nil: none.
	Logger *slog.Logger
	// Transport sends the requests to the providers. nil: a transport of
	// its own, with http.DefaultTransport's settings.
	Transport http.RoundTripper
	// Identify authenticates a request and names its client; when it
	// reports false it has written the refusal (a 401) itself. nil: every
	// request is the client "".
	Identify func(w http.ResponseWriter, r *http.Request) (client string, ok bool)
	// Allowed reports whether the client may use the alias (a client's
	// models list); a submit it refuses gets a 403 model_not_allowed.
	// nil: every client may use every alias.
	Allowed func(client, alias string) bool
	// Reserve admits a submit that may cost up to usd against the
	// client's budget; release settles it with what it cost. ok false
	// refuses the submit with a 429. nil: no budgets.
	Reserve func(client string, usd float64) (release func(actual float64), ok bool)
	// Charge counts a cost whose reservation was lost (a job submitted
	// before a restart that completes after it). nil: Reserve, then its
	// release at once; nothing when Reserve is nil.
	Charge func(client string, usd float64)
	// Observe, if set, is told of every submit's outcome and every cost,
	// for metrics. It must not block.
	Observe func(Event)
	// MaxBody bounds a submit's body. 0: 4 MiB.
	MaxBody int64
	// Shared, if set, shares the records with the other replicas of a
	// fleet, so that any replica answers for any job. nil: this
	// replica's own.
	Shared Shared
	// Leases, if set with Shared, make the jobs survive their replica:
	// each is owned under a lease, and adopted by another replica when its
	// owner stops (adopt.go). nil: a job is its submitting replica's, and
	// waits for it.
	Leases Leases
}

// Event is what Options.Observe is told.
type Event struct {
	// Kind is "submit" (a submit's attempt on a target), "job" (a job
	// that ended) or "cost" (a job priced).
	Kind   string
	Client string
	Alias  string
	// Target is provider/model.
	Target string
	// Verdict is the attempt's or the job's verdict.
	Verdict aierr.Kind
	// USD is the cost, for Kind "cost".
	USD float64
}

// DefaultMaxBody is Options.MaxBody's default.
const DefaultMaxBody = 4 << 20

// Jobs routes job APIs: it serves OpenAI's /v1/videos routes and
// /v1/images/generations over the job aliases' targets, and keeps the
// record of every job. It is safe for concurrent use; Close stops its
// background poller.
type Jobs struct {
	opts    Options
	clk     clock.Clock
	log     *slog.Logger
	client  *http.Client
	aliases map[string]*alias
	targets map[string]*target // by provider/model
	store   *store
	maxBody int64

	// mu guards flights and reservations.
	mu sync.Mutex
	// flights are the submits running, by client and Idempotency-Key:
	// a duplicate waits for the first.
	flights map[string]chan struct{}
	// reservations settle the budgets of the jobs in flight, by job id.
	reservations map[string]func(actual float64)
	// mine are the jobs this process took up under their lease (claimed
	// or adopted), by id: their slots are held here.
	mine map[string]bool

	// ctx bounds the work done off a client's request (background polls,
	// resubmits); Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the poller has stopped
}

// New builds the aliases' targets and reads the jobs recorded in Dir. It
// starts a background poller; Close stops it.
func New(o Options) (*Jobs, error) {
	j := &Jobs{opts: o, clk: clock.Or(o.Clock), log: o.Logger, aliases: map[string]*alias{},
		targets: map[string]*target{}, maxBody: o.MaxBody, flights: map[string]chan struct{}{},
		reservations: map[string]func(float64){}, mine: map[string]bool{}, done: make(chan struct{})}
	if o.Shared == nil {
		j.opts.Leases = nil // a lease fences the shared records: none to fence
	}
	j.ctx, j.cancel = context.WithCancel(context.Background())
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	if j.maxBody <= 0 {
		j.maxBody = DefaultMaxBody
	}
	rt := o.Transport
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	j.client = &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, a := range o.Aliases {
		if _, dup := j.aliases[a.Name]; dup {
			return nil, fmt.Errorf("jobs: alias %q twice", a.Name)
		}
		al, err := j.newAlias(a)
		if err != nil {
			return nil, err
		}
		j.aliases[a.Name] = al
	}
	st, err := openStore(o.Dir)
	if st == nil {
		return nil, err
	}
	st.shared = o.Shared
	if err != nil {
		j.log.Error("jobs: reading the job records", "err", err) // the others are read
	}
	j.store = st
	j.resume()
	go j.pollLoop()
	return j, nil
}

// Close stops the background poller and resubmits, waits for the poller,
// and closes the idle connections of its own transport. Records are
// written as they change, so nothing is lost. Close is idempotent; the
// handlers must not be called after it.
func (j *Jobs) Close() error {
	j.cancel()
	<-j.done
	if j.opts.Transport == nil {
		j.client.CloseIdleConnections()
	}
	return nil
}

// Register adds the routes to mux: POST /v1/videos, GET /v1/videos,
// GET and DELETE /v1/videos/{id}, GET /v1/videos/{id}/content and
// POST /v1/images/generations.
func (j *Jobs) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/videos", j.handleSubmit)
	mux.HandleFunc("GET /v1/videos", j.handleList)
	mux.HandleFunc("GET /v1/videos/{id}", j.handleGet)
	mux.HandleFunc("DELETE /v1/videos/{id}", j.handleDelete)
	mux.HandleFunc("GET /v1/videos/{id}/content", j.handleContent)
	mux.HandleFunc("POST /v1/images/generations", j.handleImages)
}

// identify runs Options.Identify.
func (j *Jobs) identify(w http.ResponseWriter, r *http.Request) (string, bool) {
	if j.opts.Identify == nil {
		return "", true
	}
	return j.opts.Identify(w, r)
}

// observe tells Options.Observe of e.
func (j *Jobs) observe(e Event) {
	if j.opts.Observe != nil {
		j.opts.Observe(e)
	}
}

// pollEvery is the background poller's period: the shortest of the
// aliases' poll intervals.
func (j *Jobs) pollEvery() time.Duration {
	d := config.DefaultJobPollInterval
	for _, a := range j.aliases {
		if a.cfg.PollInterval > 0 && a.cfg.PollInterval < d {
			d = a.cfg.PollInterval
		}
	}
	return d
}
