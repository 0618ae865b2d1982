// Package batch runs a file of requests through the gateway in-process: the
// engine behind fusebox batch and the OpenAI Batch API (internal/batchapi).
//
// Input is the OpenAI Batch API line format, one JSON object per line:
//
//	{"custom_id": "q1", "method": "POST", "url": "/v1/chat/completions", "body": {…}}
//
// for /v1/chat/completions, /v1/embeddings and /v1/messages. Each line is
// served by an http.Handler — the gateway's own, so every line gets its
// ladders, breakers, failover, limits, retries, budgets and cost — called
// with an in-memory request and response: no socket, no HTTP client. Each
// request carries an Idempotency-Key derived from the batch id and the
// custom_id, so a line sent again after a crash is not billed twice by an
// upstream that honours keys.
//
// Output is the OpenAI batch output line format ({"id", "custom_id",
// "response": {"status_code", "request_id", "body"}, "error"}) with a
// "fusebox" member naming the target that served the line, its cost and
// attempts. Lines that fail for good go to the dead-letter file in the same
// shape, with the verdict, the last error, the attempt count and the
// original request, so that the file can be run again.
//
// A journal beside the output records every finished line (an 8-byte hash
// of its key) in groups, each closed by a commit record holding the lengths
// of the output and dead-letter files; a group is written after those
// files are synced, and the journal synced after it, at least once a
// second and at the end. The journal is the source of truth: on resume the
// output files are cut back to the lengths of the last commit, so a line
// written but not journaled before a crash is run again and appears once.
//
// Throttles (429, queue_full) lower the batch's concurrency (AIMD, with
// limit.Adaptive) and the line is retried when the answer says; they never
// dead-letter a line. Outages (5xx, no target available) are retried with
// backoff until the line's deadline. Client errors are final.
package batch
