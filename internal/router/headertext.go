package router

// Skip reasons end up in response headers (X-Fusebox-Tried) and in logs
// and metric labels, and part of them comes from outside: an upstream's
// error code (aierr keeps only token characters, but the router does not
// rely on it), a request field a target cannot serve. Every reason is
// made printable ASCII where it is recorded, and bounded in length.

// maxReason bounds a skip reason, in bytes.
const maxReason = 160

// headerText returns s with every byte outside printable ASCII (0x20 to
// 0x7e) replaced by '?' (one per invalid or non-ASCII rune), cut to
// maxReason bytes. It returns s itself, without allocating, when s is
// already clean.
func headerText(s string) string {
	clean := len(s) <= maxReason
	for i := 0; clean && i < len(s); i++ {
		clean = printable(s[i])
	}
	if clean {
		return s
	}
	b := make([]byte, 0, min(len(s), maxReason))
	for _, r := range s {
		if len(b) == maxReason {
			break
		}
		if r < 0x80 && printable(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '?')
		}
	}
	return string(b)
}

func printable(c byte) bool { return c >= 0x20 && c <= 0x7e }

// addSkip records t as passed over or failed for reason, made header-safe,
// and returns the reason as recorded.
func (w *Walk) addSkip(t *Target, reason string) string {
	reason = headerText(reason)
	w.Skips = append(w.Skips, Skip{Target: headerText(t.Name), Reason: reason})
	return reason
}

// maxDirectName bounds a "provider/model" a client names directly, in
// bytes.
const maxDirectName = 256

// directName reports whether a client's "provider/model" may name a
// target: printable ASCII, at most maxDirectName bytes.
func directName(s string) bool {
	if len(s) > maxDirectName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !printable(s[i]) {
			return false
		}
	}
	return true
}
