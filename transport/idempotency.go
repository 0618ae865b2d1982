package transport

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// newKey returns a random idempotency key: 128 bits as 32 hex digits.
func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// bodyKey derives, from the walk's idempotency key, the key for the request
// with its model rewritten to model: a key never goes with two different
// bodies (a server that stores answers by key would replay the other
// body's answer, or refuse the mismatch), and the same key and model always
// give the same derived key, so a caller's resend is still recognised.
func bodyKey(key, model string) string {
	h := uint64(14695981039346656037) // FNV-1a, 64 bits
	for i := 0; i < len(model); i++ {
		h ^= uint64(model[i])
		h *= 1099511628211
	}
	return key + "-" + strconv.FormatUint(h, 16)
}
