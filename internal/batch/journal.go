package batch

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// The journal file: a header, then groups of line records each closed by a
// commit record. A group counts only once its commit record is whole and
// its checksum matches; what follows the last such record (a torn write at
// a crash) is cut off on open.
//
//	header  "FBXJ1" len:uint16 batchID
//	line    'L' key:uint64
//	commit  'C' out:int64 dead:int64 cost:float64 ok:uint32 failed:uint32 n:uint32 crc:uint32
//
// Integers are little-endian; crc is CRC-32C over the group's line records
// and the commit record before the crc.
const (
	journalMagic = "FBXJ1"
	lineRecord   = 1 + 8
	commitRecord = 1 + 8 + 8 + 8 + 4 + 4 + 4 + 4
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// checkpoint is what a commit record says: the lengths of the output and
// dead-letter files, the cost so far and the lines done so far.
type checkpoint struct {
	out, dead  int64
	cost       float64
	ok, failed uint32
}

// journal appends groups to an open journal file. It is not safe for
// concurrent use: the sink serialises it.
type journal struct {
	f       *os.File
	group   []byte // the line records since the last commit
	n       uint32
	last    checkpoint
	batchID string
}

// createJournal writes a new journal for batchID at path, synced.
func createJournal(path, batchID string) (*journal, error) {
	if len(batchID) > math.MaxUint16 {
		return nil, errors.New("batch: batch id too long")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	hdr := binary.LittleEndian.AppendUint16([]byte(journalMagic), uint16(len(batchID)))
	hdr = append(hdr, batchID...)
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return &journal{f: f, batchID: batchID}, nil
}

// openJournal reads the journal at path: its batch id, the keys of every
// committed line (added to done with keyDone) and the last checkpoint. The
// file is cut after its last commit, ready for appending.
func openJournal(path string, done *keySet) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	j := &journal{f: f}
	end, err := j.replay(bufio.NewReaderSize(f, 64<<10), done)
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("batch: journal %s: %w", path, err)
	}
	return j, nil
}

// replay reads the header and the groups, and returns the length of the
// file up to the end of its last whole commit.
func (j *journal) replay(r *bufio.Reader, done *keySet) (int64, error) {
	hdr := make([]byte, len(journalMagic)+2)
	if _, err := io.ReadFull(r, hdr); err != nil || string(hdr[:len(journalMagic)]) != journalMagic {
		return 0, errors.New("not a batch journal")
	}
	id := make([]byte, binary.LittleEndian.Uint16(hdr[len(journalMagic):]))
	if _, err := io.ReadFull(r, id); err != nil {
		return 0, errors.New("not a batch journal")
	}
	j.batchID = string(id)
	end := int64(len(hdr) + len(id))
	pos := end
	var group []lineKey
	crc := uint32(0)
	rec := make([]byte, commitRecord)
	for {
		kind, err := r.ReadByte()
		if err != nil {
			return end, nil
		}
		switch kind {
		case 'L':
			rec[0] = kind
			if _, err := io.ReadFull(r, rec[1:lineRecord]); err != nil {
				return end, nil
			}
			crc = crc32.Update(crc, crcTable, rec[:lineRecord])
			group = append(group, lineKey(binary.LittleEndian.Uint64(rec[1:])))
			pos += lineRecord
		case 'C':
			rec[0] = kind
			if _, err := io.ReadFull(r, rec[1:]); err != nil {
				return end, nil
			}
			cp, n, sum := decodeCommit(rec)
			if n != uint32(len(group)) || sum != crc32.Update(crc, crcTable, rec[:commitRecord-4]) {
				return end, nil
			}
			for _, k := range group {
				done.add(k, keyDone)
			}
			pos += commitRecord
			end, j.last, group, crc = pos, cp, group[:0], 0
		default:
			return end, nil
		}
	}
}

func decodeCommit(rec []byte) (checkpoint, uint32, uint32) {
	le := binary.LittleEndian
	return checkpoint{
		out:    int64(le.Uint64(rec[1:])),
		dead:   int64(le.Uint64(rec[9:])),
		cost:   math.Float64frombits(le.Uint64(rec[17:])),
		ok:     le.Uint32(rec[25:]),
		failed: le.Uint32(rec[29:]),
	}, le.Uint32(rec[33:]), le.Uint32(rec[37:])
}

// add records a finished line, to be written by the next commit.
func (j *journal) add(k lineKey) {
	j.group = append(j.group, 'L')
	j.group = binary.LittleEndian.AppendUint64(j.group, uint64(k))
	j.n++
}

// commit writes the pending group closed by cp and syncs the journal. The
// files cp measures must already be synced. With nothing pending and
// nothing changed it writes nothing.
func (j *journal) commit(cp checkpoint) error {
	if j.n == 0 && cp == j.last {
		return nil
	}
	le := binary.LittleEndian
	b := append(j.group, 'C')
	b = le.AppendUint64(b, uint64(cp.out))
	b = le.AppendUint64(b, uint64(cp.dead))
	b = le.AppendUint64(b, math.Float64bits(cp.cost))
	b = le.AppendUint32(b, cp.ok)
	b = le.AppendUint32(b, cp.failed)
	b = le.AppendUint32(b, j.n)
	b = le.AppendUint32(b, crc32.Checksum(b, crcTable))
	if _, err := j.f.Write(b); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.group, j.n, j.last = b[:0], 0, cp
	return nil
}

func (j *journal) close() error { return j.f.Close() }
