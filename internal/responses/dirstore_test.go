package responses

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func openDir(t *testing.T, dir string, maxBytes int64, ttl time.Duration) *DirStore {
	t.Helper()
	s, err := NewDirStore(dir, 0, maxBytes, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// files lists the names in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	sort.Strings(out)
	return out
}

func TestDirStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir, 1<<20, 0)
	for i := range 3 {
		st := stored(hexID(i), "team-a", 10)
		st.Created = created.Add(time.Duration(i) * time.Second)
		if err := s.Put(st); err != nil {
			t.Fatal(err)
		}
	}
	s.Delete("team-a", hexID(1))
	if got := files(t, dir); len(got) != 2 || got[0] != hexID(0)+".json" || got[1] != hexID(2)+".json" {
		t.Fatalf("files %q: want one per response, no temporary files", got)
	}
	s = openDir(t, dir, 1<<20, 0)
	for i, want := range []bool{true, false, true} {
		st, ok := s.Get("team-a", hexID(i))
		if ok != want {
			t.Errorf("after a restart, response %d found %v, want %v", i, ok, want)
		}
		if ok && (st.Owner != "team-a" || !st.Created.Equal(created.Add(time.Duration(i)*time.Second))) {
			t.Errorf("after a restart, response %d = %+v", i, st)
		}
	}
	// The index was read back too: the byte bound still holds, oldest out.
	var used int64
	for _, name := range files(t, dir) {
		info, _ := os.Stat(filepath.Join(dir, name))
		used += info.Size()
	}
	overhead := used/2 - 10 // each file: a pad of 10 bytes and the rest
	s = openDir(t, dir, 1<<20, 0)
	big := stored(hexID(9), "team-a", int(1<<20-used+1-overhead))
	if err := s.Put(big); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("team-a", hexID(0)); ok {
		t.Error("the oldest response of the owner is still there past the bound")
	}
	if _, ok := s.Get("team-a", hexID(9)); !ok {
		t.Error("the new response is gone")
	}
}

func TestDirStoreEvictsOldestNotLeastUsed(t *testing.T) {
	s := openDir(t, t.TempDir(), 4000, 0)
	for i := range 3 {
		if err := s.Put(stored(hexID(i), "a", 800)); err != nil {
			t.Fatal(err)
		}
	}
	s.Get("a", hexID(0)) // reading does not keep it
	s.Put(stored(hexID(3), "a", 800))
	if _, ok := s.Get("a", hexID(0)); ok {
		t.Error("the oldest response was kept")
	}
	for i := 1; i <= 3; i++ {
		if _, ok := s.Get("a", hexID(i)); !ok {
			t.Errorf("response %d is gone", i)
		}
	}
}

func TestDirStoreReplace(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir, 1<<20, 0)
	s.Put(stored(testID, "a", 10))
	s.Put(stored(testID, "b", 20))
	st, ok := s.Get("b", testID)
	if !ok || st.Owner != "b" {
		t.Fatalf("Get after a replacing Put = %+v, %v", st, ok)
	}
	if _, ok := s.Get("a", testID); ok {
		t.Error("the replaced owner still finds it")
	}
	if got := files(t, dir); len(got) != 1 {
		t.Errorf("files %q", got)
	}
	if len(s.owners) != 1 || s.owners["b"] == nil {
		t.Errorf("the index still counts the replaced response: %v", s.owners)
	}
}

func TestDirStoreTTL(t *testing.T) {
	dir := t.TempDir()
	clk := clocktest.New(created)
	s := openDir(t, dir, 1<<20, time.Hour)
	s.Clock = clk
	a := stored(hexID(1), "a", 10)
	a.Created = clk.Now()
	s.Put(a)
	clk.Advance(30 * time.Minute)
	b := stored(hexID(2), "a", 10)
	b.Created = clk.Now()
	s.Put(b)
	if _, ok := s.Get("a", hexID(1)); !ok {
		t.Fatal("a response is gone before its ttl")
	}
	clk.Advance(31 * time.Minute)
	if _, ok := s.Get("a", hexID(1)); ok {
		t.Error("a response is found after its ttl")
	}
	if _, ok := s.Get("a", hexID(2)); !ok {
		t.Error("a younger response is gone")
	}
	if got := files(t, dir); len(got) != 1 || got[0] != hexID(2)+".json" {
		t.Errorf("files %q: the expired one should be removed", got)
	}
	// After a restart the times are read from the files.
	s = openDir(t, dir, 1<<20, time.Hour)
	s.Clock = clk
	clk.Advance(30 * time.Minute)
	c := stored(hexID(3), "b", 10)
	c.Created = clk.Now()
	s.Put(c) // a Put removes what has expired
	if got := files(t, dir); len(got) != 1 || got[0] != hexID(3)+".json" {
		t.Errorf("files %q after the ttl", got)
	}
}

func TestDirStoreTraversal(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "store")
	s := openDir(t, dir, 1<<20, 0)
	secret := filepath.Join(root, "secret.json")
	os.WriteFile(secret, []byte(`{"id":"resp_00","owner":"x","created":0,"input":[],"output":[],"response":{}}`), 0o600)
	for _, id := range []string{"../secret", "..", "resp_00/../../secret", "/etc/passwd", "resp_../../x",
		"resp_0a\x00", `..\secret`, "resp_0A", "resp_0a.json", "./resp_0a", "resp_0a/"} {
		if err := s.Put(stored(id, "x", 1)); err != ErrInvalidID {
			t.Errorf("Put(%q) = %v, want ErrInvalidID", id, err)
		}
		if _, ok := s.Get("x", id); ok {
			t.Errorf("Get(%q) found something", id)
		}
		if s.Delete("x", id) {
			t.Errorf("Delete(%q) removed something", id)
		}
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("the file outside the store is gone: %v", err)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("files %q", got)
	}
}

func TestDirStoreCleansUp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(dirTemp+"123", "half a fil")                  // a crash mid-write
	write(hexID(1)+".json", "{corrupt")                 // unreadable: removed
	write(hexID(2)+".json", `{"id":"resp_0000000003"}`) // another id inside: removed
	write("notes.txt", "the operator's")                // not the store's: left alone
	write("resp_XYZ.json", "{}")                        // not an id: left alone
	s := openDir(t, dir, 1<<20, 0)
	if err := s.Put(stored(hexID(4), "a", 1)); err != nil {
		t.Fatal(err)
	}
	want := []string{"notes.txt", hexID(4) + ".json", "resp_XYZ.json"}
	if got := files(t, dir); !equalValues(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
}

func TestDirStoreRefusesNonJSONResponse(t *testing.T) {
	s := openDir(t, t.TempDir(), 1<<20, 0)
	st := stored(testID, "a", 1)
	st.Response = []byte("not json")
	if err := s.Put(st); err == nil {
		t.Error("Put of a response that is not JSON: no error")
	}
}
