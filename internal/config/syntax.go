package config

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Where a YAML syntax error is.
//
// yaml.v3 reports a syntax error as "yaml: line N: problem", and N is
// seldom the problem's line. Its parser knows where the problem is (the
// problem mark) but reports the mark of the construct it was parsing
// instead, when that is not on the first line (the context mark: the block
// mapping that began on line 2, for a bad indent on line 5), and it counts
// that mark's lines from 0 for its parser's errors, so N is then one line
// above even that; with both marks on the first line it gives no line at
// all, and it never gives a column (see parser.fail in yaml.v3's
// decode.go). The ${VAR} placeholders (see protect) keep every line where
// it is, so they are not the cause; they only move columns, which
// originalColumn maps back.
//
// So Parse finds the place itself: the shortest prefix of the file that
// fails with the same problem ends at it, since the parser reads the file
// in order. The line is found by bisection between yaml.v3's N, which is
// never below it, and the last line; the column by cutting that line
// shorter and shorter (see locate). For a list or mapping left open
// ("[1, 2" with no "]") or a quote not closed, the line is where it was
// opened.
//
// yaml.v3 stops at the first syntax error, so a file that does not parse
// gets that one error only; the values are checked, and every problem
// among them reported at once, when the file parses.

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError reports err, which the YAML parser returned for data (the file
// with its references protected), at the line and column of the problem.
func syntaxError(r *report, data []byte, refs []string, err error) {
	msg, reported := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	line, cut := locate(data, msg, reported)
	col := 0
	if line > 0 {
		col = originalColumn(lineAt(data, line), cut, refs)
	}
	text := "YAML syntax: " + restore(msg, refs)
	if hint := syntaxHint(msg, lineAt(data, line)); hint != "" {
		text += " (" + hint + ")"
	}
	r.errs = append(r.errs, Error{File: r.file, Line: line, Column: col, Msg: text})
}

// tabHint is the hint for a problem on a line indented with a tab, which
// yaml.v3 reports in several ways ("found character that cannot start any
// token", "found a tab character that violates indentation").
const tabHint = "YAML cannot indent with tabs: indent this line with spaces"

// syntaxHint says what most likely causes the problem msg on the line
// (its text, nil if unknown): a tab in the line's indentation, whatever
// the message, else syntaxHints.
func syntaxHint(msg string, line []byte) string {
	indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
	if bytes.IndexByte(indent, '\t') >= 0 {
		return tabHint
	}
	return syntaxHints[msg]
}

// syntaxHints say what usually causes yaml.v3's commonest problems.
var syntaxHints = map[string]string{
	"did not find expected key":                       "check this line's indentation: a field lines up with the other fields of its block",
	"mapping values are not allowed in this context":  `check the indentation, or quote a value that holds ": "`,
	"found a tab character that violates indentation": tabHint,
	"found character that cannot start any token":     "quote a value that starts with @ or `",
	"did not find expected ',' or ']'":                "a [list] left open, or items without a comma between them",
	"did not find expected ',' or '}'":                "a {mapping} left open, or entries without a comma between them",
	"did not find expected '-' indicator":             `a list item starts with "- ", lined up with the other items`,
	"found unexpected end of stream":                  "a quote left open",
}

// locate returns the 1-based line of the problem msg in data, and where in
// that line the problem is: the length of the shortest prefix of the line
// from which on every longer prefix fails with msg too (0 when only the
// line's end makes it fail). A shorter prefix may fail with msg as well,
// for a construct left open at the cut ("[k1" has no "]"), but not all
// those that follow it do ("[k1," lacks an item). reported is yaml.v3's
// line for the problem, a lower bound. It returns reported and 0 if no
// prefix fails with msg.
func locate(data []byte, msg string, reported int) (line, cut int) {
	fails := func(n int) bool { return problem(data[:n]) == msg }
	if !fails(len(data)) {
		return reported, 0
	}
	p := prefixes{data: data, starts: lineStarts(data), fails: fails}
	line = p.firstLine(reported)
	return line, p.cut(line)
}

// prefixes are the prefixes of a file that fails to parse.
type prefixes struct {
	data   []byte
	starts []int            // the offset of each line
	fails  func(n int) bool // whether data[:n] fails with the problem
}

// end returns the offset after line k, 1-based.
func (p prefixes) end(k int) int {
	if k < len(p.starts) {
		return p.starts[k]
	}
	return len(p.data)
}

// firstLine returns the first line, from reported on, whose end fails:
// by bisection, after trying the line after reported and reported itself,
// where it most often is.
func (p prefixes) firstLine(reported int) int {
	lo, hi := min(max(reported, 1), len(p.starts)), len(p.starts)
	for _, k := range []int{lo + 1, lo} {
		if k <= hi && p.fails(p.end(k)) && (k == 1 || !p.fails(p.end(k-1))) {
			return k
		}
	}
	for lo < hi { // it fails at hi
		mid := (lo + hi) / 2
		if p.fails(p.end(mid)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// cut returns where, in line k, the run of failing cuts that ends the line
// starts (see locate): found by doubling steps back from the line's end to
// a cut that does not fail, then by bisection.
func (p prefixes) cut(k int) int {
	start, stop := p.starts[k-1], p.end(k)
	for stop > start && (p.data[stop-1] == '\n' || p.data[stop-1] == '\r') {
		stop--
	}
	if !p.fails(stop) {
		return 0 // only the line's end makes it fail
	}
	ok, bad := -1, stop // ok does not fail (once found), bad does
	for step := 1; ok < 0; step *= 2 {
		switch n := max(stop-step, start); {
		case n == start:
			ok = start
		case p.fails(n):
			bad = n
		default:
			ok = n
		}
	}
	for ok+1 < bad {
		mid := (ok + bad) / 2
		if p.fails(mid) {
			bad = mid
		} else {
			ok = mid
		}
	}
	return bad - start
}

// problem returns the problem yaml.v3 finds in data, without its "yaml:"
// and line; "" when data parses.
func problem(data []byte) string {
	_, _, err := parseDocuments(data)
	if err == nil {
		return ""
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// lineStarts returns the offset where each line of data starts.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineAt returns line n of data, 1-based, without its newline.
func lineAt(data []byte, n int) []byte {
	starts := lineStarts(data)
	if n < 1 || n > len(starts) {
		return nil
	}
	l := data[starts[n-1]:]
	if i := bytes.IndexByte(l, '\n'); i >= 0 {
		l = l[:i]
	}
	return l
}

// originalColumn returns the 1-based column, in characters of the file as
// written, of the byte at cut-1 of the protected line pl (the end of the
// line when cut is 0). A byte of a placeholder is at its reference's start.
func originalColumn(pl []byte, cut int, refs []string) int {
	if cut <= 0 || cut > len(pl) {
		cut = len(pl) + 1
	}
	var orig []byte // pl as written, up to the byte at cut-1
	for i := 0; i < len(pl) && i < cut; {
		n, size := placeholderAt(pl[i:], len(refs))
		switch {
		case size > 0 && cut-1 < i+size:
			return utf8.RuneCount(orig) + 1
		case size > 0:
			orig = append(orig, refs[n]...)
			i += size
		default:
			orig = append(orig, pl[i])
			i++
		}
	}
	if cut > len(pl) {
		return utf8.RuneCount(orig) + 1
	}
	last := len(orig) - 1 // the byte at cut-1: count the characters before its own
	for last > 0 && !utf8.RuneStart(orig[last]) {
		last--
	}
	return utf8.RuneCount(orig[:max(last, 0)]) + 1
}

// placeholderAt returns the index of the placeholder b starts with, and its
// length; 0, 0 when b starts with none of the nrefs placeholders.
func placeholderAt(b []byte, nrefs int) (n, size int) {
	if !bytes.HasPrefix(b, []byte(placeholderPrefix)) {
		return 0, 0
	}
	rest := b[len(placeholderPrefix):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(string(rest[:j]))
	if j == 0 || err != nil || n >= nrefs || !bytes.HasPrefix(rest[j:], []byte(placeholderSuffix)) {
		return 0, 0
	}
	return n, len(placeholderPrefix) + j + len(placeholderSuffix)
}
