package sim

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Two Servers with the same seed, given the same requests at the same
// times, answer byte for byte the same; another seed answers otherwise.
func TestSeedDeterminism(t *testing.T) {
	run := func(seed uint64) []string {
		fake := newFake()
		s, err := New(Config{Seed: seed, Clock: fake, Output: Output{Tokens: 8},
			Faults: []Fault{{Kind: ErrorStorm, Fraction: 0.3}, {Kind: StreamError, Fraction: 0.5, AfterChunks: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := range 60 {
			fake.Advance(time.Second)
			path, body := "/v1/chat/completions", chatBody(i%3 == 0)
			if i%5 == 0 {
				path, body = "/v1/embeddings", fmt.Sprintf(`{"model":"e","input":"text %d"}`, i%2)
			}
			rec := serve(s, "POST", path, body)
			out = append(out, fmt.Sprintf("%d %s", rec.Code, rec.Body))
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("call %d differs with the same seed:\n%s\n%s", i, a[i], b[i])
		}
	}
	if strings.Join(a, "\n") == strings.Join(c, "\n") {
		t.Error("seeds 1 and 2 gave the same answers")
	}
	var errs, ok int
	for _, r := range a {
		switch {
		case strings.HasPrefix(r, "503"):
			errs++
		case strings.HasPrefix(r, "200"):
			ok++
		}
	}
	if errs == 0 || ok == 0 {
		t.Errorf("%d errors, %d ok: want a mix to compare", errs, ok)
	}
}

// 64 goroutines hammer one Server; the stats add up.
func TestConcurrentCalls(t *testing.T) {
	s, ts := start(t, Config{Seed: 4, Output: Output{Tokens: 6},
		Faults: []Fault{{Kind: ErrorStorm, Fraction: 0.2}, {Kind: StreamError, Fraction: 0.5}}})
	const workers, each = 64, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if w%4 == 0 && i%5 == 0 { // some over the network, the rest in-process
					resp, err := post(t.Context(), ts, "/v1/chat/completions", chatBody(i%2 == 0))
					if err != nil {
						t.Error(err)
						return
					}
					events(t, resp.Body)
					resp.Body.Close()
					continue
				}
				serve(s, "POST", "/v1/chat/completions", chatBody(i%2 == 0))
				if i%7 == 0 {
					s.Faults()
					s.Stats()
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	ok, errs, streamErrs := st.Outcomes[OutcomeOK], st.Outcomes[OutcomeError], st.Outcomes[OutcomeStreamError]
	if st.Calls != workers*each || st.Finished() != st.Calls || ok+errs+streamErrs != st.Calls {
		t.Errorf("stats = %+v, want %d calls, all finished, ok + errors", st, workers*each)
	}
	// Each call carries 12 prompt tokens; 200s (ok and stream errors) are billed.
	if st.InputTokens != 12*st.Calls || st.BilledInputTokens != 12*(ok+streamErrs) {
		t.Errorf("input %d, billed %d; want %d and %d", st.InputTokens, st.BilledInputTokens, 12*st.Calls, 12*(ok+streamErrs))
	}
	fs := s.Faults()
	if fs[0].Hits != errs || fs[1].Hits != streamErrs {
		t.Errorf("hits %d, %d; want %d, %d", fs[0].Hits, fs[1].Hits, errs, streamErrs)
	}
	if d := st.Sub(st); d.Calls != 0 || d.Finished() != 0 {
		t.Errorf("Sub of itself = %+v", d)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Latency: Latency{Median: -1}}, "sim: latency.median: is -1ns, want 0 or more"},
		{Config{Latency: Latency{TokensPerSecond: -1}}, "sim: latency.tokens_per_second: is -1"},
		{Config{Output: Output{Tokens: -1}}, "sim: output.tokens: is -1, want 0 or more"},
		{Config{Limits: Limits{RPM: -5}}, "sim: limits.rpm: is -5, want 0 or more"},
		{Config{Models: []string{"a", ""}}, "sim: models[1]: is empty"},
	} {
		if _, err := New(tc.c); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
}
