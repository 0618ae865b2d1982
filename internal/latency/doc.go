// Package latency keeps a recent-latency distribution for one upstream
// target, for decisions on the request path: a hedge delay at the target's
// recent p95, an adaptive timeout at max(floor, 3 × p99) bounded by a
// ceiling.
//
// A Window is a time-decaying histogram: it sees the durations observed in
// the last Span (2 minutes by default), cut into Slots sub-windows (6 by
// default) so old samples leave a slot at a time. A sample stays in the
// window for at least Span−Span/Slots and less than Span.
//
// # Buckets and error
//
// Buckets are log-linear (HDR style): every power of two from 1ms up is
// split into 8 linear sub-buckets, up to just over 10 minutes. Durations
// below 1ms share the first bucket, [0, 1ms); durations of 655.36s or more
// land in the top bucket, [589.824s, 655.36s). A quantile is reported as
// the midpoint of the bucket holding the observed duration of that rank
// (nearest rank), so for durations from 1ms to 655.36s it is within 1/16
// (6.25%) of the exact value either way and never underestimates by more
// than half a bucket width. Below 1ms it reads 500µs.
//
// # Cost
//
// Observe reads the clock once and does a few atomic operations, with no
// lock and no allocation. Quantile and Count read every bucket of every
// slot (about a thousand atomic loads) and allocate nothing. A Window is
// under 4 KiB with the default six slots (about 630 bytes a slot).
//
// The package depends only on the standard library and package clock.
package latency
