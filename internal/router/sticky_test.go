package router

import (
	"strconv"
	"testing"
)

// A client's sessions are bounded, and its new ones push out only its own:
// one client making up session ids cannot make another's conversation
// lose its target.
func TestStickySessionsAreBoundedPerClient(t *testing.T) {
	s := newSticky()
	b := &Target{Name: "b"}
	s.put("client-b", "client-b\x00smart\x00conv", b, 0)
	for i := range maxSessions + 500 {
		s.put("client-a", "client-a\x00smart\x00"+strconv.Itoa(i), &Target{}, 0)
	}
	if got := s.get("client-b\x00smart\x00conv", 1); got != b {
		t.Errorf("b's session lost its target after a's flood: %v", got)
	}
	if n, _ := s.m.Len("client-a"); n != maxSessions {
		t.Errorf("a holds %d sessions; want its bound, %d", n, maxSessions)
	}
	if s.get("client-a\x00smart\x000", 1) != nil {
		t.Error("a's oldest session is still remembered past its bound")
	}
}
