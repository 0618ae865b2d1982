package outage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/jobs"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// Jobs is the scenario of `fusebox bench --scenario jobs`, run by RunJobs
// rather than Run: video jobs submitted to a provider that refuses some
// with provider_capacity_exceeded (replayed for their key), answers
// queue_full past a few jobs queued per account, and loses the answer of
// some submits after making the job (a reset).
const Jobs Scenario = "jobs"

// JobsOptions configure RunJobs. Every zero value is the default noted.
type JobsOptions struct {
	// Requests is how many jobs each client asks for. 0: 60.
	Requests int
	// Concurrency is how many it asks for at once. 0: 8.
	Concurrency int
	// Capacity is the share of submits the primary refuses with
	// provider_capacity_exceeded. 0: 0.2.
	Capacity float64
	// Lost is the share of submits whose job the primary makes and then
	// resets the connection. 0: 0.15.
	Lost float64
	// MaxQueued is how many unfinished jobs a provider takes per account
	// before queue_full. 0: 4.
	MaxQueued int
	// QueueTime and RunTime are how long a job queues and runs. 0: 200ms
	// and 300ms.
	QueueTime, RunTime time.Duration
	// Attempts bounds the naive clients' calls per request, the first
	// included. 0: 5.
	Attempts int
	// Seed seeds the providers.
	Seed uint64
}

func (o JobsOptions) withDefaults() JobsOptions {
	o.Requests = cmp.Or(o.Requests, 60)
	o.Concurrency = cmp.Or(o.Concurrency, 8)
	o.Capacity = cmp.Or(o.Capacity, 0.2)
	o.Lost = cmp.Or(o.Lost, 0.15)
	o.MaxQueued = cmp.Or(o.MaxQueued, 4)
	o.QueueTime = cmp.Or(o.QueueTime, 200*time.Millisecond)
	o.RunTime = cmp.Or(o.RunTime, 300*time.Millisecond)
	o.Attempts = cmp.Or(o.Attempts, 5)
	return o
}

// The clients of the jobs scenario.
const (
	// SameKey retries a refused or failed submit on the primary with the
	// same Idempotency-Key: safe after a lost answer, stuck after a
	// replayed refusal.
	SameKey Client = "naive (same key)"
	// NewKey retries with a new key every time: past replayed refusals,
	// but a lost answer makes a second job.
	NewKey Client = "naive (new key)"
	// FuseboxJobs submits through Fusebox's job routes, in front of the
	// primary and a secondary.
	FuseboxJobs Client = "fusebox"
)

// JobsRow is one client's figures.
type JobsRow struct {
	Client Client `json:"client"`
	// Requests is the jobs asked for; Completed those the client saw
	// completed; Failed those it gave up on.
	Requests  int `json:"requests"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// JobsCreated counts the jobs the providers made; PaidTwice the
	// requests that got more than one completed job (each billed).
	JobsCreated int64 `json:"jobs_created"`
	PaidTwice   int   `json:"paid_twice"`
	// Refusals counts the queue_full and capacity refusals the client saw.
	Refusals int `json:"refusals_seen"`
	// P50MS and P95MS are the times from a request's first submit to its
	// job seen completed.
	P50MS float64 `json:"p50_ms"`
	P95MS float64 `json:"p95_ms"`
}

// JobsResult is what RunJobs measured.
type JobsResult struct {
	Options JobsOptions `json:"options"`
	Rows    []JobsRow   `json:"rows"`
}

// RunJobs runs the jobs scenario: the three clients at once, each against
// its own simulated providers built alike.
func RunJobs(ctx context.Context, o JobsOptions) (*JobsResult, error) {
	o = o.withDefaults()
	res := &JobsResult{Options: o, Rows: make([]JobsRow, 3)}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, c := range []Client{SameKey, NewKey, FuseboxJobs} {
		wg.Go(func() { res.Rows[i], errs[i] = runJobsClient(ctx, c, o) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// jobsRig is one client's providers, and the gateway for Fusebox's.
type jobsRig struct {
	primary, secondary *sim.Server
	servers            []*httptest.Server
	jobs               *jobs.Jobs
	base               string // where the client submits, ending in /v1
	key                string
	http               *http.Client
}

func startJobsRig(c Client, o JobsOptions) (*jobsRig, error) {
	// No keep-alive for the naive clients: net/http resends a request
	// that carries an Idempotency-Key, under that key, when a reused
	// connection resets, which would hide what a new key does.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = c != FuseboxJobs
	r := &jobsRig{http: &http.Client{Timeout: 30 * time.Second, Transport: tr}, key: "bench"}
	mk := func(name string, faults []sim.Fault) (*sim.Server, string, error) {
		s, err := sim.New(sim.Config{Name: name, Seed: o.Seed, Faults: faults,
			Jobs: sim.Jobs{QueueTime: o.QueueTime, RunTime: o.RunTime, MaxQueued: o.MaxQueued, ContentBytes: 1024}})
		if err != nil {
			return nil, "", err
		}
		ts := httptest.NewServer(s)
		r.servers = append(r.servers, ts)
		return s, ts.URL + "/v1", nil
	}
	var err error
	var purl, surl string
	faults := []sim.Fault{{Kind: sim.Capacity, Fraction: o.Capacity}, {Kind: sim.AcceptReset, Fraction: o.Lost}}
	if r.primary, purl, err = mk("primary", faults); err != nil {
		return nil, err
	}
	r.base = purl
	if c != FuseboxJobs {
		return r, nil
	}
	if r.secondary, surl, err = mk("secondary", nil); err != nil {
		r.close()
		return nil, err
	}
	cfg, err := config.Parse("bench-jobs", []byte(jobsConfig(purl, surl)), func(string) (string, bool) { return "", false })
	if err != nil {
		r.close()
		return nil, fmt.Errorf("outage: jobs configuration: %w", err)
	}
	if r.jobs, err = jobs.New(jobs.Options{Aliases: cfg.Jobs, Providers: cfg.Providers}); err != nil {
		r.close()
		return nil, err
	}
	mux := http.NewServeMux()
	r.jobs.Register(mux)
	gw := httptest.NewServer(mux)
	r.servers = append(r.servers, gw)
	r.base = gw.URL + "/v1"
	return r, nil
}

// jobsConfig is Fusebox's configuration for the jobs scenario.
func jobsConfig(primary, secondary string) string {
	return `providers:
  primary: {type: openai, base_url: "` + primary + `", keys: [bench]}
  secondary: {type: openai, base_url: "` + secondary + `", keys: [bench]}
models:
  - name: chat
    targets: [{provider: primary, model: m}]
jobs:
  - name: video
    max_in_flight: 8
    poll_interval: 1s
    timeouts: {submit: 5s, poll: 5s}
    targets:
      - {provider: primary, model: sora, lookup_path: "/video_keys/{key}", price: {per_second: 0.1}}
      - {provider: secondary, model: sora, price: {per_second: 0.1}}
`
}

func (r *jobsRig) close() {
	for _, s := range r.servers {
		s.Close()
	}
	if r.jobs != nil {
		r.jobs.Close()
	}
	for _, s := range []*sim.Server{r.primary, r.secondary} {
		if s != nil {
			s.Close()
		}
	}
	r.http.CloseIdleConnections()
}

// runJobsClient runs one client's requests and counts what happened.
func runJobsClient(ctx context.Context, c Client, o JobsOptions) (JobsRow, error) {
	r, err := startJobsRig(c, o)
	if err != nil {
		return JobsRow{}, err
	}
	defer r.close()
	row := JobsRow{Client: c, Requests: o.Requests}
	var mu sync.Mutex
	var took []time.Duration
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	for i := range o.Requests {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			ok, refusals := r.request(ctx, c, o, i)
			mu.Lock()
			defer mu.Unlock()
			row.Refusals += refusals
			if !ok {
				row.Failed++
				return
			}
			row.Completed++
			took = append(took, time.Since(start))
		})
	}
	wg.Wait()
	row.JobsCreated, row.PaidTwice = r.primary.Stats().JobsCreated, paidTwice(r.primary)
	if r.secondary != nil {
		row.JobsCreated += r.secondary.Stats().JobsCreated
		row.PaidTwice = paidTwice(r.primary, r.secondary)
	}
	slices.Sort(took)
	row.P50MS, row.P95MS = quantileMS(took, 0.5), quantileMS(took, 0.95)
	return row, nil
}

// paidTwice counts the requests (by prompt) that got more than one job
// completed, over the providers.
func paidTwice(sims ...*sim.Server) int {
	done := map[string]int{}
	for _, s := range sims {
		for _, j := range s.Jobs() {
			if j.Status == sim.JobCompleted {
				done[j.Prompt]++
			}
		}
	}
	n := 0
	for _, v := range done {
		if v > 1 {
			n++
		}
	}
	return n
}

func quantileMS(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	return ms(d[min(len(d)-1, int(q*float64(len(d))))])
}

// request asks for job i the client's way and polls it to its end. It
// reports whether the job completed, and the refusals seen.
func (r *jobsRig) request(ctx context.Context, c Client, o JobsOptions, i int) (ok bool, refusals int) {
	body := `{"model":"` + r.model(c) + `","prompt":"bench job ` + strconv.Itoa(i) + `","seconds":"4"}`
	key := "req-" + strconv.Itoa(i)
	attempts := o.Attempts
	if c == FuseboxJobs {
		attempts = 1 + o.Attempts // Fusebox itself resends; the client retries refusals only
	}
	var wait time.Duration // the refusal's Retry-After, honoured as SDKs do
	for a := range attempts {
		if a > 0 {
			if !sleepCtx(ctx, max(time.Duration(a)*50*time.Millisecond, wait)) {
				return false, refusals
			}
		}
		if c == NewKey {
			key = "req-" + strconv.Itoa(i) + "-" + strconv.Itoa(a)
		}
		id, status, after, err := r.submit(ctx, body, key)
		wait = min(after, 5*time.Second)
		switch {
		case err == nil && id != "":
			return r.await(ctx, id), refusals
		case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
			refusals++
		}
	}
	return false, refusals
}

func (r *jobsRig) model(c Client) string {
	if c == FuseboxJobs {
		return "video"
	}
	return "sora"
}

// submit posts one submit and returns the job id, or the status of the
// refusal and its Retry-After.
func (r *jobsRig) submit(ctx context.Context, body, key string) (string, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/videos", bytes.NewReader([]byte(body)))
	if err != nil {
		return "", 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.key)
	req.Header.Set("Idempotency-Key", key)
	resp, err := r.http.Do(req)
	if err != nil {
		return "", 0, 0, err
	}
	defer resp.Body.Close()
	var v struct {
		ID string `json:"id"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &v) != nil {
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return "", resp.StatusCode, time.Duration(after) * time.Second, fmt.Errorf("status %d", resp.StatusCode)
	}
	return v.ID, resp.StatusCode, 0, nil
}

// await polls job id until it ends, and reports whether it completed.
func (r *jobsRig) await(ctx context.Context, id string) bool {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/videos/"+id, nil)
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+r.key)
		resp, err := r.http.Do(req)
		if err != nil {
			return false
		}
		var v struct {
			Status string `json:"status"`
		}
		json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v)
		resp.Body.Close()
		switch v.Status {
		case sim.JobCompleted:
			return true
		case sim.JobFailedNow, "":
			return false
		}
		if !sleepCtx(ctx, 25*time.Millisecond) {
			return false
		}
	}
}

// sleepCtx waits d, or less when ctx ends; it reports whether it waited.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
