package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"
)

// Limits of the dashboard's live streams: how many may be open at once,
// and how many events each may have waiting before its reader is deemed
// too slow and dropped.
const (
	maxDashboardStreams = 8
	streamQueue         = 16
)

var (
	errTooManyStreams = errors.New("gateway: too many dashboard streams")
	errHubClosed      = errors.New("gateway: shutting down")
)

// hub fans the dashboard's events out to its live streams. A publish never
// blocks: a stream whose queue is full is dropped, so a slow reader costs
// at most its queue. It is safe for concurrent use.
type hub struct {
	max, queue int
	// mu guards subs and closed.
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
	done   chan struct{} // closed by close
}

// subscriber is one live stream.
type subscriber struct {
	ch      chan []byte
	dropped chan struct{} // closed when the hub drops it
	// mu guards kick, which, until the stream's handler returns,
	// unblocks its write in progress (the connection's write deadline
	// set in the past).
	mu   sync.Mutex
	kick func()
}

// kickWrite unblocks the stream's write, if its handler still runs.
func (s *subscriber) kickWrite() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kick != nil {
		s.kick()
	}
}

// finish is called as the stream's handler returns: from then on its
// connection is not the stream's to touch.
func (s *subscriber) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kick = nil
}

func newHub(max, queue int) *hub {
	return &hub{max: max, queue: queue, subs: map[*subscriber]struct{}{}, done: make(chan struct{})}
}

// subscribe opens a stream, or fails when max are open or the hub is
// closed.
func (h *hub) subscribe(kick func()) (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, errHubClosed
	case len(h.subs) >= h.max:
		return nil, errTooManyStreams
	}
	s := &subscriber{ch: make(chan []byte, h.queue), dropped: make(chan struct{}), kick: kick}
	h.subs[s] = struct{}{}
	return s, nil
}

// unsubscribe closes s's stream.
func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// publish queues msg on every stream, dropping those whose queue is full.
func (h *hub) publish(msg []byte) {
	var slow []*subscriber
	h.mu.Lock()
	for s := range h.subs {
		select {
		case s.ch <- msg:
		default:
			delete(h.subs, s)
			close(s.dropped)
			slow = append(slow, s)
		}
	}
	h.mu.Unlock()
	for _, s := range slow {
		s.kickWrite()
	}
}

// count returns the number of open streams.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// dropAll ends every open stream; new ones may open (the admin token
// changed: streams opened with the old one must not go on).
func (h *hub) dropAll() {
	h.mu.Lock()
	subs := h.subs
	h.subs = map[*subscriber]struct{}{}
	for s := range subs {
		close(s.dropped)
	}
	h.mu.Unlock()
	for s := range subs {
		s.kickWrite()
	}
}

// close ends every stream and refuses new ones (the gateway is shutting
// down).
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.done)
	subs := h.subs
	h.subs = map[*subscriber]struct{}{}
	h.mu.Unlock()
	for s := range subs {
		s.kickWrite()
	}
}

// encodeEvent returns v as one server-sent event named name. JSON has no
// raw newlines, so one data line holds it.
func encodeEvent(name string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":` + quote(err.Error()) + `}`)
	}
	out := make([]byte, 0, len(name)+len(b)+16)
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}

// handleEvents serves GET /fusebox/events: the dashboard's live stream of
// server-sent events, with the admin token in the Authorization header
// (the page reads it with fetch, so the token never goes in a URL). The
// first event, "hello", carries the status and every target's history;
// then "sample" every sampling interval, "transition" at each breaker
// state change and "timeline" at each other event. A reader that falls
// streamQueue events behind is dropped; at most maxDashboardStreams are
// open; all end when the gateway shuts down.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r) {
		return
	}
	rc := http.NewResponseController(w)
	sub, err := s.dash.hub.subscribe(func() { rc.SetWriteDeadline(time.Unix(1, 0)) })
	switch {
	case errors.Is(err, errTooManyStreams):
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, "invalid_request_error", "too_many_streams", "",
			"Too many dashboard streams are open; close another dashboard tab or try again shortly.")
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "server_error", "shutting_down", "", "The gateway is shutting down.")
		return
	}
	defer sub.finish()
	defer s.dash.hub.unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !s.sendEvent(w, rc, encodeEvent("hello", s.helloDoc())) {
		return
	}
	for {
		select {
		case msg := <-sub.ch:
			if !s.sendEvent(w, rc, msg) {
				return
			}
		case <-sub.dropped:
			return
		case <-s.dash.hub.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// sendEvent writes and flushes one event, reporting whether it went.
func (s *Server) sendEvent(w http.ResponseWriter, rc *http.ResponseController, msg []byte) bool {
	if _, err := w.Write(msg); err != nil {
		return false
	}
	return rc.Flush() == nil
}
