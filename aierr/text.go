package aierr

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// Phrases searched for in error messages, lower case. Messages are the only
// clue some servers give (vLLM, TGI, Ollama, proxies).
var (
	contextLengthPhrases = phrases(
		"context length", "context_length", "context window", "maximum context",
		"prompt is too long", "too many tokens", "input is too long",
		"input token count", "exceeds the maximum number of tokens",
		"maximum input length", "max_new_tokens` must be", "reduce the length of the messages",
		"too many input tokens", // Bedrock ValidationException
		"exceed context limit",  // Anthropic, also through Bedrock and Vertex AI
	)
	contentFilterPhrases = phrases(
		"content management policy", "content filter", "content_filter",
		"flagged as potentially violating", "safety system", "blocked by safety",
	)
	capacityPhrases = phrases(
		"at capacity", "capacity exceeded", "no capacity", "insufficient capacity",
		"over capacity", "out of capacity",
	)
	queuePhrases = phrases("queue is full", "queue full")
	quotaPhrases = phrases(
		"exceeded your current quota", "insufficient balance", "insufficient credits",
		"insufficient funds", "spend limit", "credit balance is too low",
		"enable billing", "billing to be enabled", // Google: billing off for the project
	)
	dailyPhrases = phrases("per day", "perday", "per_day", "daily")
	// The model is not there on the target (NotDeployed), in the words of
	// answers whose code says less: Azure's 404 without a code, Bedrock's
	// ValidationException and AccessDeniedException for a model the
	// account or region lacks, Vertex AI's NOT_FOUND for a publisher model.
	notDeployedPhrases = phrases(
		"deployment for this resource does not exist",
		"with on-demand throughput",
		"model identifier is invalid",
		"could not resolve the foundation model",
		"have access to the model with the specified model id",
		"was not found or your project does not have access to it",
	)
	// Google's FAILED_PRECONDITION for a region it does not serve.
	locationPhrases = phrases("location is not supported")
)

// phraseSet is a list of lower-case phrases, kept as byte slices so that
// bytes.Index can search for them without a conversion per call. gate, when
// set, is a substring every phrase contains: a text without it is rejected
// with one search instead of one per phrase.
type phraseSet struct {
	gate []byte
	list [][]byte
}

func phrases(list ...string) phraseSet {
	ps := phraseSet{list: make([][]byte, len(list))}
	for i, p := range list {
		ps.list[i] = []byte(p)
	}
	// The longest substring of the first phrase that all phrases contain.
	first := list[0]
	for n := len(first); n >= 2; n-- {
		for i := 0; i+n <= len(first); i++ {
			gate, all := first[i:i+n], true
			for _, p := range list[1:] {
				all = all && strings.Contains(p, gate)
			}
			if all {
				ps.gate = []byte(gate)
				return ps
			}
		}
	}
	return ps
}

// lowerText is the start of a message, lower-cased once so that each phrase
// search is a plain (vectorized) bytes.Index.
type lowerText struct {
	buf [maxMessageScan]byte
	n   int
}

func (t *lowerText) set(msg []byte) {
	t.n = copy(t.buf[:], msg)
	b := t.buf[:t.n]
	// Eight bytes at a time: set 0x20 in every byte that is 'A'..'Z'.
	const ones = 0x0101010101010101
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		h := x & (0x7f * ones)
		ge := h + (0x80-'A')*ones // high bit set where byte >= 'A'
		gt := h + (0x7f-'Z')*ones // high bit set where byte > 'Z'
		upper := (ge ^ gt) &^ x & (0x80 * ones)
		binary.LittleEndian.PutUint64(b, x|upper>>2)
		b = b[8:]
	}
	for i, c := range b {
		b[i] = lower(c)
	}
}

// has reports whether the text contains one of the phrases.
func (t *lowerText) has(ps phraseSet) bool {
	s := t.buf[:t.n]
	if ps.gate != nil && bytes.Index(s, ps.gate) < 0 {
		return false
	}
	for _, p := range ps.list {
		if bytes.Index(s, p) >= 0 {
			return true
		}
	}
	return false
}

// indexFold returns the index of the lower-case ASCII sub in s, ignoring
// ASCII case, or -1.
func indexFold(s []byte, sub string) int {
	if len(sub) == 0 {
		return 0
	}
	first := sub[0]
	for i := 0; i+len(sub) <= len(s); i++ {
		if lower(s[i]) != first {
			continue
		}
		j := 1
		for j < len(sub) && lower(s[i+j]) == sub[j] {
			j++
		}
		if j == len(sub) {
			return i
		}
	}
	return -1
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
