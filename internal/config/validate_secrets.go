package config

import (
	"math"
	"strconv"
)

// A gateway's tokens guard who may spend: fusebox validate refuses one a
// person could guess. The rule: at least minSecretLen characters, an
// estimated entropy (the Shannon entropy of its characters times its
// length) of at least minSecretBits, and not mostly a run (aaaa, 1234).
// Tokens from `openssl rand -hex 24` or a password manager pass easily.
const (
	minSecretLen  = 16
	minSecretBits = 48
)

// WeakSecrets reports each admin_token, metrics_token and client key too
// weak to guard a gateway, with its line and field, never its value.
// fusebox validate calls it; serve does not refuse such a file (tests and
// loopback demos), validate does.
func (c *Config) WeakSecrets() error {
	r := newReport(c.File)
	r.lines = c.lines
	check := func(field string, s Secret) {
		if msg := weakness(s.Value()); msg != "" {
			r.field(field, msg)
		}
	}
	check("admin_token", c.AdminToken)
	check("metrics_token", c.MetricsToken)
	for i, cl := range c.Clients {
		check("clients["+strconv.Itoa(i)+"].key", cl.Key)
	}
	return r.err()
}

// weakness says what is weak about secret s, or "" if it is strong
// enough (or empty: unset).
func weakness(s string) string {
	const hint = " (generate one: openssl rand -hex 24)"
	switch {
	case s == "":
		return ""
	case len(s) < minSecretLen:
		return "too short to guard the gateway: " + strconv.Itoa(len(s)) + " characters, want at least " +
			strconv.Itoa(minSecretLen) + hint
	case entropyBits(s) < minSecretBits || mostlyRun(s):
		return "too easy to guess: about " + strconv.Itoa(int(entropyBits(s))) + " bits of entropy, want at least " +
			strconv.Itoa(minSecretBits) + " and no long runs" + hint
	}
	return ""
}

// entropyBits estimates s's entropy: the Shannon entropy of its bytes'
// frequencies times its length.
func entropyBits(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	n, h := float64(len(s)), 0.0
	for _, f := range freq {
		if f > 0 {
			p := float64(f) / n
			h -= p * math.Log2(p)
		}
	}
	return h * n
}

// mostlyRun reports whether more than half of s's neighbouring bytes
// repeat or count up or down (aaaa, abcd, 4321).
func mostlyRun(s string) bool {
	run := 0
	for i := 1; i < len(s); i++ {
		if d := int(s[i]) - int(s[i-1]); d >= -1 && d <= 1 {
			run++
		}
	}
	return run*2 > len(s)-1
}
