package cache

import (
	"io"
	"testing"
)

func BenchmarkKey(b *testing.B) {
	body := []byte(typical)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Key("smart", ScopeClient, "web", body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKeyParallel(b *testing.B) {
	body := []byte(typical)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			Key("smart", ScopeClient, "web", body)
		}
	})
}

func BenchmarkGetHit(b *testing.B) {
	c, _ := newCache(b, Config{})
	k := keyN(1)
	c.Put(k, Entry{Body: []byte(liveTextWant)})
	b.ReportAllocs()
	for b.Loop() {
		if _, st := c.Get(k); st != Hit {
			b.Fatal(st)
		}
	}
}

func BenchmarkGetHitParallel(b *testing.B) {
	c, _ := newCache(b, Config{})
	keys := make([]KeyHash, 1000)
	for i := range keys {
		keys[i] = keyN(i)
		c.Put(keys[i], Entry{Body: []byte(liveTextWant)})
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, st := c.Get(keys[i%len(keys)]); st != Hit {
				b.Fatal(st)
			}
			i++
		}
	})
}

func BenchmarkPut(b *testing.B) {
	c, _ := newCache(b, Config{MaxEntries: 1000})
	body := []byte(liveTextWant)
	keys := make([]KeyHash, 2000)
	for i := range keys {
		keys[i] = keyN(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Put(keys[i%len(keys)], Entry{Body: body})
		i++
	}
}

func BenchmarkWriteStream(b *testing.B) {
	e := longEntry()
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteStream(io.Discard, e, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAssemble(b *testing.B) {
	events, _ := Replay(longEntry(), true)
	data := make([][]byte, len(events))
	for i, ev := range events {
		data[i] = ev[len("data: ") : len(ev)-2]
	}
	b.ReportAllocs()
	for b.Loop() {
		a := NewAssembler(0)
		for _, d := range data {
			a.Add(d)
		}
		if _, err := a.Result(); err != nil {
			b.Fatal(err)
		}
	}
}
