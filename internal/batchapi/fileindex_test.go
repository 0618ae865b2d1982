package batchapi

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Opening a shared jobs_dir removes the temporary files of uploads a crash
// cut short, never another replica's upload in progress.
func TestOpenKeepsUploadsInProgress(t *testing.T) {
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for name, age := range map[string]time.Duration{"file-dead.tmp": 2 * time.Hour, "file-live.tmp": time.Minute} {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte("part"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := openFileIndex(dir, now); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(files, "file-dead.tmp")); !os.IsNotExist(err) {
		t.Errorf("an upload unwritten for 2 h was kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(files, "file-live.tmp")); err != nil {
		t.Errorf("an upload written a minute ago was removed: %v", err)
	}
}
