package fleet

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/redis/go-redis/v9"
)

// Each owner's (client key's) stored responses live together, in one
// slot of a Redis Cluster, under the owner's hash tag
// {prefix}{resp:<owner hash>}:
//
//	…}:<id>  the response, as JSON, expiring after the store's TTL
//	…}:i     a sorted set of the owner's ids, by when each was stored
//	…}:s     a hash of their sizes (bytes of JSON) and _total, their sum
//
// so that one script, run where the owner's slot is, stores a response,
// counts it and evicts the owner's oldest past its bounds, atomically
// however many replicas store at once, and never touches another owner's
// keys. The owner is hashed (SHA-256, its first 16 bytes in hex): a key
// name from the configuration never spells a brace, a colon or another
// owner's tag in a key.

// ownerTag returns the start of every key of owner's responses.
func (s *responseStore) ownerTag(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return s.f.o.Prefix + "{resp:" + hex.EncodeToString(sum[:16]) + "}:"
}

// ownerKeys are the keys of one owner's index and sizes, and of one of
// its responses: the KEYS of the scripts below.
func (s *responseStore) ownerKeys(owner, id string) (tag string, keys []string) {
	tag = s.ownerTag(owner)
	return tag, []string{tag + "i", tag + "s", tag + id}
}

// dropEntry is the scripts' drop(m): m leaves the index, and its bytes
// the total. KEYS[1] is the index, KEYS[2] the sizes.
const dropEntry = `
local function drop(m)
  local b = tonumber(redis.call('HGET', KEYS[2], m) or '0')
  if b ~= 0 then redis.call('HINCRBY', KEYS[2], '_total', -b) end
  redis.call('HDEL', KEYS[2], m)
  redis.call('ZREM', KEYS[1], m)
end
`

// putScript: KEYS index, sizes, the response's key; ARGV id, the JSON,
// now (unix ms), ttl (ms), max entries, max bytes, the owner's tag.
// Index entries whose response expired are dropped from the old end; the
// response is stored (replacing one of its id), counted, and the owner's
// oldest other responses are deleted until the owner is within both
// bounds (the caller checked that the response alone is). The keys it
// evicts are not in KEYS (their ids are read from the index), but they
// carry the owner's tag, so they are in the slot of KEYS, as a Cluster
// requires. Returns the responses evicted; an entry whose response had
// expired meanwhile is dropped without counting.
var putScript = redis.NewScript(dropEntry + `
local id, tag = ARGV[1], ARGV[7]
local size = string.len(ARGV[2])
local maxn, maxb = tonumber(ARGV[5]), tonumber(ARGV[6])
while true do
  local m = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not m or redis.call('EXISTS', tag .. m) == 1 then break end
  drop(m)
end
if redis.call('HEXISTS', KEYS[2], id) == 1 then drop(id) end
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[4])
redis.call('ZADD', KEYS[1], ARGV[3], id)
redis.call('HSET', KEYS[2], id, size)
redis.call('HINCRBY', KEYS[2], '_total', size)
local gone = 0
while true do
  local n = redis.call('ZCARD', KEYS[1])
  local b = tonumber(redis.call('HGET', KEYS[2], '_total'))
  if n <= maxn and b <= maxb then break end
  local olds = redis.call('ZRANGE', KEYS[1], 0, 1)
  local m = olds[1]
  if m == id then m = olds[2] end
  if not m then break end
  drop(m)
  gone = gone + redis.call('DEL', tag .. m)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return gone
`)

// deleteScript: KEYS index, sizes, the response's key; ARGV id. Deletes
// the response and its entry; returns 1 if the response was there.
var deleteScript = redis.NewScript(dropEntry + `
local n = redis.call('DEL', KEYS[3])
drop(ARGV[1])
return n
`)
