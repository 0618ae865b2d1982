package fleet

import (
	"context"
	"testing"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// The request path's scripts are in Redis before the first request needs
// them, and again after Redis is back without them (a restart empties its
// script cache).
func TestRequestScriptsAreLoaded(t *testing.T) {
	srv := redistest.Start(t)
	r := fleetOf(t, srv, clocktest.New(start), 1, breaker.Config{})[0]
	loaded := func() bool {
		var shas []string
		for _, s := range requestScripts {
			shas = append(shas, s.Hash())
		}
		ok, err := r.f.rdb.ScriptExists(context.Background(), shas...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range ok {
			if !b {
				return false
			}
		}
		return true
	}
	waitFor(t, "the scripts loaded at the start", loaded)
	if err := r.f.rdb.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if loaded() {
		t.Fatal("SCRIPT FLUSH left the scripts")
	}
	r.f.up.Store(false) // Redis was lost, and answers again:
	r.f.result("test", nil)
	waitFor(t, "the scripts loaded again once Redis is back", loaded)
}
