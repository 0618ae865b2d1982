package sim

import (
	"net/http"
	"strconv"
)

// contentChunk is how much job content is written at a time.
const contentChunk = 32 << 10

// handleVideoContent serves GET /v1/videos/{id}/content: a completed
// job's content, Jobs.ContentBytes of bytes drawn from its id (the same
// job always sends the same bytes), or endless bytes when that is
// negative, written until the client stops reading.
func (s *Server) handleVideoContent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	now := s.clk.Now()
	s.mu.Lock()
	j, ok := s.lookup(r, id)
	state := ""
	if ok {
		state, _ = j.stateAt(now, s.cfg.Jobs)
		s.objectLocked(j, now) // bills it if it has just completed
	}
	s.mu.Unlock()
	switch {
	case !ok:
		notFoundVideo(w, id)
		return
	case state != JobCompleted:
		writeErrorParam(w, http.StatusBadRequest, "invalid_request_error", "video_not_ready", "id",
			"Video '"+id+"' is "+state+"; its content is available once it has completed.")
		return
	}
	size := s.cfg.Jobs.contentBytes()
	h := w.Header()
	h.Set("Content-Type", "video/mp4")
	if size > 0 {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
	block := contentBlock(id)
	rc := http.NewResponseController(w)
	for sent := int64(0); size < 0 || sent < size; {
		n := int64(len(block))
		if size > 0 {
			n = min(n, size-sent)
		}
		if _, err := w.Write(block[:n]); err != nil {
			return
		}
		sent += n
		s.stats.content.Add(n)
		if r.Context().Err() != nil {
			return
		}
		rc.Flush()
	}
}

// contentBlock returns the bytes a job's content repeats: a pattern drawn
// from its id.
func contentBlock(id string) []byte {
	b := make([]byte, contentChunk)
	x := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		x = (x ^ uint32(id[i])) * 16777619
	}
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
