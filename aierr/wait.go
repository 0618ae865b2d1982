package aierr

import (
	"time"
)

// setWait fills v.Wait and v.WaitFrom from the first hint present, in order
// of precedence: millisecond headers, Retry-After, the body's RetryInfo, the
// rate-limit reset headers (Throttle and Capacity only: on other answers they
// describe the window, not a refusal) and finally the message text.
func setWait(v *Verdict, hh *headerHints, f *bodyFields, msg []byte) {
	if v.Kind == Success || v.Kind == Canceled {
		return
	}
	switch {
	case hh.hasMS:
		v.Wait, v.WaitFrom = hh.ms, WaitHeaderMS
		return
	case hh.hasAfter:
		v.Wait, v.WaitFrom = hh.after, WaitRetryAfter
		return
	}
	if f != nil && f.retryDelay != nil {
		if d, ok := parseDuration(string(f.retryDelay)); ok {
			v.Wait, v.WaitFrom = d, WaitBody
			return
		}
	}
	if v.Kind == Throttle || v.Kind == Capacity {
		if d, ok := hh.limits.resetWait(); ok {
			v.Wait, v.WaitFrom = d, WaitReset
			return
		}
	}
	if d, ok := MessageWait(msg); ok {
		v.Wait, v.WaitFrom = d, WaitMessage
	}
}

// retryPhrases introduce a wait in free text, lower case.
var retryPhrases = []string{"try again in", "try again after", "retry after", "retry in", "retry-after:"}

// MessageWait finds a wait in an error message: "try again in 20s",
// "Please try again in 1.5s", "try again in 6m0s", "retry after 30 seconds",
// "retry in 500ms". It reports false when there is none. Only the first
// maxMessageScan bytes are searched; the result is at most MaxWait.
func MessageWait(msg []byte) (time.Duration, bool) {
	if len(msg) > maxMessageScan {
		msg = msg[:maxMessageScan]
	}
	for _, p := range retryPhrases {
		i := indexFold(msg, p)
		if i < 0 {
			continue
		}
		if d, ok := parseWaitPhrase(msg[i+len(p):]); ok {
			return d, true
		}
	}
	return 0, false
}

// parseWaitPhrase parses what follows "try again in": a Go-like duration
// ("20s", "1m30.5s", "820ms") or a number and a unit word ("30 seconds").
func parseWaitPhrase(b []byte) (time.Duration, bool) {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	// The compact token: digits, dots and letters, as in "1m30.5s".
	n := 0
	for n < len(b) && n < 32 && (isDigit(b[n]) || b[n] == '.' || isLetter(b[n])) {
		n++
	}
	tok := b[:n]
	for len(tok) > 0 && tok[len(tok)-1] == '.' { // "in 20s."
		tok = tok[:len(tok)-1]
	}
	if len(tok) == 0 || !isDigit(tok[0]) {
		return 0, false
	}
	num := 0
	for num < len(tok) && (isDigit(tok[num]) || tok[num] == '.') {
		num++
	}
	unitWord := tok[num:]
	if len(unitWord) > 0 {
		var buf [32]byte
		if d, ok := parseDuration(string(lowerBytes(buf[:0], tok))); ok {
			return d, true
		}
	} else { // a number, then a unit word after a space
		rest := b[n:]
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		u := 0
		for u < len(rest) && u < 16 && isLetter(rest[u]) {
			u++
		}
		unitWord = rest[:u]
	}
	unit, ok := unitOf(unitWord)
	if !ok {
		return 0, false
	}
	return parseSeconds(string(tok[:num]), unit)
}

// unitOf maps a unit word to a duration; no word means seconds.
func unitOf(w []byte) (time.Duration, bool) {
	var buf [32]byte
	if len(w) > len(buf) {
		return 0, false
	}
	switch string(lowerBytes(buf[:0], w)) {
	case "", "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "ms", "msec", "millisecond", "milliseconds":
		return time.Millisecond, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	}
	return 0, false
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
