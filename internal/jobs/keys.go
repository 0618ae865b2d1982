package jobs

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// newID returns a new job id: "video_" and 32 random hex digits, so that
// ids cannot be guessed (ownership is checked all the same).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return "video_" + hex.EncodeToString(b[:])
}

// upstreamKey derives the Idempotency-Key a job's submit carries to a
// target: the same for every resend of one attempt, so that a provider
// that received it already answers the job it made; a new one for each
// generation, which a refusal the provider would replay (queue_full,
// provider_capacity_exceeded) moves on, and a resubmit after a failed
// job. The key names neither the client nor its own key.
func upstreamKey(id, target string, gen int) string {
	sum := sha256.Sum256([]byte(id + "\x00" + target + "\x00" + strconv.Itoa(gen)))
	return "fbj_" + hex.EncodeToString(sum[:20])
}
