package gateway

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/cache"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// aliasCache is the response cache of one alias.
type aliasCache struct {
	c     *cache.Cache
	scope cache.Scope
	fp    string // the settings' fingerprint, for reloads
	// shared: the fleet keeps the answers too (store: redis), for keep.
	shared bool
	keep   time.Duration
}

// cacheMode is what a request asks of the cache.
type cacheMode uint8

const (
	cacheUse     cacheMode = iota // read and write
	cacheRefresh                  // do not read; store the fresh answer (Cache-Control: no-cache)
	cacheBypass                   // neither read nor write (Cache-Control: no-store)
)

// requestCacheMode reads Cache-Control and x-fusebox-cache
// (use | refresh | bypass) from a request.
func requestCacheMode(r *http.Request) cacheMode {
	switch strings.ToLower(r.Header.Get("X-Fusebox-Cache")) {
	case "bypass":
		return cacheBypass
	case "refresh":
		return cacheRefresh
	}
	cc := strings.ToLower(r.Header.Get("Cache-Control"))
	switch {
	case strings.Contains(cc, "no-store"):
		return cacheBypass
	case strings.Contains(cc, "no-cache"):
		return cacheRefresh
	}
	return cacheUse
}

// newCaches makes a cache for each alias that asks for one; the limits of
// the configuration's cache block apply to each. An alias of prev whose
// cache settings did not change keeps its cache and what it holds.
func newCaches(cfg *config.Config, o Options, prev map[string]*aliasCache) (map[string]*aliasCache, error) {
	out := map[string]*aliasCache{}
	for _, m := range cfg.Models {
		if m.Cache.TTL <= 0 {
			continue
		}
		fp := config.Fingerprint([]any{m.Cache, cfg.Cache})
		if old, ok := prev[m.Name]; ok && old.fp == fp {
			out[m.Name] = old
			continue
		}
		c, err := cache.New(cache.Config{
			MaxEntries: cfg.Cache.MaxEntries, MaxBytes: int64(cfg.Cache.MaxBytes),
			TTL: m.Cache.TTL, StaleFor: m.Cache.StaleFor, Clock: o.Clock,
		})
		if err != nil {
			return nil, err
		}
		scope, err := cache.ParseScope(m.Cache.Scope)
		if err != nil {
			return nil, err
		}
		out[m.Name] = &aliasCache{c: c, scope: scope, fp: fp,
			shared: m.Cache.Store == "redis", keep: m.Cache.TTL + m.Cache.StaleFor}
	}
	return out, nil
}

// lookup answers from the cache when it can; otherwise it prepares the
// exchange to store the answer it gets.
func (x *exchange) lookup(body []byte, client string) bool {
	ac := x.st.caches[x.alias.Name]
	if ac == nil || x.messages || x.resp != nil || x.gem != nil {
		return false
	}
	mode := requestCacheMode(x.r)
	if mode == cacheBypass {
		x.w.Header().Set("X-Fusebox-Cache", "bypass")
		x.s.metrics.Cache(x.alias.Name, "bypass")
		return false
	}
	key, err := cache.Key(x.alias.Name, ac.scope, client, body)
	if err != nil {
		return false
	}
	x.cache, x.cacheKey = ac, key
	if mode == cacheUse {
		e, st := ac.c.Get(key)
		if st != cache.Hit && x.fromFleet(ac, key) {
			e, st = ac.c.Get(key)
		}
		if st == cache.Hit {
			if x.idemRec != nil { // the answer stands for this key too
				x.idemEnd(append([]byte(nil), e.Body...), e.ContentType, e.Target, false)
			}
			x.answerCached(e, "hit")
			return true
		}
	}
	x.w.Header().Set("X-Fusebox-Cache", "miss")
	x.s.metrics.Cache(x.alias.Name, "miss")
	return false
}

// fromFleet copies the fleet's answer for key, if it keeps one, into the
// alias's cache, and reports whether it did.
func (x *exchange) fromFleet(ac *aliasCache, key cache.KeyHash) bool {
	if !ac.shared || x.s.fleet == nil {
		return false
	}
	a, ok := x.s.fleet.CacheGet(key)
	return ok && ac.c.Restore(key, cache.Entry{Body: a.Body, ContentType: a.ContentType, Target: a.Target, Stored: a.Stored})
}

// answerCached writes a stored answer, as a stream if one was asked for.
func (x *exchange) answerCached(e cache.Entry, status string) {
	h := x.w.Header()
	h.Set("X-Fusebox-Cache", status)
	h.Set("Age", strconv.Itoa(int(e.Age(x.s.clk.Now()).Seconds())))
	x.s.metrics.Cache(x.alias.Name, status)
	x.writeEntry(e)
}

// writeEntry writes a complete chat.completion answer (from the cache, an
// idempotent record or the degraded answer), replayed as a stream when
// the client asked for one.
func (x *exchange) writeEntry(e cache.Entry) {
	h := x.w.Header()
	h.Set("X-Fusebox-Target", e.Target)
	h.Set("X-Fusebox-Tried", x.tried())
	x.localHeaders()
	if x.stream {
		sse.SetHeaders(h)
		x.w.WriteHeader(http.StatusOK)
		cache.WriteStream(x.w, e, x.fields.IncludeUsage)
		return
	}
	h.Set("Content-Type", e.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(e.Body)))
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(e.Body)
}

// localHeaders says how an answer the gateway gave from its own records
// was served, as every answer does: the attempts the walk made (0 for a
// cache hit or a replay, which send nothing), what this request cost (0
// for them: the answer was paid for when it was first made) and the
// gateway's own time, which is all of the request's. A stream's cost is
// known here, so it is a header, not a trailer.
func (x *exchange) localHeaders() {
	attempts := 0
	if x.walk != nil {
		attempts = x.walk.Attempts
	}
	x.setHeader("X-Fusebox-Attempts", strconv.Itoa(attempts))
	x.setHeader("X-Fusebox-Cost", formatUSD(x.prior+x.cost))
	x.setHeader("X-Fusebox-Overhead-Us", strconv.FormatInt(x.s.since(x.start).Microseconds(), 10))
}

// keepLimit returns the largest answer worth collecting for the cache or an
// idempotent replay; 0 when neither wants it.
func (x *exchange) keepLimit() int64 {
	var limit int64
	if x.cache != nil && requestCacheMode(x.r) != cacheBypass {
		limit = x.cache.c.MaxEntryBytes()
	}
	if x.idemRec != nil {
		limit = max(limit, x.s.idem.maxAnswer())
	}
	return limit
}

// keep stores a complete successful answer: in the alias's cache for the
// next identical request, and for replays of this request's idempotency
// key.
func (x *exchange) keep(body []byte, contentType, target string) {
	if body == nil {
		return
	}
	x.keepCached(body, contentType, target)
	x.keepForKey(body, contentType, target)
}

// keepForKey stores a complete answer, as a chat completion, for replays
// of this request's idempotency key, unless it has one already.
func (x *exchange) keepForKey(body []byte, contentType, target string) {
	if x.idemRec != nil {
		x.idemEnd(append([]byte(nil), body...), contentType, target, false)
	}
}

// keepCached stores a complete answer in the alias's cache, if it caches.
func (x *exchange) keepCached(body []byte, contentType, target string) {
	if x.cache != nil && requestCacheMode(x.r) != cacheBypass {
		e := cache.Entry{Body: body, ContentType: contentType, Target: target}
		x.cache.c.Put(x.cacheKey, e)
		if x.cache.shared && x.s.fleet != nil {
			x.s.fleet.CachePut(x.cacheKey, fleet.CachedAnswer{Body: body, ContentType: contentType, Target: target, Stored: x.s.clk.Now()}, x.cache.keep)
		}
	}
}

// rescue answers a request no target could serve: from the cache (stale),
// else with the alias's degraded answer. It reports false when it has
// neither.
func (x *exchange) rescue() bool {
	if x.cache != nil {
		e, ok := x.cache.c.GetStale(x.cacheKey)
		if !ok && x.fromFleet(x.cache, x.cacheKey) {
			e, ok = x.cache.c.GetStale(x.cacheKey)
		}
		if ok {
			x.answerCached(e, "stale")
			return true
		}
	}
	d, ok := x.st.degraded[x.alias.Name]
	if !ok {
		return false
	}
	x.w.Header().Set("X-Fusebox-Degraded", "true")
	x.s.metrics.Cache(x.alias.Name, "degraded")
	if d.Content == "" {
		x.error(cmp.Or(d.Status, http.StatusServiceUnavailable), "service_unavailable", "degraded", "", d.Message)
		return true
	}
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fusebox-degraded", "object": "chat.completion", "created": x.s.clk.Now().Unix(), "model": x.alias.Name,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": d.Content}}},
		"usage": map[string]int{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
	x.writeEntry(cache.Entry{Body: body, ContentType: "application/json", Target: "fusebox/degraded"})
	return true
}
