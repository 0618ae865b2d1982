package batch

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads an input line by line in bounded memory: a line longer
// than max is read to its end and dropped, reported as too long, never
// held whole.
type lineReader struct {
	r    *bufio.Reader
	max  int
	buf  []byte // the current line, reused
	n    int    // the current line's number
	size int    // the current line's length, including any dropped part
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending, whether it was too
// long (then its text is the first max bytes), or io.EOF at the end. Blank
// lines are skipped but counted.
func (l *lineReader) next() (text []byte, tooLong bool, err error) {
	for {
		l.n++
		l.buf, l.size = l.buf[:0], 0
		tooLong, err = l.fill()
		if err != nil && (err != io.EOF || l.size == 0) {
			return nil, false, err
		}
		text = bytes.TrimRight(l.buf, "\r")
		if len(bytes.TrimSpace(text)) == 0 && !tooLong {
			if err == io.EOF {
				return nil, false, io.EOF
			}
			continue
		}
		return text, tooLong, nil
	}
}

// fill reads one line into l.buf, up to max bytes of it.
func (l *lineReader) fill() (tooLong bool, err error) {
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.size += len(chunk)
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if room := l.max - len(l.buf); room > 0 {
			l.buf = append(l.buf, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return l.size > l.max, err
		}
		return l.size-1 > l.max, nil
	}
}
