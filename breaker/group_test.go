package breaker

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestGroupMakesOneBreakerPerKey(t *testing.T) {
	made := 0
	var mu sync.Mutex
	g := NewGroup(func(k string) Config {
		mu.Lock()
		made++
		mu.Unlock()
		return Config{Name: k, ConsecutiveFailures: 1}
	})
	var wg sync.WaitGroup
	got := make([]*Breaker, 64)
	for i := range 64 {
		wg.Go(func() {
			b, err := g.Get(fmt.Sprintf("k%d", i%4))
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	if made != 4 {
		t.Fatalf("made %d breakers; want 4", made)
	}
	for i := range got {
		if got[i] != got[i%4] {
			t.Fatalf("key k%d has two breakers", i%4)
		}
	}
	p, _ := got[1].Allow()
	p.Failure()
	snaps := g.Snapshots()
	if len(snaps) != 4 || snaps[1].Name != "k1" || snaps[1].State != StateOpen || snaps[0].State != StateClosed {
		t.Fatalf("snapshots %+v", snaps)
	}
	g.Delete("k1")
	if _, ok := g.Lookup("k1"); ok {
		t.Fatal("deleted key still there")
	}
	b, _ := g.Get("k1")
	if b.State() != StateClosed {
		t.Fatal("a new breaker after Delete should be closed")
	}
}

func TestGroupBadConfigStoresNothing(t *testing.T) {
	bad := true
	g := NewGroup(func(string) Config {
		if bad {
			return Config{FailureRate: 2, Window: time.Second}
		}
		return Config{}
	})
	if _, err := g.Get("x"); err == nil {
		t.Fatal("want an error")
	}
	bad = false
	if _, err := g.Get("x"); err != nil {
		t.Fatal(err)
	}
}
