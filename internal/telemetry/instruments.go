package telemetry

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// Bucket boundaries the GenAI conventions recommend: seconds for the
// durations, tokens for the usage histograms.
var (
	secondBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets  = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// Metric names. By default the GenAI client metrics as released
// (gen_ai.client.operation.*, gen_ai.client.token.usage); with
// OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental, the latest
// experimental ones (gen_ai.client.inference.*), whose token usage is a
// counter per kind of token plus a histogram per operation.
const (
	nameDuration     = "gen_ai.client.operation.duration"
	nameTokenUsage   = "gen_ai.client.token.usage"
	nameTTFC         = "gen_ai.client.operation.time_to_first_chunk"
	namePerChunk     = "gen_ai.client.operation.time_per_output_chunk"
	latestDuration   = "gen_ai.client.inference.duration"
	latestTTFC       = "gen_ai.client.inference.time_to_first_chunk"
	latestPerChunk   = "gen_ai.client.inference.time_per_output_chunk"
	latestInput      = "gen_ai.client.inference.usage.input_tokens"
	latestOutput     = "gen_ai.client.inference.usage.output_tokens"
	latestCacheRead  = "gen_ai.client.inference.usage.cache_read.input_tokens"
	latestCacheWrite = "gen_ai.client.inference.usage.cache_write.input_tokens"
	latestOpInput    = "gen_ai.client.inference.operation.input_tokens"
	latestOpOutput   = "gen_ai.client.inference.operation.output_tokens"
)

// instruments are the metric instruments of one naming; those of the
// other naming are nil.
type instruments struct {
	latest   bool
	duration metric.Float64Histogram
	ttfc     metric.Float64Histogram
	perChunk metric.Float64Histogram

	tokenUsage metric.Int64Histogram // released names

	usageIn, usageOut     metric.Int64Counter // latest names
	cacheRead, cacheWrite metric.Int64Counter
	opIn, opOut           metric.Int64Histogram
}

func newInstruments(m metric.Meter, latest bool) (instruments, error) {
	names := [3]string{nameDuration, nameTTFC, namePerChunk}
	if latest {
		names = [3]string{latestDuration, latestTTFC, latestPerChunk}
	}
	in := instruments{latest: latest}
	var errs [10]error
	in.duration, errs[0] = m.Float64Histogram(names[0], metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."), metric.WithExplicitBucketBoundaries(secondBuckets...))
	in.ttfc, errs[1] = m.Float64Histogram(names[1], metric.WithUnit("s"),
		metric.WithDescription("Time to receive the first chunk of a streamed answer."), metric.WithExplicitBucketBoundaries(secondBuckets...))
	in.perChunk, errs[2] = m.Float64Histogram(names[2], metric.WithUnit("s"),
		metric.WithDescription("Time per output chunk after the first one."), metric.WithExplicitBucketBoundaries(secondBuckets...))
	if !latest {
		in.tokenUsage, errs[3] = m.Int64Histogram(nameTokenUsage, metric.WithUnit("{token}"),
			metric.WithDescription("Number of input and output tokens used."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
		return in, errors.Join(errs[:]...)
	}
	tokens := func(name, desc string) (metric.Int64Counter, error) {
		return m.Int64Counter(name, metric.WithUnit("{token}"), metric.WithDescription(desc))
	}
	in.usageIn, errs[4] = tokens(latestInput, "Input tokens used, cached ones included.")
	in.usageOut, errs[5] = tokens(latestOutput, "Output tokens used.")
	in.cacheRead, errs[6] = tokens(latestCacheRead, "Input tokens served from the provider's cache.")
	in.cacheWrite, errs[7] = tokens(latestCacheWrite, "Input tokens written to the provider's cache.")
	in.opIn, errs[8] = m.Int64Histogram(latestOpInput, metric.WithUnit("{token}"),
		metric.WithDescription("Input tokens per inference operation."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	in.opOut, errs[9] = m.Int64Histogram(latestOpOutput, metric.WithUnit("{token}"),
		metric.WithDescription("Output tokens per inference operation."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	return in, errors.Join(errs[:]...)
}
