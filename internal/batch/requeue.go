package batch

import (
	"encoding/json"
	"io"
)

// Requeue reads a dead-letter file and returns its requests as batch
// input, one line each, streamed: the "request" of each dead letter, or,
// for a line that could not be read as a request, its text ("raw"), so a
// line fixed in the file runs and one still broken is dead-lettered again.
// Lines that are not dead letters pass through as they are, so a
// dead-letter file edited by hand, or a plain batch file, reads too.
func Requeue(dead io.Reader) io.Reader {
	return &requeue{lr: newLineReader(dead, 1<<30)}
}

type requeue struct {
	lr  *lineReader
	buf []byte // what is left of the current line to return
	err error
}

func (q *requeue) Read(p []byte) (int, error) {
	for len(q.buf) == 0 {
		if q.err != nil {
			return 0, q.err
		}
		text, _, err := q.lr.next()
		if err != nil {
			q.err = err
			continue
		}
		q.buf = append(requestOf(text), '\n')
	}
	n := copy(p, q.buf)
	q.buf = q.buf[n:]
	return n, nil
}

// requestOf returns the request a dead letter holds, or the line itself.
func requestOf(text []byte) []byte {
	var d struct {
		Request json.RawMessage `json:"request"`
		Raw     *string         `json:"raw"`
		Fusebox json.RawMessage `json:"fusebox"`
	}
	if json.Unmarshal(text, &d) != nil || d.Fusebox == nil {
		return append([]byte(nil), text...)
	}
	switch {
	case d.Request != nil:
		return d.Request
	case d.Raw != nil:
		return []byte(*d.Raw)
	}
	return append([]byte(nil), text...)
}
