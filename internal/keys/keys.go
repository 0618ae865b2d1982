// Package keys keeps the gateway's client keys minted at runtime: each is
// a random token shown once, stored as its SHA-256 (never retrievable),
// with the settings of a configuration's clients: entry (models, limits,
// budget, weight). A Store persists its keys in a file (state: memory) or
// in Redis, where every replica of a fleet sees a key minted or revoked on
// another within a second.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"
)

// Record is a minted key as stored: everything but the token itself.
type Record struct {
	// ID names the key in the admin API, e.g. key_3f2a9c0d1b4e5f60.
	ID string `json:"id"`
	// Name names the client in logs, metrics and budgets; unique among
	// the minted keys.
	Name string `json:"name"`
	// Hash is the hex SHA-256 of the token.
	Hash string `json:"hash"`
	// Hint is the token's first and last characters, for people to tell
	// keys apart.
	Hint    string    `json:"hint"`
	Models  []string  `json:"models,omitempty"`
	Limits  Limits    `json:"limits"`
	Budget  Budget    `json:"budget"`
	Weight  int       `json:"weight"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Rev counts the record's changes, so that two replicas changing a
	// key at once cannot lose one's change silently.
	Rev int `json:"rev"`
}

// Limits cap a client's own traffic. 0: no limit.
type Limits struct {
	RPM int `json:"rpm"`
	TPM int `json:"tpm"`
}

// Budget caps a client's spend in USD per UTC day and month. 0: none.
type Budget struct {
	Daily   float64 `json:"daily"`
	Monthly float64 `json:"monthly"`
}

// The errors of a Store's changes.
var (
	ErrNotFound  = errors.New("keys: no such key")
	ErrNameTaken = errors.New("keys: a minted key already has this name")
	// ErrConflict: the key changed meanwhile (another replica); read it
	// again and retry.
	ErrConflict = errors.New("keys: the key changed meanwhile")
)

// tokenPrefix starts every minted token, so that leaked tokens are easy
// to recognise (secret scanners) and to tell from provider keys.
const tokenPrefix = "fbx_"

// newToken returns a new token: the prefix and 32 random bytes (256 bits).
func newToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand's contract since Go 1.24)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// newID returns a new key id.
func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return "key_" + hex.EncodeToString(b[:])
}

// Sum is the SHA-256 of a token, the form a Store looks keys up by. A
// token is 256 random bits, so a plain hash is as hard to reverse as the
// token is to guess; no slow hash is needed.
func Sum(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// hint shows a token's prefix and last four characters.
func hint(token string) string {
	if len(token) < len(tokenPrefix)+8 {
		return tokenPrefix + "…"
	}
	return token[:len(tokenPrefix)+4] + "…" + token[len(token)-4:]
}

// backend is where a Store's records live.
type backend interface {
	// load reads every record, and whether a key was ever minted.
	load(ctx context.Context) (recs []Record, sealed bool, err error)
	// create stores a new record: ErrNameTaken if its name is in use.
	create(ctx context.Context, r Record) error
	// replace stores r over the record of its id whose Rev is r.Rev-1:
	// ErrNotFound if it is gone, ErrConflict if it changed.
	replace(ctx context.Context, r Record) error
	// remove deletes the record id: ErrNotFound if it is gone.
	remove(ctx context.Context, id string) error
}
