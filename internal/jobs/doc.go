// Package jobs routes long-running generation APIs, video and image: it
// serves OpenAI's /v1/videos routes (submit, poll, download, delete,
// list) and /v1/images/generations over the job aliases of the
// configuration, and keeps a record of every job so that a client polls
// the gateway's id and reaches the target that owns the job, across
// restarts.
//
// The rules, which docs/JOBS.md explains:
//
//   - Each target has a submit breaker, fed only by submits (an outage
//     fails; queue_full, capacity and throttle refusals are ignored), a
//     resubmit breaker, fed by the jobs that ended (a job failed with an
//     outage category such as runtime_unavailable fails it), and a cap on
//     its jobs in flight (queued or in progress), a limit.Adaptive over a
//     limit.Bulkhead: halved on queue_full, grown back as jobs complete.
//   - A client's Idempotency-Key makes a submit safe to resend: the same
//     key and body answer the same job; duplicates that arrive together
//     wait for the first; the same key with another body is a 422.
//   - The upstream Idempotency-Key is derived from the job's id, the
//     target and a generation. A refusal the provider replays for a key
//     (queue_full, provider_capacity_exceeded) moves the generation on,
//     so the next try is a new submit; a lost answer (a reset or a
//     timeout after the request was sent) keeps it, so a resend is
//     answered with the job the first one made, never a second job.
//   - A submit fails over to the next target only when the provider
//     cannot have taken it: an outage answer (5xx), a connection that
//     failed before the request was written, a refusal. After a lost
//     answer the job is looked up by its key where the target allows
//     (lookup_path), else resent under the same key to the same target;
//     failing that it is reported unknown (502 job_state_unknown), never
//     sent elsewhere.
//   - Cost is priced when a job completes, per second of video (the
//     provider's seconds) and per job, or per image, against a
//     reservation of the estimate made at submit (Options.Reserve).
//
// A Jobs is safe for concurrent use. Its time (watchdogs, breakers, the
// cap's cooldown, background polls) runs on Options.Clock.
package jobs
