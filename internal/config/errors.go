package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Error is one thing wrong with a configuration, at a line of its file.
type Error struct {
	// File is the configuration's name, as given to Parse or Load.
	File string
	// Line is the 1-based line of the offending value; 0 when unknown.
	Line int
	// Field is the path of the field, e.g. models[0].targets[1].provider;
	// empty for errors about the file as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error formats e as "file:line: field: msg", leaving out what is unknown.
func (e Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
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
	errs  Errors
}

// at records an error at a line.
func (r *report) at(line int, field, msg string) {
	r.errs = append(r.errs, Error{File: r.file, Line: line, Field: field, Msg: msg})
}

// field records an error about field, at the line where it (or its nearest
// enclosing field) was set.
// A field that already has an error gets no second one: a value that did not
// decode is left zero, and "must be set" would only repeat the first error.
func (r *report) field(field, msg string) {
	if r.failed(field) {
		return
	}
	r.at(r.lines.of(field), field, msg)
}

// failed reports whether field already has an error, such as a value that
// did not decode.
func (r *report) failed(field string) bool {
	for _, e := range r.errs {
		if e.Field == field {
			return true
		}
	}
	return false
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
