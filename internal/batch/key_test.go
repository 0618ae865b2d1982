package batch

import (
	"math/rand/v2"
	"testing"
)

// The key set agrees with a map, through growth, for random keys and
// flags.
func TestKeySetAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s keySet
	want := map[lineKey]uint64{}
	keys := make([]lineKey, 0, 5000)
	for i := range 20000 {
		var k lineKey
		if i%3 == 0 && len(keys) > 0 {
			k = keys[rng.IntN(len(keys))]
		} else {
			k = lineKey(rng.Uint64() &^ keyFlags)
			keys = append(keys, k)
		}
		f := keyDone
		if rng.IntN(2) == 0 {
			f = keySeen
		}
		s.add(k, f)
		want[k] |= f
	}
	for k, f := range want {
		if got := s.get(k); got != f {
			t.Fatalf("key %x: flags %b; want %b", k, got, f)
		}
	}
	if s.n != len(want) || s.get(lineKey(12345<<2)) != 0 {
		t.Fatalf("%d keys; want %d", s.n, len(want))
	}
}

func BenchmarkKeySet(b *testing.B) {
	b.ReportAllocs()
	var s keySet
	for i := range b.N {
		k := idKey("q" + itoa(i))
		if s.get(k)&keySeen == 0 {
			s.add(k, keySeen)
		}
	}
}
