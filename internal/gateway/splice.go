package gateway

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A continuation's text is joined to the text already delivered by a
// splice, so that the client never reads the delivered text twice. A
// target asked to go on from a cut answer may instead:
//
//   - start its answer again: its text begins with all that was
//     delivered, which is dropped;
//   - repeat the last words before going on: its text begins with an end
//     of the delivered text (at least overlapMin bytes), which is dropped;
//   - start again in other words: its text begins like the delivered text
//     and then differs. Nothing can join the two, and the stream ends with
//     an error, not a success;
//   - go on as asked: its text is sent as it is, after a space when the
//     seam would join two words (a target continuing a prefill writes the
//     rest of a word itself, and gets none).
//
// Until it can tell which, the splice holds the continuation's text: at
// most the delivered text's length, or overlapWindow bytes.

// The splice's bounds.
const (
	// overlapMin is the least repeat of the delivered text's end that is
	// taken for a repeat, not a coincidence (" the").
	overlapMin = 8
	// overlapWindow is the longest end of the delivered text a
	// continuation is checked for repeating.
	overlapWindow = 256
	// restartMin is the most of the delivered text's start that a fresh
	// continuation may share by chance; sharing more (and then differing)
	// is a restart in other words.
	restartMin = 24
)

// errNoSeam is a continuation that cannot be joined to what was sent.
var errNoSeam = errors.New("the continuation starts the answer again in other words")

// splice joins one continuation to the delivered text. It is not safe for
// concurrent use.
type splice struct {
	said    string
	prefill bool // the target continues the assistant message itself
	held    strings.Builder
	decided bool
}

// feed takes the continuation's next text and returns what to send now:
// "" while it cannot tell yet, then the held text as joined, then text as
// it comes.
func (s *splice) feed(text string) (string, error) {
	if s.decided {
		return text, nil
	}
	s.held.WriteString(text)
	c := s.held.String()
	if s.undecided(c) {
		return "", nil
	}
	return s.decide(c)
}

// end is the continuation's end: what it held, joined, or errNoSeam for
// one that ended while it still repeated the delivered text's start.
func (s *splice) end() (string, error) {
	if s.decided {
		return "", nil
	}
	c := s.held.String()
	if c != "" && strings.HasPrefix(s.said, c) && len(c) >= minRestart(s.said) {
		return "", errNoSeam // started again, and stopped before it got past the cut
	}
	return s.decide(c)
}

// undecided reports whether c, the continuation so far, could still turn
// out to be a restart or a repeat.
func (s *splice) undecided(c string) bool {
	if len(c) < len(s.said) && strings.HasPrefix(s.said, c) {
		return true // perhaps all of it again
	}
	// Perhaps a repeat of the end that has further to go: c is in the
	// end before its last byte.
	tail := s.said[max(0, len(s.said)-overlapWindow):]
	return len(c) < len(tail) && strings.Contains(tail[:len(tail)-1], c)
}

// decide returns c joined to the delivered text.
func (s *splice) decide(c string) (string, error) {
	s.decided = true
	said := s.said
	if strings.HasPrefix(c, said) {
		return c[len(said):], nil // started again: drop what was sent
	}
	for k := min(len(c), overlapWindow, len(said)); k >= overlapMin; k-- {
		if strings.HasSuffix(said, c[:k]) {
			return c[k:], nil // repeated the last words
		}
	}
	if p := commonPrefix(c, said); p >= minRestart(said) && p < len(c) {
		return "", errNoSeam
	}
	if !s.prefill && needsSpace(said, c) {
		return " " + c, nil
	}
	return c, nil
}

// minRestart is how much of said's start a continuation must repeat, and
// then leave, to be a restart in other words.
func minRestart(said string) int {
	return max(4, min(restartMin, len(said)/3+1))
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// needsSpace reports whether said and c would run two words together.
func needsSpace(said, c string) bool {
	last, _ := utf8.DecodeLastRuneInString(said)
	first, _ := utf8.DecodeRuneInString(c)
	if last == utf8.RuneError || first == utf8.RuneError || unicode.IsSpace(last) || unicode.IsSpace(first) {
		return false
	}
	wordEnd := unicode.IsLetter(last) || unicode.IsDigit(last) || strings.ContainsRune(".,;:!?)]}\"'", last)
	return wordEnd && (unicode.IsLetter(first) || unicode.IsDigit(first) || strings.ContainsRune("([{\"'", first))
}
