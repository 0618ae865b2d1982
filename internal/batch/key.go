package batch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// lineKey names a line in the journal: an 8-byte hash of its custom_id, or
// of the line's text when it has no usable custom_id (a line that is not
// JSON, say), so that a resumed run skips it too. Two different keys
// collide with odds of about n²/2⁶⁵ for n lines (3·10⁻⁸ at a million).
type lineKey uint64

// idKey is the key of a line with custom_id id.
func idKey(id string) lineKey { return hashOf("id\x00", id) }

// rawKey is the key of a line that has no usable custom_id: its text and
// its line number (two identical broken lines are two lines).
func rawKey(line []byte, n int) lineKey {
	return hashOf("raw\x00"+strconv.Itoa(n)+"\x00", string(line))
}

// dupKey is the key of the n-th line when its custom_id repeats an earlier
// one's.
func dupKey(id string, n int) lineKey { return hashOf("dup\x00"+strconv.Itoa(n)+"\x00", id) }

func hashOf(prefix, s string) lineKey {
	h := sha256.New()
	h.Write([]byte(prefix))
	h.Write([]byte(s))
	var sum [sha256.Size]byte
	return lineKey(binary.LittleEndian.Uint64(h.Sum(sum[:0])))
}

// IdempotencyKey is the Idempotency-Key of the line with custom_id id in
// batch batchID: the same for every attempt and every resumed run, and
// different across batches. It is at most 48 bytes long.
func IdempotencyKey(batchID, id string) string {
	sum := sha256.Sum256([]byte(batchID + "\x00" + id))
	return "fbx-batch-" + hex.EncodeToString(sum[:19])
}

// keySet is a set of line keys, each with two flags: done (journaled as
// finished) and seen (read in this run's input). It is an open-addressing
// table of uint64 words, the key's top 62 bits and the flags in the low 2,
// kept at most 3/4 full: 8 bytes a slot, 11 to 21 bytes a line (16 MiB
// for a million lines), no pointers for the collector to scan.
type keySet struct {
	slots []uint64 // 0: empty
	n     int
}

const (
	keyDone  uint64 = 1 << iota // journaled as finished
	keySeen                     // read in this run's input
	keyFlags = keyDone | keySeen
)

// newKeySet returns a set sized for about n keys without growing.
func newKeySet(n int64) *keySet {
	size := int64(1024)
	for size*3 < n*4 && size < 1<<40 {
		size *= 2
	}
	return &keySet{slots: make([]uint64, size)}
}

// get returns k's flags (0 if absent).
func (s *keySet) get(k lineKey) uint64 {
	if s.n == 0 {
		return 0
	}
	mask := uint64(len(s.slots) - 1)
	for i := slotOf(k) & mask; ; i = (i + 1) & mask {
		switch w := s.slots[i]; {
		case w == 0:
			return 0
		case w&^keyFlags == uint64(k)&^keyFlags:
			return w & keyFlags
		}
	}
}

// add sets flags on k.
func (s *keySet) add(k lineKey, flags uint64) {
	if (s.n+1)*4 > len(s.slots)*3 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := slotOf(k) & mask; ; i = (i + 1) & mask {
		switch w := s.slots[i]; {
		case w == 0:
			s.slots[i] = uint64(k)&^keyFlags | flags
			s.n++
			return
		case w&^keyFlags == uint64(k)&^keyFlags:
			s.slots[i] = w | flags
			return
		}
	}
}

func (s *keySet) grow() {
	old := s.slots
	s.slots, s.n = make([]uint64, max(2*len(old), 1024)), 0
	for _, w := range old {
		if w != 0 {
			s.add(lineKey(w), w&keyFlags)
		}
	}
}

// slotOf is where a key's probe starts: the key is a hash already, so its
// bits above the flags index the table.
func slotOf(k lineKey) uint64 { return uint64(k) >> 2 }
