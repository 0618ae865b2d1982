package aierr

import (
	"bytes"
	"testing"
)

func TestLowerText(t *testing.T) {
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	all = append(all, "Hello WORLD, Per Day @[`{ ÀÉ"...)
	for n := 0; n <= len(all); n++ {
		var lt lowerText
		lt.set(all[:n])
		want := make([]byte, n)
		for i, c := range all[:n] {
			want[i] = lower(c)
		}
		if !bytes.Equal(lt.buf[:lt.n], want) {
			t.Fatalf("set(%q) = %q; want %q", all[:n], lt.buf[:lt.n], want)
		}
	}
}

func TestIndexFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   int
	}{
		{"Hello", "hello", 0},
		{"say <TITLE>x", "<title>", 4},
		{"abc", "abcd", -1},
		{"", "", 0},
		{"aaa", "", 0},
	}
	for _, tt := range tests {
		if got := indexFold([]byte(tt.s), tt.sub); got != tt.want {
			t.Errorf("indexFold(%q, %q) = %d; want %d", tt.s, tt.sub, got, tt.want)
		}
	}
}

func TestPhraseGates(t *testing.T) {
	if g := string(dailyPhrases.gate); g != "da" {
		t.Errorf("daily gate = %q; want %q", g, "da")
	}
	for _, ps := range []phraseSet{contextLengthPhrases, contentFilterPhrases, capacityPhrases, queuePhrases, quotaPhrases, dailyPhrases} {
		for _, p := range ps.list {
			if !bytes.Contains(p, ps.gate) {
				t.Errorf("phrase %q lacks gate %q", p, ps.gate)
			}
		}
	}
}
