package lru

import (
	"strconv"
	"sync"
	"testing"
)

func TestOwnersOnlyPushOutTheirOwn(t *testing.T) {
	s := New[string, int](3, 0)
	s.Put("a", "a1", 1, 0)
	s.Put("a", "a2", 2, 0)
	s.Put("b", "b1", 1, 0)
	for i := range 100 { // b floods
		s.Put("b", "b-flood-"+strconv.Itoa(i), i, 0)
	}
	for _, k := range []string{"a1", "a2"} {
		if _, ok := s.Get(k); !ok {
			t.Errorf("a's %s was pushed out by b", k)
		}
	}
	if n, _ := s.Len("b"); n != 3 {
		t.Errorf("b holds %d entries; want its bound, 3", n)
	}
	if _, ok := s.Get("b-flood-99"); !ok {
		t.Error("b's newest entry is missing")
	}
	if _, ok := s.Get("b1"); ok {
		t.Error("b's oldest entry is still there")
	}
}

func TestLeastRecentlyUsedGoesFirst(t *testing.T) {
	s := New[string, int](2, 0)
	s.Put("a", "x", 1, 0)
	s.Put("a", "y", 2, 0)
	s.Get("x") // x is now the most recent
	s.Put("a", "z", 3, 0)
	if _, ok := s.Get("y"); ok {
		t.Error("y, the least recently used, is still there")
	}
	if _, ok := s.Get("x"); !ok {
		t.Error("x, used just before, was pushed out")
	}
}

func TestByteBound(t *testing.T) {
	s := New[string, int](0, 100)
	if s.Put("a", "huge", 1, 101) {
		t.Error("a value over the byte bound was stored")
	}
	s.Put("a", "k1", 1, 60)
	s.Put("a", "k2", 2, 60) // 120 > 100: k1 goes
	if _, ok := s.Get("k1"); ok {
		t.Error("k1 kept over the byte bound")
	}
	if n, b := s.Len("a"); n != 1 || b != 60 {
		t.Errorf("a holds %d entries, %d bytes; want 1, 60", n, b)
	}
	s.Put("a", "k2", 3, 10) // replaced: its size too
	if _, b := s.Len("a"); b != 10 {
		t.Errorf("a holds %d bytes after replacing k2; want 10", b)
	}
	s.Delete("k2")
	if n, b := s.Len("a"); n != 0 || b != 0 {
		t.Errorf("after Delete: %d entries, %d bytes", n, b)
	}
}

// Many owners at once: every owner stays within its bounds, and the map
// holds exactly the entries the owners count.
func TestHammer(t *testing.T) {
	s := New[string, int](10, 1000)
	var wg sync.WaitGroup
	for o := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := strconv.Itoa(o) + "-" + strconv.Itoa(i%50)
				s.Put(strconv.Itoa(o), k, i, int64(i%200))
				s.Get(strconv.Itoa(o) + "-" + strconv.Itoa((i*7)%50))
				if i%13 == 0 {
					s.Delete(k)
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for o := range 8 {
		n, b := s.Len(strconv.Itoa(o))
		if n > 10 || b > 1000 {
			t.Errorf("owner %d holds %d entries, %d bytes; over its bounds", o, n, b)
		}
		total += n
	}
	if len(s.m) != total {
		t.Errorf("map holds %d entries; the owners count %d", len(s.m), total)
	}
}
