package aireq

// MaxTokensCap is the largest MaxTokens Scan reports: a larger number,
// 1e400 included, reads as MaxTokensCap.
const MaxTokensCap = 1<<31 - 1

// tokenCount reads a max_tokens value. A JSON number counts as its value
// rounded up (1e3 and 1000.0 are 1000, 1.5 is 2), at most MaxTokensCap; a
// number that is not positive counts as 0, and so does null. Anything else
// (a string, a boolean, an object) gives ok false.
//
// Integral numbers count because Python upstreams accept them (json reads
// 1e3 as 1000.0 and lax validators take that for 1000); other fractions
// are refused upstream, and rounding up keeps the estimate from being
// lower than what could run.
func tokenCount(v []byte) (n int, ok bool) {
	if string(v) == "null" {
		return 0, true
	}
	if len(v) > 0 && len(v) < 10 && v[0] != '0' { // the common case: a small integer
		for _, c := range v {
			if !isDigit(c) {
				goto general
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
general:
	var num number
	if !num.parse(v) {
		return 0, false
	}
	return num.ceil(), true
}

// number is a JSON number as its digits (the integer part d[0] and the
// fraction d[1]), sign and exponent.
type number struct {
	d   [2][]byte
	neg bool
	exp int // clamped to ±maxExp
}

const maxExp = 1 << 20

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parse reads v as JSON's number grammar.
func (x *number) parse(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		x.neg, i = true, 1
	}
	start := i
	if i < len(v) && v[i] == '0' {
		i++
	} else {
		for i < len(v) && isDigit(v[i]) {
			i++
		}
	}
	if i == start {
		return false
	}
	x.d[0] = v[start:i]
	if i < len(v) && v[i] == '.' {
		i++
		start = i
		for i < len(v) && isDigit(v[i]) {
			i++
		}
		if i == start {
			return false
		}
		x.d[1] = v[start:i]
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			eneg, i = v[i] == '-', i+1
		}
		start = i
		for ; i < len(v) && isDigit(v[i]); i++ {
			x.exp = min(x.exp*10+int(v[i]-'0'), maxExp)
		}
		if i == start {
			return false
		}
		if eneg {
			x.exp = -x.exp
		}
	}
	return i == len(v)
}

// digit returns the j-th digit of the integer part and fraction run
// together, 0 past the end.
func (x *number) digit(j int) byte {
	if j < len(x.d[0]) {
		return x.d[0][j] - '0'
	}
	if j -= len(x.d[0]); j < len(x.d[1]) {
		return x.d[1][j] - '0'
	}
	return 0
}

// ceil returns the number rounded up, 0 if it is not positive, at most
// MaxTokensCap.
func (x *number) ceil() int {
	total := len(x.d[0]) + len(x.d[1])
	first := 0 // the first nonzero digit
	for first < total && x.digit(first) == 0 {
		first++
	}
	if first == total || x.neg {
		return 0
	}
	point := len(x.d[0]) + x.exp // digits before the decimal point
	if point-first > 10 {
		return MaxTokensCap // at least 10^10
	}
	if point <= first {
		return 1 // between 0 and 1
	}
	n := 0
	for j := first; j < point; j++ {
		n = n*10 + int(x.digit(j))
	}
	for j := max(point, first); j < total; j++ {
		if x.digit(j) != 0 {
			n++ // a fraction: round up
			break
		}
	}
	return min(n, MaxTokensCap)
}
