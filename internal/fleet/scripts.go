package fleet

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The scripts a request waits on run by EVALSHA, which a Redis that has
// not seen the script answers NOSCRIPT, and go-redis sends it again in
// full: two round trips and a compile on the first request after a start
// or a Redis restart, enough to pass the request path's timeout on a
// loaded machine (a stored response then kept on this replica only). So
// the sync loop loads them into Redis, off the request path, when the
// replica starts and when Redis is back.

// requestScripts are the scripts run on the request path.
var requestScripts = []*redis.Script{
	probeScript, reserveScript, claimScript, storeScript, releaseScript,
	putScript, deleteScript, adoptScript, settleWorkScript,
}

// loadScripts loads requestScripts into Redis (on a Cluster, into every
// master); it reports whether Redis took them all. One call each, not a
// pipeline: Script.Load given a pipeline takes the digest before the
// pipeline runs, an empty one.
func (f *Fleet) loadScripts() bool {
	ctx, cancel := context.WithTimeout(context.Background(), f.bgTimeout())
	defer cancel()
	for _, s := range requestScripts {
		if s.Load(ctx, f.rdb).Err() != nil {
			return false
		}
	}
	return true
}

// load loads requestScripts if Redis may lack them.
func (f *Fleet) load() {
	if f.unloaded.Load() && f.loadScripts() {
		f.unloaded.Store(false)
	}
}
