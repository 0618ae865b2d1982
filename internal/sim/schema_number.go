package sim

import (
	"encoding/json"
	"math"
	"strconv"
)

// number appends a number (a whole one when integer) within the schema's
// minimum, maximum and their exclusive forms (draft 4's booleans too),
// rounded to its multipleOf; 0 to 100 when unbounded.
func (g *valueGen) number(b []byte, m map[string]any, integer bool) []byte {
	lo, loOpen := g.bound(m, "minimum", "exclusiveMinimum", math.Inf(-1), func(a, b float64) bool { return a > b })
	hi, hiOpen := g.bound(m, "maximum", "exclusiveMaximum", math.Inf(1), func(a, b float64) bool { return a < b })
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		lo, hi = 0, 100
	case math.IsInf(lo, -1):
		lo = hi - 100
	case math.IsInf(hi, 1):
		hi = lo + 100
	}
	var x float64
	if integer {
		x = g.integer(lo, loOpen, hi, hiOpen)
	} else {
		x = g.real(lo, loOpen, hi, hiOpen)
	}
	if step, ok := number(m["multipleOf"]); ok && step > 0 && !math.IsInf(step, 0) {
		if y := math.Round(x/step) * step; !math.IsInf(y, 0) && !math.IsNaN(y) {
			x = y
		}
		if !within(x, lo, loOpen, hi, hiOpen) || (integer && x != math.Trunc(x)) {
			g.exact = false
		}
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		g.exact = false
		x = 0
	}
	return appendNumber(b, x)
}

// bound reads a lower or upper bound: the inclusive keyword, and the
// exclusive one (a number, or draft 4's boolean making the inclusive one
// exclusive), keeping the tighter; tighter(a, b) reports whether a is.
func (g *valueGen) bound(m map[string]any, incl, excl string, none float64, tighter func(a, b float64) bool) (float64, bool) {
	v, open := none, false
	if f, ok := number(m[incl]); ok {
		v = f
	} else if m[incl] != nil {
		g.exact = false
	}
	switch e := m[excl].(type) {
	case bool:
		open = e && !math.IsInf(v, 0)
	case nil:
	default:
		if f, ok := number(e); ok && (math.IsInf(v, 0) || !tighter(v, f)) {
			v, open = f, true
		} else if !ok {
			g.exact = false
		}
	}
	return v, open
}

// integer draws a whole number in the range, or takes its low end when
// the range holds none (inexactly).
func (g *valueGen) integer(lo float64, loOpen bool, hi float64, hiOpen bool) float64 {
	a, z := math.Ceil(lo), math.Floor(hi)
	if loOpen && a == lo {
		a++
	}
	if hiOpen && z == hi {
		z--
	}
	if a > z {
		g.exact = false
		return a
	}
	span := z - a
	if span >= 1<<53 || math.IsInf(span, 0) {
		return a
	}
	return a + float64(g.rng.Int64N(int64(span)+1))
}

// real draws a number with two decimals in the range, or its middle when
// no such number fits.
func (g *valueGen) real(lo float64, loOpen bool, hi float64, hiOpen bool) float64 {
	if lo > hi || (lo == hi && (loOpen || hiOpen)) {
		g.exact = false
		return lo
	}
	x := math.Round((lo+g.rng.Float64()*(hi-lo))*100) / 100
	if math.IsInf(hi-lo, 0) || !within(x, lo, loOpen, hi, hiOpen) {
		x = lo/2 + hi/2
	}
	if !within(x, lo, loOpen, hi, hiOpen) {
		g.exact = false
	}
	return x
}

func within(x, lo float64, loOpen bool, hi float64, hiOpen bool) bool {
	return (x > lo || (!loOpen && x == lo)) && (x < hi || (!hiOpen && x == hi))
}

// number reads a JSON number decoded by decodeSchema (or a float64).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return n, true
	}
	return 0, false
}

// appendNumber appends x as JSON: whole numbers without a fraction.
func appendNumber(b []byte, x float64) []byte {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.AppendInt(b, int64(x), 10)
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// appendAny appends a value decoded by decodeSchema, as JSON.
func appendAny(b []byte, v any) []byte {
	q, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, q...)
}
