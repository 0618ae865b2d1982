package batch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Paths are a batch's files.
type Paths struct {
	// Out receives the answered lines.
	Out string
	// Dead receives the lines that failed for good.
	Dead string
	// Journal records what is done; "": Out + ".journal".
	Journal string
}

func (p Paths) journal() string {
	if p.Journal != "" {
		return p.Journal
	}
	return p.Out + ".journal"
}

// sink writes finished lines to the output and dead-letter files and
// journals them. It is safe for concurrent use.
type sink struct {
	// mu guards everything below.
	mu          sync.Mutex
	out, dead   *os.File
	outW, deadW *bufio.Writer
	cp          checkpoint // the files' lengths and the totals, as written
	j           *journal
	lock        *fileLock
	err         error // the first write error; it sticks
	room        Room  // nil: unbounded
}

// openSink opens a batch's files: with a journal, it resumes (the keys of
// the lines done are put in done, and the output files cut to the journal's
// last commit); without, it starts the batch afresh under batchID.
//
// It first takes the files' lock: another run writing them is refused
// with a *LockedError.
func openSink(p Paths, batchID string, done *keySet) (*sink, error) {
	lock, err := lockFiles(p)
	if err != nil {
		return nil, err
	}
	s := &sink{lock: lock}
	if _, statErr := os.Stat(p.journal()); statErr == nil {
		s.j, err = openJournal(p.journal(), done)
	} else {
		if err := refuseOrphan(p.Out); err != nil {
			return nil, err
		}
		s.j, err = createJournal(p.journal(), batchID)
	}
	if err != nil {
		lock.release()
		return nil, err
	}
	s.cp = s.j.last
	if s.out, err = openCut(p.Out, s.cp.out); err == nil {
		s.dead, err = openCut(p.Dead, s.cp.dead)
	}
	if err == nil {
		err = syncDir(p.Out, p.Dead, p.journal())
	}
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	s.outW, s.deadW = bufio.NewWriterSize(s.out, 256<<10), bufio.NewWriterSize(s.dead, 64<<10)
	return s, nil
}

// refuseOrphan refuses to start over an output file that has lines but no
// journal: its lines would be neither skipped nor kept.
func refuseOrphan(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return fmt.Errorf("batch: %s has lines but no journal beside it: move it away, or pass another output file", path)
	}
	return nil
}

// openCut opens path for appending, cut to n bytes: what the journal
// vouches for (a torn last line, written after the last commit, goes). A
// file shorter than that, or whose vouched part does not end a line, was
// changed behind the journal.
func openCut(path string, n int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < n {
		err = fmt.Errorf("batch: %s is shorter (%d bytes) than its journal says (%d): it was changed; remove the journal to start the batch over", path, fi.Size(), n)
	}
	if err == nil && n > 0 {
		err = endsLine(f, path, n)
	}
	if err == nil {
		err = f.Truncate(n)
	}
	if err == nil {
		_, err = f.Seek(n, 0)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// endsLine checks that the n bytes of f the journal vouches for end a
// line.
func endsLine(f *os.File, path string, n int64) error {
	var b [1]byte
	if _, err := f.ReadAt(b[:], n-1); err != nil {
		return err
	}
	if b[0] != '\n' {
		return fmt.Errorf("batch: %s does not end a line where its journal says (%d bytes): it was changed; remove the journal to start the batch over", path, n)
	}
	return nil
}

// syncDir syncs the directories of paths, so that new files survive a
// power loss.
func syncDir(paths ...string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		d := filepath.Dir(p)
		if seen[d] {
			continue
		}
		seen[d] = true
		f, err := os.Open(d)
		if err != nil {
			return err
		}
		f.Sync() // some file systems cannot sync a directory; that is not an error here
		f.Close()
	}
	return nil
}

// useRoom bounds the files by room from now on, which first learns their
// lengths as resumed (cut back to the journal's last commit).
func (s *sink) useRoom(room Room) {
	if room == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.room = room
	room.Grow(s.cp.out + s.cp.dead)
}

// write appends a finished line's output (to the dead-letter file when
// dead) and journals it with the next commit; errNoRoom (which does not
// stick) when the room refuses it.
func (s *sink) write(k lineKey, line []byte, dead bool, cost float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.room != nil && !s.room.Grow(s.cp.out+s.cp.dead+int64(len(line))) {
		return errNoRoom
	}
	w, n := s.outW, &s.cp.out
	if dead {
		w, n = s.deadW, &s.cp.dead
		s.cp.failed++
	} else {
		s.cp.ok++
	}
	if _, err := w.Write(line); err != nil {
		s.err = err
		return err
	}
	*n += int64(len(line))
	s.cp.cost += cost
	s.j.add(k)
	return nil
}

// flush makes everything written so far durable: the output files are
// flushed and synced, then the journal's group is committed and synced.
func (s *sink) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.err = errors.Join(s.outW.Flush(), s.deadW.Flush())
	if s.err == nil {
		s.err = errors.Join(s.out.Sync(), s.dead.Sync())
	}
	if s.err == nil {
		s.err = s.j.commit(s.cp)
	}
	return s.err
}

// close flushes and closes the files.
func (s *sink) close() error {
	err := s.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(err, s.closeFiles())
}

func (s *sink) closeFiles() error {
	var errs []error
	for _, c := range []interface{ Close() error }{s.out, s.dead} {
		if f, ok := c.(*os.File); ok && f != nil {
			errs = append(errs, f.Close())
		}
	}
	if s.j != nil {
		errs = append(errs, s.j.close())
	}
	s.lock.release() // last: the files are closed
	return errors.Join(errs...)
}

func (s *sink) totals() checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cp
}
