package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond until it holds or ten seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// SIGHUP reads the file again: a new alias is served; a broken file is
// refused in the log and the running configuration stays.
func TestServeReloadsOnHangup(t *testing.T) {
	const base = "listen: 127.0.0.1:0\nproviders:\n  openai: {type: openai, keys: [k]}\nmodels:\n  - {name: one, targets: [{provider: openai, model: a}]}\n"
	path := write(t, base)
	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Run(ctx, []string{"serve", "--config", path, "--drain", "1s"}, io.Discard, logs) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var addr string
	waitFor(t, "the gateway to listen", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "fusebox listening" {
				addr = rec.Addr
				return true
			}
		}
		return false
	})
	models := func() string {
		resp, err := http.Get("http://" + addr + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	hangup := func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.WriteFile(path, []byte(base+"  - {name: two, targets: [{provider: openai, model: b}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hangup()
	waitFor(t, "the new alias", func() bool { return strings.Contains(models(), `"id":"two"`) })

	if err := os.WriteFile(path, []byte(base+"  - {name: three, targets: [{provider: nobody, model: c}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hangup()
	waitFor(t, "the refusal in the log", func() bool { return strings.Contains(logs.String(), "configuration reload refused") })
	if !strings.Contains(logs.String(), "fusebox.yaml:6") || !strings.Contains(models(), `"id":"two"`) {
		t.Fatalf("after a bad reload: models %s\nlog %s", models(), logs.String())
	}
}
