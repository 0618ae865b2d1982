package router

import (
	"strconv"
	"testing"
)

// A client's sessions are bounded, and its new ones push out only its own:
// one client making up session ids cannot make another's conversation
// lose its target.
func TestStickySessionsAreBoundedPerClient(t *testing.T) {
	s := newSticky(nil)
	b := &Target{Name: "b"}
	s.put("client-b", "client-b\x00smart\x00conv", b, 0)
	for i := range maxSessions + 500 {
		s.put("client-a", "client-a\x00smart\x00"+strconv.Itoa(i), &Target{}, 0)
	}
	if got := s.get("client-b\x00smart\x00conv", &Alias{}, 1); got != b {
		t.Errorf("b's session lost its target after a's flood: %v", got)
	}
	if n, _ := s.m.Len("client-a"); n != maxSessions {
		t.Errorf("a holds %d sessions; want its bound, %d", n, maxSessions)
	}
	if s.get("client-a\x00smart\x000", &Alias{}, 1) != nil {
		t.Error("a's oldest session is still remembered past its bound")
	}
}

// A session this router has not seen is looked up in the shared store,
// and only a target of the alias is taken from it; every session served
// is told to the store.
func TestStickySessionsShared(t *testing.T) {
	store := &mapStore{m: map[string]string{"c\x00smart\x00conv": "b", "c\x00smart\x00gone": "x"}}
	s := newSticky(store)
	a, b := &Target{Name: "a"}, &Target{Name: "b"}
	alias := &Alias{Targets: []*Target{a, b}}
	if got := s.get("c\x00smart\x00conv", alias, 1); got != b {
		t.Errorf("a session served elsewhere by b: got %v", got)
	}
	if got := s.get("c\x00smart\x00gone", alias, 1); got != nil {
		t.Errorf("a target not in the alias was taken from the store: %v", got)
	}
	s.put("c", "c\x00smart\x00new", a, 1)
	if store.m["c\x00smart\x00new"] != "a" {
		t.Errorf("the store was not told: %v", store.m)
	}
}

// mapStore is a SessionStore in a map.
type mapStore struct{ m map[string]string }

func (s *mapStore) Recall(key string) string    { return s.m[key] }
func (s *mapStore) Remember(key, target string) { s.m[key] = target }
