package sim

import (
	"maps"
	"sync/atomic"
)

// Outcome is how a call ended, as counted in Stats.
type Outcome string

// The outcomes of calls.
const (
	OutcomeOK          Outcome = "ok"           // a complete answer
	OutcomeError       Outcome = "error"        // an error_storm answer
	OutcomeThrottled   Outcome = "throttled"    // a throttle fault's 429
	OutcomeRateLimited Outcome = "rate_limited" // a 429 from Limits
	OutcomeQueueFull   Outcome = "queue_full"   // a queue_full fault, or a job refused for a full queue
	OutcomeCapacity    Outcome = "capacity"     // a capacity fault's refusal
	OutcomeAuth        Outcome = "auth"         // an auth fault's 401
	OutcomeHang        Outcome = "hang"         // hung until the client gave up
	OutcomeStall       Outcome = "stall"        // a stream stalled until the client gave up
	OutcomeReset       Outcome = "reset"        // the connection was reset
	OutcomeStreamError Outcome = "stream_error" // an error event inside a 200 stream
	OutcomeNoDone      Outcome = "no_done"      // a complete stream that ended without data: [DONE]
	OutcomeCanceled    Outcome = "canceled"     // the client gave up while waiting for a normal answer
	OutcomeBadRequest  Outcome = "bad_request"  // a 4xx for a bad body, path or model
	// OutcomeContentFilter is a content_filter fault's refusal or safety block.
	OutcomeContentFilter Outcome = "content_filter"
	// OutcomeGarbage is a stream cut mid-event by a garbage fault.
	OutcomeGarbage Outcome = "garbage"
	// OutcomeDrip is a stream a drip fault paced until the client gave up.
	OutcomeDrip Outcome = "drip"
	// OutcomeUnauthorized is a call refused for its credentials (a key,
	// signature or token the sim does not accept), before any fault.
	OutcomeUnauthorized Outcome = "unauthorized"
)

// outcomes lists every Outcome; counters are indexed by position in it.
var outcomes = [...]Outcome{
	OutcomeOK, OutcomeError, OutcomeThrottled, OutcomeRateLimited, OutcomeQueueFull, OutcomeAuth,
	OutcomeCapacity, OutcomeHang, OutcomeStall, OutcomeReset, OutcomeStreamError, OutcomeNoDone, OutcomeCanceled, OutcomeBadRequest,
	OutcomeContentFilter, OutcomeUnauthorized, OutcomeGarbage, OutcomeDrip,
}

// Stats counts the API calls a Server received (chat completions,
// messages, responses, embeddings, jobs, images and the clouds' paths;
// not /v1/models, count_tokens, countTokens, /sim/ or the credential
// services, whose issues Credentials counts).
type Stats struct {
	// Name is the Server's name.
	Name string `json:"name"`
	// Calls counts calls received. Those still running are in Calls but
	// not yet in Outcomes.
	Calls int64 `json:"calls"`
	// APIs counts the calls received by API: chat.completions, messages,
	// responses, embeddings, videos (job submits), images,
	// bedrock.converse (Converse and ConverseStream), bedrock.invoke
	// (InvokeModel and InvokeModelWithResponseStream),
	// gemini.generate_content (generateContent and streamGenerateContent
	// on the Gemini API), vertex.generate_content (the same on Vertex AI),
	// vertex.raw_predict (rawPredict and streamRawPredict),
	// azure.chat.completions, azure.embeddings and azure.responses, every
	// one present, zero or not; they add up to Calls.
	APIs map[string]int64 `json:"apis"`
	// Outcomes counts finished calls by how they ended; every Outcome is
	// present, zero or not.
	Outcomes map[Outcome]int64 `json:"outcomes"`
	// InputTokens counts the prompt tokens of every call received, answered
	// or not: what the calls sent to this provider carried.
	InputTokens int64 `json:"input_tokens"`
	// BilledInputTokens counts the prompt tokens of calls that got a 200
	// answer, complete or cut, as a provider would bill them.
	BilledInputTokens int64 `json:"billed_input_tokens"`
	// BilledOutputTokens counts the reply tokens sent in 200 answers.
	BilledOutputTokens int64 `json:"billed_output_tokens"`
	// JobsCreated counts the jobs the job API created: a submit replayed
	// for its Idempotency-Key creates none.
	JobsCreated int64 `json:"jobs_created"`
	// JobsCompleted counts the jobs seen completed, the billed ones.
	JobsCompleted int64 `json:"jobs_completed"`
	// BilledSeconds counts the seconds of video of the completed jobs.
	BilledSeconds int64 `json:"billed_seconds"`
	// Images counts the images generated in 200 answers.
	Images int64 `json:"images"`
	// ContentBytes counts the bytes of job content sent.
	ContentBytes int64 `json:"content_bytes"`
	// Credentials counts the credentials the sim's credential services
	// issued: OAuth2 access tokens (the token endpoint and the metadata
	// server) and AWS keys (STS and the container endpoint).
	Credentials int64 `json:"credentials"`
}

// Finished returns the number of calls that have ended: the sum of
// Outcomes.
func (s Stats) Finished() int64 {
	var n int64
	for _, v := range s.Outcomes {
		n += v
	}
	return n
}

// Sub returns s minus an earlier snapshot: what happened between them.
func (s Stats) Sub(earlier Stats) Stats {
	d := s
	d.Outcomes = maps.Clone(s.Outcomes)
	for k, v := range earlier.Outcomes {
		d.Outcomes[k] -= v
	}
	d.APIs = maps.Clone(s.APIs)
	for k, v := range earlier.APIs {
		d.APIs[k] -= v
	}
	d.Calls -= earlier.Calls
	d.InputTokens -= earlier.InputTokens
	d.BilledInputTokens -= earlier.BilledInputTokens
	d.BilledOutputTokens -= earlier.BilledOutputTokens
	d.JobsCreated -= earlier.JobsCreated
	d.JobsCompleted -= earlier.JobsCompleted
	d.BilledSeconds -= earlier.BilledSeconds
	d.Images -= earlier.Images
	d.ContentBytes -= earlier.ContentBytes
	d.Credentials -= earlier.Credentials
	return d
}

// api names an API, as counted in Stats.APIs.
type api int

const (
	apiChat api = iota
	apiMessages
	apiResponses
	apiEmbeddings
	apiVideos
	apiImages
	apiBedrockConverse
	apiBedrockInvoke
	apiGemini
	apiVertexGemini
	apiVertexClaude
	apiAzureChat
	apiAzureEmbeddings
	apiAzureResponses
)

// anthropicIDs reports whether a's answers are Messages answers, whose
// tool calls have toolu_ ids.
func (a api) anthropicIDs() bool {
	return a == apiMessages || a == apiBedrockInvoke || a == apiVertexClaude
}

// apiNames are the names of the APIs in Stats.APIs, by api.
var apiNames = [...]string{apiChat: "chat.completions", apiMessages: "messages", apiResponses: "responses", apiEmbeddings: "embeddings",
	apiVideos: "videos", apiImages: "images",
	apiBedrockConverse: "bedrock.converse", apiBedrockInvoke: "bedrock.invoke",
	apiGemini: "gemini.generate_content", apiVertexGemini: "vertex.generate_content", apiVertexClaude: "vertex.raw_predict",
	apiAzureChat: "azure.chat.completions", apiAzureEmbeddings: "azure.embeddings", apiAzureResponses: "azure.responses"}

// counters are a Server's live counts, updated without a lock.
type counters struct {
	calls     atomic.Int64
	apis      [len(apiNames)]atomic.Int64
	outcomes  [len(outcomes)]atomic.Int64
	input     atomic.Int64
	billedIn  atomic.Int64
	billedOut atomic.Int64
	jobs      atomic.Int64
	completed atomic.Int64
	seconds   atomic.Int64
	images    atomic.Int64
	content   atomic.Int64
	creds     atomic.Int64
}

// receive counts a call received by API a.
func (c *counters) receive(a api) {
	c.apis[a].Add(1)
	c.calls.Add(1)
}

func (c *counters) finish(o Outcome) {
	for i, x := range outcomes {
		if x == o {
			c.outcomes[i].Add(1)
			return
		}
	}
	panic("sim: unknown outcome " + string(o)) // a bug in this package
}

// bill counts a 200 answer's tokens.
func (c *counters) bill(in, out int) {
	c.billedIn.Add(int64(in))
	c.billedOut.Add(int64(out))
}

// Stats returns a snapshot of the Server's counts. Counters are read one by
// one, so a snapshot taken while calls run may be a call apart between
// fields; Outcomes never count more calls than Calls.
func (s *Server) Stats() Stats {
	st := Stats{Name: s.name, Outcomes: make(map[Outcome]int64, len(outcomes))}
	for i, o := range outcomes {
		st.Outcomes[o] = s.stats.outcomes[i].Load()
	}
	st.APIs = make(map[string]int64, len(apiNames))
	for i, name := range apiNames {
		st.APIs[name] = s.stats.apis[i].Load()
	}
	st.Calls = s.stats.calls.Load()
	st.InputTokens = s.stats.input.Load()
	st.BilledInputTokens = s.stats.billedIn.Load()
	st.BilledOutputTokens = s.stats.billedOut.Load()
	st.JobsCreated = s.stats.jobs.Load()
	st.JobsCompleted = s.stats.completed.Load()
	st.BilledSeconds = s.stats.seconds.Load()
	st.Images = s.stats.images.Load()
	st.ContentBytes = s.stats.content.Load()
	st.Credentials = s.stats.creds.Load()
	return st
}
