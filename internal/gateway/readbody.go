package gateway

import (
	"io"
)

// firstRead is the most readFull holds before any of a body has arrived:
// a client's Content-Length is a claim, not memory to hand out.
const firstRead = 64 << 10

// readFull reads a request body whose Content-Length is n into a buffer
// that ends exactly n long: a held request (a stream may hold its request
// for minutes) carries no slack, as io.ReadAll's growth leaves up to half
// again. The buffer grows by doubling as bytes arrive, from firstRead, so
// what is allocated follows what was sent, not what was claimed. A body
// shorter than n is an error (io.ErrUnexpectedEOF).
func readFull(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, firstRead))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), n))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF && int64(len(buf)) < n {
			return buf, io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return buf, err
		}
	}
	return buf, nil
}

// readAnswer reads an upstream's answer whole, as io.ReadAll of
// io.LimitReader(r, limit) does, without the LimitReader's allocation and,
// when the answer declares its length (n ≥ 0, within the limit and
// firstRead), into one buffer of that length and a byte of room for the
// end: a JSON answer costs one allocation, not io.ReadAll's doublings.
func readAnswer(r io.Reader, n, limit int64) ([]byte, error) {
	size := int64(512)
	if n >= 0 && n < min(limit, firstRead) {
		size = n + 1
	}
	buf := make([]byte, 0, size)
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):min(int64(cap(buf)), limit)]
		m, err := r.Read(room)
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
