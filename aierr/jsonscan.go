package aierr

import "bytes"

// A small, bounded JSON walker. encoding/json would do, but decoding an
// error body into structs costs microseconds and a dozen allocations; the
// classifier needs a handful of fields, so it walks the bytes once and hands
// each scalar, with its dotted path, to a visitor. Array indexes are not part
// of the path ("error.details.retryDelay" matches in any element).
//
// The walk is a loop over an explicit, fixed-size stack (no recursion, so
// nothing escapes to the heap and deep input cannot grow the goroutine
// stack). It never allocates, skips nothing past maxJSONDepth, stops
// at the first syntax error (keeping what it found: a truncated body still
// yields its leading fields) and takes time linear in the input.

const (
	maxJSONDepth = 16  // nesting levels walked; the walk stops at a deeper one
	maxPathLen   = 128 // bytes of dotted path kept; longer paths match nothing
)

type jsonWalker struct {
	data []byte
	pos  int
	path [maxPathLen]byte
	plen int  // bytes of path in use
	long bool // the path overflowed: visit nothing until it shrinks back
}

// frame is an open object or array, with the path to restore after each of
// its members.
type frame struct {
	obj  bool
	plen int
	long bool
}

// walkJSON walks data and reports each scalar to v.visit: its dotted key
// path, and its raw value (a string's contents without quotes and with
// escapes not decoded, or a number, true, false or null as written). It
// reports whether the document started like JSON (an object or array).
func walkJSON(data []byte, v *bodyFields) bool {
	w := jsonWalker{data: data}
	w.skipSpace()
	if w.pos >= len(data) || (data[w.pos] != '{' && data[w.pos] != '[') {
		return false
	}
	var stack [maxJSONDepth]frame
	depth := 0
	for {
		// At the start of a value.
		w.skipSpace()
		if w.pos >= len(data) {
			return true
		}
		switch c := data[w.pos]; c {
		case '{', '[':
			if depth == maxJSONDepth {
				return true
			}
			stack[depth] = frame{obj: c == '{', plen: w.plen, long: w.long}
			depth++
			w.pos++
			w.skipSpace()
			if w.pos < len(data) && (data[w.pos] == '}' || data[w.pos] == ']') {
				break // empty: handled below as the end of a container
			}
			if c == '{' && !w.key() {
				return true
			}
			continue
		case '"':
			s, ok := w.str()
			if !ok {
				return true
			}
			if !w.long {
				v.visit(w.path[:w.plen], s, true)
			}
		default:
			start := w.pos
			for w.pos < len(data) && !isDelim(data[w.pos]) {
				w.pos++
			}
			if w.pos == len(data) || w.pos == start {
				return true // a number cut by truncation is not trusted
			}
			if !w.long {
				v.visit(w.path[:w.plen], data[start:w.pos], false)
			}
		}
		// After a value: close containers until one has another member.
		for {
			if depth == 0 {
				return true
			}
			top := &stack[depth-1]
			w.plen, w.long = top.plen, top.long
			w.skipSpace()
			if w.pos >= len(data) {
				return true
			}
			c := data[w.pos]
			w.pos++
			if c == ',' {
				if top.obj && !w.key() {
					return true
				}
				break
			}
			if top.obj && c == '}' || !top.obj && c == ']' {
				depth--
				continue
			}
			return true // syntax error
		}
	}
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

func (w *jsonWalker) skipSpace() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// key reads an object key and its colon and pushes the key onto the path.
func (w *jsonWalker) key() bool {
	w.skipSpace()
	if w.pos >= len(w.data) || w.data[w.pos] != '"' {
		return false
	}
	k, ok := w.str()
	if !ok {
		return false
	}
	w.skipSpace()
	if w.pos >= len(w.data) || w.data[w.pos] != ':' {
		return false
	}
	w.pos++
	w.push(k)
	return true
}

// str reads a string at w.pos (on the opening quote) and returns its raw
// contents.
func (w *jsonWalker) str() ([]byte, bool) {
	w.pos++ // opening quote
	start := w.pos
	for w.pos < len(w.data) {
		i := bytes.IndexByte(w.data[w.pos:], '"')
		if i < 0 {
			break
		}
		w.pos += i
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		bs := 0
		for j := w.pos - 1; j >= start && w.data[j] == '\\'; j-- {
			bs++
		}
		w.pos++
		if bs%2 == 0 {
			return w.data[start : w.pos-1], true
		}
	}
	w.pos = len(w.data)
	return nil, false
}

// push appends ".key" (or "key" at the root) to the path.
func (w *jsonWalker) push(key []byte) {
	if w.long {
		return
	}
	n := len(key)
	if w.plen > 0 {
		n++
	}
	if w.plen+n > len(w.path) {
		w.long = true
		return
	}
	if w.plen > 0 {
		w.path[w.plen] = '.'
		w.plen++
	}
	w.plen += copy(w.path[w.plen:], key)
}
