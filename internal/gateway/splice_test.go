package gateway

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// join feeds c to a splice of said in the pieces given and returns the
// text the client reads, or the splice's error.
func join(said string, prefill bool, pieces []string) (string, error) {
	s := &splice{said: said, prefill: prefill}
	var out strings.Builder
	out.WriteString(said)
	for _, p := range pieces {
		t, err := s.feed(p)
		if err != nil {
			return "", err
		}
		out.WriteString(t)
	}
	t, err := s.end()
	if err != nil {
		return "", err
	}
	out.WriteString(t)
	return out.String(), nil
}

func TestSpliceCases(t *testing.T) {
	const said = "The quick brown fox jumps over the lazy"
	tests := []struct {
		name    string
		prefill bool
		pieces  []string
		want    string
		err     bool
	}{
		{"fresh, a word after a word gets a space", false, []string{"dog", " and runs."}, said + " dog and runs.", false},
		{"fresh, after a prefill the target writes the seam", true, []string{" dog."}, said + " dog.", false},
		{"a prefill may finish a word", true, []string{"er dog."}, said + "er dog.", false},
		{"restart: all of it again, then on", false, []string{"The quick brown ", "fox jumps over the lazy", " dog."}, said + " dog.", false},
		{"restart in one piece", false, []string{said + " dog."}, said + " dog.", false},
		{"repeat of the last words", false, []string{"over the lazy dog."}, said + " dog.", false},
		{"repeat of the last words, in pieces", false, []string{"over", " the la", "zy dog."}, said + " dog.", false},
		{"restart in other words", false, []string{"The quick brown fox leaps over a dog."}, "", true},
		{"restart that stops before the cut", false, []string{"The quick brown fox"}, "", true},
		{"a short shared start is chance", false, []string{"The end."}, said + " The end.", false},
		{"punctuation needs no space", false, []string{", so it goes."}, said + ", so it goes.", false},
		{"an empty continuation adds nothing", false, nil, said, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := join(said, tc.prefill, tc.pieces)
			if tc.err {
				if !errors.Is(err, errNoSeam) {
					t.Fatalf("got %q, %v; want errNoSeam", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v\nwant %q", got, err, tc.want)
			}
		})
	}
}

// words draws text from a vocabulary: delivered text and the rest of an
// answer come from disjoint ones, so only the splice can put the
// delivered text in the answer twice.
func words(t *rapid.T, label string, vocab []string, min, max int) string {
	n := rapid.IntRange(min, max).Draw(t, label+"-n")
	w := make([]string, n)
	for i := range w {
		w[i] = rapid.SampledFrom(vocab).Draw(t, label)
	}
	return strings.Join(w, " ")
}

// pieces cuts s at random places, as a stream's chunks would.
func pieces(t *rapid.T, s string) []string {
	var out []string
	for s != "" {
		n := rapid.IntRange(1, max(1, len(s))).Draw(t, "piece")
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// A continued answer never holds the delivered text twice, whatever the
// continuation does: restart, repeat the end, or go on. A restart and a
// repeat lose nothing of what follows them.
func TestSpliceNeverSendsTheDeliveredTextTwice(t *testing.T) {
	saidWords := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	restWords := []string{"one", "two", "three", "four", "five", "six", "seven"}
	rapid.Check(t, func(t *rapid.T) {
		said := words(t, "said", saidWords, 4, 40)
		rest := " " + words(t, "rest", restWords, 1, 20)
		kind := rapid.SampledFrom([]string{"restart", "repeat", "fresh"}).Draw(t, "kind")
		var c string
		switch kind {
		case "restart":
			c = said + rest
		case "repeat":
			k := rapid.IntRange(overlapMin, min(len(said), overlapWindow)).Draw(t, "overlap")
			c = said[len(said)-k:] + rest
		case "fresh":
			c = rest
		}
		got, err := join(said, rapid.Bool().Draw(t, "prefill"), pieces(t, c))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if n := strings.Count(got, said); n != 1 {
			t.Fatalf("%s: the delivered text is in the answer %d times: %q", kind, n, got)
		}
		if got != said+rest {
			t.Fatalf("%s: got %q, want %q", kind, got, said+rest)
		}
	})
}
