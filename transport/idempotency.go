package transport

import (
	"crypto/rand"
	"encoding/hex"
)

// newKey returns a random idempotency key: 128 bits as 32 hex digits.
func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
