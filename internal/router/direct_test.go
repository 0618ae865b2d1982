package router

import (
	"strconv"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// A client naming provider/<anything> cannot grow the router without end:
// past MaxDirect, the least recently used direct target goes, unless a
// configured alias lists it or an attempt is using it.
func TestDirectTargetsAreBounded(t *testing.T) {
	clk := clocktest.New(time.Time{})
	var removed []string
	s := Spec{Clock: clk, MaxDirect: 3, OnRemove: func(t *Target) { removed = append(removed, t.Name) },
		Providers: []ProviderSpec{{Name: "p", Upstream: newStub(status(200)), Price: Price{Input: 1}}},
		Aliases:   []AliasSpec{{Name: "smart", Targets: []TargetSpec{{Provider: "p", Model: "listed"}}}}}
	r, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(m string) *Alias {
		a, ok := r.Lookup(m)
		if !ok {
			t.Fatalf("no alias for %s", m)
		}
		clk.Advance(time.Second)
		return a
	}
	lookup("p/listed") // a configured alias's target: never removed
	busy := lookup("p/busy")
	busy.Targets[0].inFlight.Add(1) // an attempt under way
	lookup("p/a")
	lookup("p/listed") // used again: the newest
	for i := range 50 {
		lookup("p/m" + strconv.Itoa(i))
	}
	if n := len(r.Targets()); n != 3 {
		t.Errorf("%d targets; want 3: the listed one, the busy one and the newest", n)
	}
	for _, name := range []string{"p/listed", "p/busy"} {
		if _, ok := r.aliases[name]; !ok {
			t.Errorf("%s was removed", name)
		}
	}
	if len(removed) != 50 || removed[0] != "p/a" || removed[49] != "p/m48" {
		t.Errorf("removed %d targets, first %v; want 50, the least recently used (p/a) first", len(removed), removed[:1])
	}
	if a := lookup("p/fresh"); a.Price(a.Targets[0]) != (Price{Input: 1}) {
		t.Errorf("direct target priced %+v; want the provider's price", a.Price(a.Targets[0]))
	}
	busy.Targets[0].inFlight.Add(-1)
}
