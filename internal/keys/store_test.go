package keys

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openFile(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{File: path})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A minted key works, is stored only as its hash, survives a restart,
// stops working when rotated or revoked; and the store stays sealed.
func TestFileStoreMintRotateRevoke(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.json")
	s := openFile(t, path)
	if s.Snapshot().Sealed() {
		t.Fatal("a new store is sealed")
	}
	r, token, err := s.Mint(ctx, Spec{Name: "web", Models: []string{"chat"}, Limits: Limits{RPM: 60}, Budget: Budget{Daily: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "fbx_") || len(token) < 40 || r.Weight != 1 {
		t.Fatalf("token %q, record %+v", token, r)
	}
	if got := s.Snapshot().Lookup(token); got == nil || got.ID != r.ID {
		t.Fatalf("lookup of the minted token: %+v", got)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), token) || strings.Contains(string(data), token[4:]) {
		t.Fatal("the token is in the file")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if _, _, err := s.Mint(ctx, Spec{Name: "web"}); err != ErrNameTaken {
		t.Fatalf("second key named web: %v", err)
	}

	again := openFile(t, path) // a restart
	if got := again.Snapshot().Lookup(token); got == nil || got.Limits.RPM != 60 || got.Budget.Daily != 5 {
		t.Fatalf("after a restart: %+v", got)
	}

	rpm := 10
	r2, token2, err := s.Change(ctx, r.ID, Patch{Rotate: true, Limits: &PatchLimits{RPM: &rpm}})
	if err != nil || token2 == "" || token2 == token {
		t.Fatalf("rotate: %v %q", err, token2)
	}
	if r2.Limits.RPM != 10 || r2.Budget.Daily != 5 || r2.Rev != 2 {
		t.Fatalf("patched record %+v", r2)
	}
	if s.Snapshot().Lookup(token) != nil || s.Snapshot().Lookup(token2) == nil {
		t.Fatal("after rotation the old token works or the new one does not")
	}
	if err := s.Revoke(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if s.Snapshot().Lookup(token2) != nil || s.Snapshot().Len() != 0 {
		t.Fatal("revoked key still found")
	}
	if err := s.Revoke(ctx, r.ID); err != ErrNotFound {
		t.Fatalf("second revoke: %v", err)
	}
	if !openFile(t, path).Snapshot().Sealed() {
		t.Fatal("a store whose last key was revoked is open again after a restart")
	}
}

// A write that fails changes nothing: the key is not minted.
func TestFileStoreFailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s := openFile(t, filepath.Join(dir, "keys.json"))
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	if _, _, err := s.Mint(context.Background(), Spec{Name: "web"}); err == nil {
		t.Fatal("mint into a read-only directory succeeded")
	}
	if s.Snapshot().Len() != 0 {
		t.Fatal("a failed mint left a key")
	}
}

// Many goroutines mint and revoke at once: every token minted and not
// revoked works, every revoked one is refused, names stay unique, and the
// file holds exactly what the store does.
func TestHammerMintRevoke(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.json")
	s := openFile(t, path)
	type minted struct {
		id, token string
		revoked   bool
	}
	var mu sync.Mutex
	var all []minted
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				name := "c" + string(rune('a'+g)) + string(rune('a'+i%5)) // collisions on purpose
				r, tok, err := s.Mint(ctx, Spec{Name: name})
				if err == ErrNameTaken {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				revoke := i%2 == 0
				if revoke {
					if err := s.Revoke(ctx, r.ID); err != nil {
						t.Error(err)
					}
				}
				mu.Lock()
				all = append(all, minted{r.ID, tok, revoke})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	snap, live := s.Snapshot(), 0
	for _, m := range all {
		got := snap.Lookup(m.token)
		if m.revoked != (got == nil) {
			t.Fatalf("key %s revoked=%v but lookup=%v", m.id, m.revoked, got)
		}
		if !m.revoked {
			live++
		}
	}
	names := map[string]bool{}
	for _, r := range snap.List() {
		if names[r.Name] {
			t.Fatalf("two keys named %s", r.Name)
		}
		names[r.Name] = true
	}
	if snap.Len() != live || openFile(t, path).Snapshot().Len() != live {
		t.Fatalf("%d keys in the store, %d in the file, want %d", snap.Len(), openFile(t, path).Snapshot().Len(), live)
	}
}

// A change racing another is retried on the newer record: no change is
// lost.
func TestChangeRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	s := openFile(t, filepath.Join(t.TempDir(), "keys.json"))
	r, _, _ := s.Mint(ctx, Spec{Name: "web"})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := i + 1
			if _, _, err := s.Change(ctx, r.ID, Patch{Weight: &w}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := s.Snapshot().Get(r.ID); got.Rev != 11 {
		t.Fatalf("rev %d after 10 changes, want 11", got.Rev)
	}
}
