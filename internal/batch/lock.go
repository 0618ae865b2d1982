package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// One run writes a batch's files at a time: a run takes an exclusive lock
// (flock) on a lock file beside the output (and beside the journal when
// the journal is elsewhere) before it opens them, and records in it who
// holds it. A second run on the same files finds the lock taken, says
// who holds it and stops. The lock goes with the process, however it
// ends (a kill -9 included), so a stale lock file never blocks a resume;
// the file itself stays, as removing it would let two runs lock two files
// of one name.

// ErrLocked is matched (errors.Is) by the error a run gets when another
// holds its batch's files.
var ErrLocked = errors.New("batch: another run is writing these files")

// Holder is who holds a batch's lock, as its lock file says.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// LockedError says which run holds a batch's files. Its Is matches
// ErrLocked.
type LockedError struct {
	Path   string // the lock file
	Holder Holder // zero when the file could not be read
}

func (e *LockedError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("batch: another run holds %s: wait for it to end, or stop it", e.Path)
	}
	return fmt.Sprintf("batch: another run (pid %d on %s, started %s) holds %s: wait for it to end, or stop it",
		h.PID, h.Host, h.Started.Format(time.RFC3339), e.Path)
}

// Is matches ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// fileLock is the locks a run holds.
type fileLock struct{ locks []*flock.Flock }

// lockFiles takes the locks of p's files, or returns a *LockedError.
func lockFiles(p Paths) (*fileLock, error) {
	paths := []string{p.Out + ".lock"}
	if j := p.journal(); j != p.Out+".journal" {
		paths = append(paths, j+".lock")
	}
	l := &fileLock{}
	for _, path := range paths {
		if err := l.take(path); err != nil {
			l.release()
			return nil, err
		}
	}
	return l, nil
}

// take locks path and records this process in it.
func (l *fileLock) take(path string) error {
	fl := flock.New(path, flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		return fmt.Errorf("batch: lock %s: %w", path, err)
	}
	if !ok {
		return &LockedError{Path: path, Holder: readHolder(path)}
	}
	l.locks = append(l.locks, fl)
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)})
	// A second descriptor: closing it keeps the flock, which belongs to
	// the lock's own.
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// readHolder reads who holds path; zero when it cannot say.
func readHolder(path string) Holder {
	var h Holder
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &h)
	}
	return h
}

// release gives the locks up.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	for _, fl := range l.locks {
		fl.Close()
	}
	l.locks = nil
}
