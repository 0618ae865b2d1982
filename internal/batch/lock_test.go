package batch

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A second run on an output another run is writing is refused before it
// touches a file, and says who holds it; once the first ends, a run goes.
func TestSecondRunOnOneOutputIsRefused(t *testing.T) {
	p := paths(t)
	held := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		r, _ := New(Options{Handler: blockOnce(held, release)})
		_, err := r.Run(context.Background(), strings.NewReader(chatLines(3)), p)
		first <- err
	}()
	<-held
	before, _ := os.ReadFile(p.Out)
	r, _ := New(Options{Handler: okHandler("0.001")})
	_, err := r.Run(context.Background(), strings.NewReader(chatLines(3)), p)
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("second run: %v; want a LockedError", err)
	}
	if le.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("the refusal does not name the holder: %v", err)
	}
	if after, _ := os.ReadFile(p.Out); string(after) != string(before) {
		t.Error("the refused run changed the output")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if s := run(t, p, chatLines(3), Options{Handler: okHandler("0.001")}); s.Stopped != "" {
		t.Errorf("a run after the first ended: %+v", s)
	}
}

// A journal kept elsewhere is locked too: two outputs sharing one journal
// are not written at once.
func TestJournalElsewhereIsLocked(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "shared.journal")
	a := Paths{Out: filepath.Join(dir, "a.jsonl"), Dead: filepath.Join(dir, "a.dead.jsonl"), Journal: j}
	b := Paths{Out: filepath.Join(dir, "b.jsonl"), Dead: filepath.Join(dir, "b.dead.jsonl"), Journal: j}
	la, err := lockFiles(a)
	if err != nil {
		t.Fatal(err)
	}
	defer la.release()
	if _, err := lockFiles(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock on the journal: %v; want ErrLocked", err)
	}
}

// blockOnce answers like okHandler, its first request only once release
// is closed (held is closed when that request arrives).
func blockOnce(held, release chan struct{}) http.HandlerFunc {
	var once sync.Once
	return func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			close(held)
			<-release
		})
		okHandler("0.001")(w, r)
	}
}
