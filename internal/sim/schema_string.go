package sim

// formats are sample strings of the formats the generator knows.
var formats = map[string]string{
	"date-time": "2025-01-01T12:00:00Z",
	"date":      "2025-01-01",
	"time":      "12:00:00Z",
	"email":     "lorem@example.com",
	"uri":       "https://example.com/lorem",
	"url":       "https://example.com/lorem",
	"uuid":      "", // drawn
	"ipv4":      "192.0.2.1",
	"hostname":  "lorem.example.com",
}

// str appends a string: a sample of its format, or one to three words,
// padded or cut to minLength and maxLength.
func (g *valueGen) str(b []byte, m map[string]any) []byte {
	var s string
	format, _ := m["format"].(string)
	sample, known := formats[format]
	switch {
	case format == "uuid":
		s = g.uuid()
	case known:
		s = sample
	default:
		s = string(g.words(nil, 1+g.rng.IntN(3)))
		s = s[1 : len(s)-1] // unquoted: lorem needs no escapes
	}
	lo, _ := g.count(m["minLength"])
	hi, bounded := g.count(m["maxLength"])
	if lo > maxStringLen || (bounded && lo > hi) {
		g.exact = false
		lo = min(lo, maxStringLen)
	}
	for len(s) < lo {
		s += spaced[g.rng.IntN(len(lorem))]
	}
	if bounded && len(s) > hi {
		s = s[:hi]
		if known {
			g.exact = false // a cut sample is no longer of its format
		}
	}
	return appendString(b, s)
}

// uuid draws a version 4 UUID.
func (g *valueGen) uuid() string {
	var u [16]byte
	for i := range u {
		u[i] = byte(g.rng.UintN(256))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// words appends a JSON string of n lorem words.
func (g *valueGen) words(b []byte, n int) []byte {
	b = append(b, '"')
	for i := range n {
		w := lorem[g.rng.IntN(len(lorem))]
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, w...)
	}
	return append(b, '"')
}
