package cache

import (
	"slices"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"pgregory.net/rapid"
)

// TestLRUModel checks the cache against a plain model: a slice of keys,
// most recent first, trimmed from the back to the entry and byte bounds.
func TestLRUModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxEntries := rapid.IntRange(1, 6).Draw(t, "maxEntries")
		per := int64(32 + EntryOverhead)
		maxBytes := per*int64(rapid.IntRange(1, 6).Draw(t, "maxBytesIn")) + 40
		c, err := New(Config{MaxEntries: maxEntries, MaxBytes: maxBytes, MaxEntryBytes: maxBytes, Clock: clocktest.New(time.Time{})})
		if err != nil {
			t.Fatal(err)
		}
		type m struct {
			k    int
			size int64
		}
		var model []m // most recent first
		var bytes int64
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			k := rapid.IntRange(0, 8).Draw(t, "key")
			at := slices.IndexFunc(model, func(e m) bool { return e.k == k })
			if rapid.Bool().Draw(t, "put") {
				n := rapid.IntRange(0, 40).Draw(t, "len")
				c.Put(keyN(k), Entry{Body: make([]byte, n)})
				if at >= 0 {
					bytes -= model[at].size
					model = slices.Delete(model, at, at+1)
				}
				model = slices.Insert(model, 0, m{k, per + int64(n)})
				bytes += per + int64(n)
				for len(model) > maxEntries || bytes > maxBytes {
					bytes -= model[len(model)-1].size
					model = model[:len(model)-1]
				}
			} else {
				_, st := c.Get(keyN(k))
				if (st == Hit) != (at >= 0) {
					t.Fatalf("Get(%d) = %v, model has it at %d", k, st, at)
				}
				if at >= 0 {
					e := model[at]
					model = slices.Insert(slices.Delete(model, at, at+1), 0, e)
				}
			}
			if s := c.Stats(); s.Entries != len(model) || s.Bytes != bytes {
				t.Fatalf("stats %+v, model %d entries %d bytes", s, len(model), bytes)
			}
		}
	})
}
