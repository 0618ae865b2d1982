package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Scope says who may share a cached answer.
type Scope uint8

const (
	// ScopeClient keys answers by client as well, so one client key never
	// receives an answer another client's request paid for. It is the
	// zero value and the default.
	ScopeClient Scope = iota
	// ScopeGlobal shares answers between every client of an alias.
	ScopeGlobal
)

// String returns "client" or "global".
func (s Scope) String() string {
	switch s {
	case ScopeClient:
		return "client"
	case ScopeGlobal:
		return "global"
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// ParseScope reads "client" (or "") and "global", as a config file spells
// them.
func ParseScope(s string) (Scope, error) {
	switch s {
	case "", "client":
		return ScopeClient, nil
	case "global":
		return ScopeGlobal, nil
	}
	return 0, errors.New(`cache: unknown scope "` + s + `" (want client or global)`)
}

// KeyHash identifies a cached answer: the SHA-256 of the alias, the scope,
// the client (for ScopeClient) and the normalised request body.
type KeyHash [sha256.Size]byte

// String returns the hash in lower-case hex.
func (k KeyHash) String() string { return hex.EncodeToString(k[:]) }

// ErrInvalidBody is returned by Key for a body that is not a JSON object.
var ErrInvalidBody = errors.New("cache: the request body is not a JSON object")

// ignored lists the top-level request fields that do not change the answer
// and so are left out of the key. Every other field is kept, including
// fields this list does not know: a field wrongly kept costs a cache miss, a
// field wrongly dropped serves a wrong answer.
var ignored = map[string]bool{
	"model":             true, // replaced by the alias, which Key hashes itself
	"stream":            true, // how the answer is delivered, not what it is
	"stream_options":    true, // include_usage only adds a usage event; Replay takes it as a flag
	"user":              true, // an end-user ID for abuse monitoring
	"safety_identifier": true, // the newer name for user
	"prompt_cache_key":  true, // a hint for the provider's prompt cache
	"metadata":          true, // tags for stored completions
	"store":             true, // whether the provider keeps the completion
	"service_tier":      true, // the provider's processing priority and price, not the content
}

// keyVersion starts the hashed text, so a change to the normalisation can
// be made never to collide with entries keyed the old way.
const keyVersion = "fusebox-cache-key-v2\x00" // v2: invalid strings kept exactly

// Key returns the cache key of an OpenAI chat completion request body sent
// to alias by client.
//
// The body is normalised first: top-level fields that do not change the
// answer are dropped (stream, stream_options, user, safety_identifier,
// prompt_cache_key, metadata, store, service_tier, and model, which the
// alias stands for); everything else — messages, tools, tool_choice,
// parallel_tool_calls, response_format, temperature, top_p, max_tokens,
// max_completion_tokens, stop, seed, n, penalties, logit_bias, logprobs,
// reasoning_effort and any field Key does not know — is kept, at every
// depth with object keys sorted (the last of duplicate keys wins, as in
// encoding/json), whitespace removed, strings re-escaped minimally and
// numbers kept as written (1 and 1.0 are different keys). So two bodies
// that differ only in key order, whitespace, escaping or streaming share a
// key.
//
// A string (key or value) that is not valid UTF-8 or has a lone surrogate
// escape ("\ud800") is kept exactly as written, marked so that it never
// matches a valid string: decoding would turn every such byte or escape
// into U+FFFD, and prompts that differ only there would share a key while
// an upstream may read them differently. Only valid strings are
// normalised: "é" and "\u00e9" share a key, "\ud800" and "\ud801" do not.
//
// client is part of the key only when scope is ScopeClient. Key returns
// ErrInvalidBody when body is not a JSON object. It is safe for
// concurrent use.
func Key(alias string, scope Scope, client string, body []byte) (KeyHash, error) {
	i := skipSpace(body, 0)
	if i == len(body) || body[i] != '{' || !json.Valid(body) {
		return KeyHash{}, ErrInvalidBody
	}
	c := canonPool.Get().(*canon)
	defer c.release()
	c.buf = append(c.buf, keyVersion...)
	c.buf = appendLenPrefixed(c.buf, alias)
	c.buf = append(c.buf, byte(scope))
	if scope == ScopeClient {
		c.buf = appendLenPrefixed(c.buf, client)
	}
	c.object(body, i, true)
	return sha256.Sum256(c.buf), nil
}

func appendLenPrefixed(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// canon writes the canonical form of JSON text that json.Valid accepted.
type canon struct {
	buf     []byte
	members []member // a stack of the objects being written
}

// member is an object member: its canonical key (without quotes) and the
// span of its value in the source. A raw key is one that is not a valid
// string, kept as written (still escaped); raw keys sort after the others
// and never equal one.
type member struct {
	key        []byte
	raw        bool
	start, end int
}

// compare orders members by kind, then key.
func (m member) compare(o member) int {
	if m.raw != o.raw {
		if m.raw {
			return 1
		}
		return -1
	}
	return bytes.Compare(m.key, o.key)
}

var canonPool = sync.Pool{New: func() any { return &canon{buf: make([]byte, 0, 4096)} }}

func (c *canon) release() {
	if cap(c.buf) > 1<<20 {
		return // let an outsized buffer go
	}
	clear(c.members[:cap(c.members)]) // drop references into the body
	c.buf, c.members = c.buf[:0], c.members[:0]
	canonPool.Put(c)
}

// value writes the value that starts at b[i] (no leading space).
func (c *canon) value(b []byte, i int) {
	switch b[i] {
	case '{':
		c.object(b, i, false)
	case '[':
		c.array(b, i)
	case '"':
		end := skipString(b, i)
		c.buf = appendCanonString(c.buf, b[i:end])
	default: // number or literal: as written
		c.buf = append(c.buf, b[i:skipScalar(b, i)]...)
	}
}

// object writes the object at b[i] with its members sorted by key; at the
// top level it leaves out the ignored fields.
func (c *canon) object(b []byte, i int, top bool) {
	base := len(c.members)
	i = skipSpace(b, i+1)
	for b[i] != '}' {
		kend := skipString(b, i)
		key := b[i+1 : kend-1]
		raw := !exactString(key)
		if !raw && bytes.IndexByte(key, '\\') >= 0 {
			key = unescape(b[i:kend])
		}
		vstart := skipSpace(b, skipSpace(b, kend)+1) // past the colon
		vend := skipValue(b, vstart)
		if raw || !top || !ignored[string(key)] {
			c.members = append(c.members, member{key, raw, vstart, vend})
		}
		i = skipSpace(b, vend)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	ms := c.members[base:]
	slices.SortStableFunc(ms, member.compare)
	c.buf = append(c.buf, '{')
	first := true
	for k := base; k < len(c.members); k++ {
		m := c.members[k]
		if k+1 < len(c.members) && m.compare(c.members[k+1]) == 0 {
			continue // a later duplicate wins
		}
		if !first {
			c.buf = append(c.buf, ',')
		}
		first = false
		if m.raw {
			c.buf = appendRaw(c.buf, m.key)
		} else {
			c.buf = appendString(c.buf, m.key)
		}
		c.buf = append(c.buf, ':')
		c.value(b, m.start) // may grow c.members past len; re-read by index
	}
	c.buf = append(c.buf, '}')
	c.members = c.members[:base]
}

func (c *canon) array(b []byte, i int) {
	c.buf = append(c.buf, '[')
	i = skipSpace(b, i+1)
	for first := true; b[i] != ']'; first = false {
		if !first {
			c.buf = append(c.buf, ',')
		}
		c.value(b, i)
		i = skipSpace(b, skipValue(b, i))
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	c.buf = append(c.buf, ']')
}

// appendCanonString appends the JSON string literal raw (quotes included)
// in canonical form.
func appendCanonString(dst, raw []byte) []byte {
	inner := raw[1 : len(raw)-1]
	switch {
	case !exactString(inner):
		return appendRaw(dst, inner)
	case bytes.IndexByte(inner, '\\') < 0:
		// Valid JSON holds no quote or control byte unescaped, so the
		// literal is already canonical.
		return append(dst, raw...)
	}
	return appendString(dst, unescape(raw))
}

// rawTag starts a string kept as written. Canonical text has no other NUL
// byte: strings write control bytes escaped, and valid JSON has none
// outside strings.
const rawTag = 0

// appendRaw appends the string content s (still escaped) exactly, tagged
// and length-prefixed so it cannot run into what follows.
func appendRaw(dst, s []byte) []byte {
	dst = append(dst, rawTag)
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// exactString reports whether the content s of a string literal that
// json.Valid accepted decodes without repair: it is valid UTF-8 and every
// surrogate escape is half of a pair. encoding/json reads anything else as
// U+FFFD, losing the difference between "\ud800" and "\ud801".
func exactString(s []byte) bool {
	if bytes.IndexByte(s, '\\') < 0 {
		return utf8.Valid(s)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size - 1
		case c == '\\':
			i++
			if s[i] != 'u' {
				continue
			}
			r := hex4(s[i+1:])
			i += 4
			if !utf16.IsSurrogate(r) {
				continue
			}
			if r >= 0xdc00 || i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return false
			}
			if lo := hex4(s[i+3:]); lo < 0xdc00 || lo > 0xdfff {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads four hex digits that json.Valid accepted.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unescape decodes a JSON string literal that json.Valid accepted.
func unescape(raw []byte) []byte {
	var s string
	json.Unmarshal(raw, &s) // cannot fail on a valid literal
	return []byte(s)
}

// appendString appends s as a JSON string literal, escaping only the quote,
// the backslash and control bytes.
func appendString[T []byte | string](dst []byte, s T) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 0x20 && ch != '"' && ch != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch ch {
		case '"', '\\':
			dst = append(dst, '\\', ch)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// The skip functions find the end of a token in JSON text that json.Valid
// accepted; i is at the token's first byte.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

func skipScalar(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipValue returns the end of the value at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	return skipScalar(b, i)
}
