//go:build !race

package gateway

// raceDetector is true in a -race build, whose instrumentation allocates.
const raceDetector = false
