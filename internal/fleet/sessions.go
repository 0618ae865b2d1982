package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sticky sessions are shared as {prefix}{sess:<sha256 of the session
// key>} → the target's name, kept SessionTTL after the session was last
// served. The key is hashed: session ids come from clients, and their
// length is theirs to choose. A replica looks a session up only when it
// has not seen it itself (a conversation's first request there); what it
// serves goes out with the next sync round.

// SessionTTL is how long a session's target is remembered after it last
// served it, as a router remembers it.
const SessionTTL = time.Hour

// sessions are the sessions served here and not yet sent.
type sessions struct {
	mu      sync.Mutex
	pending map[string]string // key in Redis → target
}

func (f *Fleet) sessionKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return f.o.Prefix + "{sess:" + hex.EncodeToString(h[:16]) + "}"
}

// Recall returns the target that last served session key on any replica,
// "" if none (or Redis could not be asked within Timeout).
func (f *Fleet) Recall(key string) string {
	ctx, cancel := f.ctx()
	defer cancel()
	v, err := f.rdb.Get(ctx, f.sessionKey(key)).Result()
	if !f.result("session_recall", err) {
		f.fallback("session_recall")
		return ""
	}
	return v
}

// Remember records that target served session key; it is sent with the
// next sync round.
func (f *Fleet) Remember(key, target string) {
	k := f.sessionKey(key)
	f.sessions.mu.Lock()
	if len(f.sessions.pending) < maxPendingSessions {
		f.sessions.pending[k] = target
	}
	f.sessions.mu.Unlock()
}

// maxPendingSessions bounds the sessions waiting for a round (Redis down
// for long): past it, new ones are this replica's only.
const maxPendingSessions = 100_000

// sendSessions adds the pending sessions to pipe; what Redis does not take
// is sent again next round.
func (f *Fleet) sendSessions(pipe redis.Pipeliner, ctx context.Context) func() {
	f.sessions.mu.Lock()
	batch := f.sessions.pending
	f.sessions.pending = make(map[string]string, len(batch))
	f.sessions.mu.Unlock()
	cmds := make(map[string]*redis.StatusCmd, len(batch))
	for k, target := range batch {
		cmds[k] = pipe.Set(ctx, k, target, SessionTTL)
	}
	return func() {
		f.sessions.mu.Lock()
		defer f.sessions.mu.Unlock()
		for k, c := range cmds {
			if _, newer := f.sessions.pending[k]; c.Err() != nil && !newer && len(f.sessions.pending) < maxPendingSessions {
				f.sessions.pending[k] = batch[k]
			}
		}
	}
}
