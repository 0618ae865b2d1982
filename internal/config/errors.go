package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Error is one thing wrong with a configuration, at a line of its file.
type Error struct {
	// File is the configuration's name, as given to Parse or Load.
	File string
	// Line is the 1-based line of the offending value; 0 when unknown.
	Line int
	// Column is the 1-based column, in characters, where the YAML parser
	// stopped; set for syntax errors only, 0 otherwise.
	Column int
	// Field is the path of the field, e.g. models[0].targets[1].provider;
	// empty for errors about the file as a whole. A name in the path that
	// looks like a secret is replaced by <not shown>.
	Field string
	// Msg says what is wrong. It never holds the value of a secret.
	Msg string
}

// Error formats e as "file:line:column: field: msg", leaving out what is
// unknown.
func (e Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(shownField(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// shownField is a field path as an error line shows it: a name with a
// control character in it (a map key such as "a\r\nb") is escaped, so an
// error is always one line.
func shownField(f string) string {
	if !strings.ContainsFunc(f, unicode.IsControl) {
		return f
	}
	q := strconv.QuoteToASCII(f)
	return q[1 : len(q)-1]
}

// Errors are all the things wrong with a configuration, in line order. Parse
// and Load return them as their error; errors.As retrieves the list.
type Errors []Error

// Error returns one error per line.
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// report collects errors while a configuration is decoded and checked.
type report struct {
	file  string
	lines lines
	// nulls holds the lines of fields written with no value ("models:"),
	// which are not set, for the line of a "required" error.
	nulls lines
	errs  Errors
	// erred holds the fields of errs.
	erred map[string]bool
	// broken holds the fields whose value did not decode, and the fields
	// that a misspelled field was meant to be: nothing more is said about
	// them or what they hold, which would only follow from the first error.
	broken map[string]bool
	// within holds the fields that enclose a broken one.
	within map[string]bool
}

// newReport returns an empty report for the file name.
func newReport(name string) *report {
	return &report{file: name, lines: lines{}, nulls: lines{},
		erred: map[string]bool{}, broken: map[string]bool{}, within: map[string]bool{}}
}

// at records an error at a line.
func (r *report) at(line int, field, msg string) {
	e := Error{File: r.file, Line: line, Field: hideNames(field), Msg: msg}
	r.errs = append(r.errs, e)
	r.erred[e.Field] = true
}

// broke records an error at a line about a value that did not decode, and
// marks field broken.
func (r *report) broke(line int, field, msg string) {
	r.at(line, field, msg)
	r.markBroken(field)
}

// markBroken marks field broken, and its enclosing fields as holding a
// broken one.
func (r *report) markBroken(field string) {
	r.broken[field] = true
	for f := field; ; {
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			return
		}
		f = f[:i]
		r.within[f] = true
	}
}

// field records an error about field, at the line where it (or its nearest
// enclosing field) was set.
// A field that already has an error gets no second one: a value that did not
// decode is left zero, and "must be set" would only repeat the first error.
// Neither does a field inside a value that did not decode, nor a field that
// a misspelled one was meant to be.
func (r *report) field(field, msg string) {
	if r.failed(field) {
		return
	}
	r.at(r.lineOf(field), field, msg)
}

// failed reports whether field already has an error, such as a value that
// did not decode, or is in or is a broken field.
func (r *report) failed(field string) bool {
	if r.erred[hideNames(field)] {
		return true
	}
	if r.broken[""] {
		return true // the file is not a mapping at all
	}
	for f := field; ; {
		if r.broken[f] {
			return true
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			return false
		}
		f = f[:i]
	}
}

// brokenWithin reports whether path or a field under it is broken: the
// rules that relate the fields of a block are then not checked, as they
// would be checked against values the file did not mean.
func (r *report) brokenWithin(path string) bool {
	return r.within[path] || r.failed(path)
}

// lineOf returns the line of field: where it was set, or written empty, or
// else where its nearest enclosing field was set.
func (r *report) lineOf(field string) int {
	if n, ok := r.lines[field]; ok {
		return n
	}
	if n, ok := r.nulls[field]; ok {
		return n
	}
	return r.lines.of(field)
}

// err returns the errors sorted by line (stable, so errors on one line keep
// the order they were found in), or nil when there are none.
func (r *report) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(r.errs, func(a, b Error) int { return cmp.Compare(a.Line, b.Line) })
	return r.errs
}

// lines maps a field path to the line where it was set. Only fields present
// in the file are in it.
type lines map[string]int

// has reports whether field was set in the file.
func (l lines) has(field string) bool {
	_, ok := l[field]
	return ok
}

// of returns the line of field or of its nearest enclosing field that was
// set; 0 when none was.
func (l lines) of(field string) int {
	for {
		if n, ok := l[field]; ok {
			return n
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return 0
		}
		field = field[:i]
	}
}
