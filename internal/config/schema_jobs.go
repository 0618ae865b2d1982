package config

import "time"

// JobAPI is the API a job alias serves.
type JobAPI string

// The job APIs.
const (
	// JobVideos is OpenAI's video API: POST /v1/videos submits a job, which
	// clients poll (GET /v1/videos/{id}) and download
	// (GET /v1/videos/{id}/content).
	JobVideos JobAPI = "videos"
	// JobImages is OpenAI's image generation: POST /v1/images/generations,
	// answered when the images are made.
	JobImages JobAPI = "images"
)

// jobAPIs are the known job APIs, in the order messages list them.
var jobAPIs = []JobAPI{JobVideos, JobImages}

// JobAlias is an alias of a long-running generation API (video, image): a
// name clients put in "model", and the ladder of targets a submit walks.
// Each target has a submit breaker (outage verdicts only), a resubmit
// breaker (fed by jobs that failed after they were accepted) and a cap on
// its jobs in flight, lowered on queue_full and raised as jobs finish.
// docs/JOBS.md has the rules. For example:
//
//	jobs:
//	  - name: video
//	    targets:
//	      - {provider: openai, model: sora-2, price: {per_second: 0.1}}
//	      - {provider: azure, model: sora-2, lookup_path: "/video_keys/{key}"}
//	    max_in_flight: 8
type JobAlias struct {
	// Name is what clients put in "model". Required, unique among the
	// models and the jobs.
	Name string `yaml:"name"`
	// API is the API the alias serves: videos or images. Default: videos.
	API JobAPI `yaml:"api"`
	// Targets are the upstream models behind the alias, best first. At
	// least one; each names a provider of type openai.
	Targets []JobTarget `yaml:"targets"`
	// Breaker is each target's submit breaker, fed only by the outcomes
	// of submits: an outage (5xx, a network error, a timeout) fails, a
	// refusal (queue_full, capacity, throttle) is ignored. Unset fields
	// come from defaults.breaker.
	Breaker Breaker `yaml:"breaker"`
	// ResubmitBreaker is each target's resubmit breaker, fed by the jobs
	// that were accepted and then failed with an outage category
	// (runtime_unavailable): while it is open, failed jobs are not
	// resubmitted to the target. Its fields have the breaker block's
	// built-in defaults; with no rule set it opens after 5 consecutive
	// failed jobs.
	ResubmitBreaker Breaker `yaml:"resubmit_breaker"`
	// Resubmits is how many times a job that failed with an outage
	// category is submitted again (to the same target under a new key, or
	// the next target), keeping its id, before its failure is reported.
	// Default: 1.
	Resubmits int `yaml:"resubmits"`
	// MaxInFlight is the most jobs in flight (queued or in progress) on
	// one target, and the ceiling the cap grows back to. Default: 16.
	MaxInFlight int `yaml:"max_in_flight"`
	// MinInFlight is the floor a queue_full lowers the cap to. Default: 1.
	MinInFlight int `yaml:"min_in_flight"`
	// PollInterval is how often the gateway polls the jobs in flight that
	// no client has polled for that long, so that their slots, cost and
	// breakers are settled even when clients stop polling. Default: 10s.
	PollInterval time.Duration `yaml:"poll_interval"`
	// Retention is how long a finished job stays known to the gateway
	// (its id, owner and last state). Default: 168h.
	Retention time.Duration `yaml:"retention"`
	// Timeouts bound the calls to the targets.
	Timeouts JobTimeouts `yaml:"timeouts"`
}

// JobTimeouts bound the calls a job alias makes. For example:
//
//	timeouts: {submit: 30s, poll: 10s, idle: 30s}
type JobTimeouts struct {
	// Submit bounds a submit, from when it is sent to the answer's
	// headers. A submit cut by it may have been accepted: it is looked up
	// by its key (lookup_path) or sent again under the same key, never to
	// another target. For the images API it bounds the whole generation.
	// Default: 60s.
	Submit time.Duration `yaml:"submit"`
	// Poll bounds a poll, a lookup or a delete. Default: 10s.
	Poll time.Duration `yaml:"poll"`
	// Idle bounds the silence of a content download between two reads.
	// Default: 30s.
	Idle time.Duration `yaml:"idle"`
}

// JobTarget is one upstream model behind a job alias, with the paths of
// its job API under the provider's base_url. For example:
//
//	targets:
//	  - {provider: openai, model: sora-2, price: {per_second: 0.1}, submit_path: /videos}
type JobTarget struct {
	// Provider is the name of a configured provider of type openai; its
	// base_url, keys and headers are used. Required.
	Provider string `yaml:"provider"`
	// Model is the provider's model name: printable ASCII, at most 256
	// bytes (it is sent in the X-Fusebox-Target header). Required.
	Model string `yaml:"model"`
	// SubmitPath is where jobs are submitted (POST). Default: /videos, or
	// /images/generations for the images API.
	SubmitPath string `yaml:"submit_path"`
	// PollPath is where a job is read (GET) and deleted (DELETE); {id} is
	// the provider's job id. Default: /videos/{id}.
	PollPath string `yaml:"poll_path"`
	// ContentPath is where a completed job's content is downloaded
	// (GET); {id} is the provider's job id. Default: /videos/{id}/content.
	ContentPath string `yaml:"content_path"`
	// LookupPath, for a provider that can find a job by the
	// Idempotency-Key it was submitted with, is where (GET); {key} is the
	// key. A submit whose answer was lost after it was sent is looked up
	// there first. Default: none.
	LookupPath string `yaml:"lookup_path"`
	// Keys, when set, are the API keys this target uses instead of the
	// provider's. A job is polled and downloaded with the key that
	// submitted it. Default: the provider's keys.
	Keys []Secret `yaml:"keys"`
	// Price is what the target's jobs cost, priced when they complete.
	Price JobPrice `yaml:"price"`
}

// JobPrice is what a job costs, in US dollars, priced when it completes:
// per second of video (the job's seconds), per job and per image add up.
// For example:
//
//	price: {per_second: 0.1, per_job: 0.02}
type JobPrice struct {
	// PerSecond is the price of a second of video. Default: 0.
	PerSecond float64 `yaml:"per_second"`
	// PerJob is the price of a completed job. Default: 0.
	PerJob float64 `yaml:"per_job"`
	// PerImage is the price of an image generated. Default: 0.
	PerImage float64 `yaml:"per_image"`
}

// The job aliases' defaults.
const (
	DefaultJobResubmits    = 1
	DefaultJobMaxInFlight  = 16
	DefaultJobMinInFlight  = 1
	DefaultJobPollInterval = 10 * time.Second
	DefaultJobRetention    = 168 * time.Hour
	DefaultJobSubmit       = 60 * time.Second
	DefaultJobPoll         = 10 * time.Second
	DefaultJobIdle         = 30 * time.Second
)
