// Package cache is the gateway's response cache: exact-match answers to
// chat completion requests, kept in memory for a TTL, bounded by entries
// and bytes, and servable stale when no target can answer.
//
// The package has four parts, one file each:
//
//   - key.go: Key hashes the normalised request (alias, the body's fields
//     that determine the answer, and the client unless the scope is
//     ScopeGlobal), so that key order, whitespace, escaping and the stream
//     flag do not split entries (strings that are not valid UTF-8, or have
//     a lone surrogate escape, are kept exactly as written).
//   - cache.go (with lru.go and stats.go): Cache, an LRU map from KeyHash
//     to Entry with Get (fresh entries only), GetStale (for
//     stale-if-error), Put and Stats.
//   - assemble.go: Assembler joins the chunks of a streamed answer into the
//     chat.completion a non-streamed request would have got, so streamed
//     answers can be stored too.
//   - replay.go: Replay and WriteStream turn a stored chat.completion back
//     into server-sent events shaped like a live stream.
//
// completion.go holds the field-by-field form of a chat completion that
// the last two share.
//
// How the gateway uses it, for a chat completion to an alias with caching on:
//
//	key, err := cache.Key(alias, scope, client, body)
//	// err: not a JSON object; the gateway has already answered 400.
//	if e, st := c.Get(key); st == cache.Hit {
//		// stream: sse.SetHeaders, then cache.WriteStream(w, e, f.IncludeUsage)
//		// else:   Content-Type e.ContentType, write e.Body
//	}
//	// walk the targets; on a non-streamed 200, c.Put(key, cache.Entry{...});
//	// on a streamed answer, feed each event's data to an Assembler
//	// (cache.NewAssembler(c.MaxEntryBytes())) and, after [DONE] only,
//	// Put its Result.
//	// When the walk finds no target: c.GetStale(key), served marked stale.
//
// Only complete, successful answers may be stored: Put trusts its caller.
// Everything here is the standard library; time comes from package clock.
package cache
