package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// usage is the token count of an answer: OpenAI's fields, and Anthropic's
// for answers from a Messages target passed through as they are (see
// anthropic).
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`

	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CacheReadTokens     int `json:"cache_read_input_tokens"`
	CacheCreationTokens int `json:"cache_creation_input_tokens"`
}

// anthropic returns u with Anthropic's counts in OpenAI's fields: the
// prompt is the input tokens with those read from and written to the
// prompt cache (Anthropic counts them apart), of which the cache reads are
// the cached ones.
func (u usage) anthropic() *usage {
	u.PromptTokens = u.InputTokens + u.CacheReadTokens + u.CacheCreationTokens
	u.CompletionTokens = u.OutputTokens
	u.PromptTokensDetails.CachedTokens = u.CacheReadTokens
	return &u
}

// usageOf finds the "usage" object of an answer or a stream chunk without
// decoding the rest; nil if there is none. The counts are read straight
// from the object's members (aireq.Members); anything unusual (an escaped
// key, a count that is not a plain integer, a cut object) sends the object
// through encoding/json instead, so the two readings agree.
func usageOf(body []byte) *usage { return usageInto(new(usage), body) }

// usageInto is usageOf reading into u, which it returns (nil if there is
// no usage): an exchange reads its answer's usage into its own.
func usageInto(u *usage, body []byte) *usage {
	*u = usage{}
	i := bytes.LastIndex(body, []byte(`"usage"`))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(body[i+len(`"usage"`):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '{' {
		return nil
	}
	// Keys match without regard to case, and a later member wins, as in
	// encoding/json.
	ok := aireq.Members(rest, func(key, v []byte) bool {
		switch {
		case bytes.IndexByte(key, '\\') >= 0:
			return false
		case bytes.EqualFold(key, []byte("prompt_tokens")):
			return count(v, &u.PromptTokens)
		case bytes.EqualFold(key, []byte("completion_tokens")):
			return count(v, &u.CompletionTokens)
		case bytes.EqualFold(key, []byte("input_tokens")):
			return count(v, &u.InputTokens)
		case bytes.EqualFold(key, []byte("output_tokens")):
			return count(v, &u.OutputTokens)
		case bytes.EqualFold(key, []byte("cache_read_input_tokens")):
			return count(v, &u.CacheReadTokens)
		case bytes.EqualFold(key, []byte("cache_creation_input_tokens")):
			return count(v, &u.CacheCreationTokens)
		case bytes.EqualFold(key, []byte("prompt_tokens_details")):
			if v[0] != '{' {
				return string(v) == "null"
			}
			return aireq.Members(v, func(key, v []byte) bool {
				switch {
				case bytes.IndexByte(key, '\\') >= 0:
					return false
				case bytes.EqualFold(key, []byte("cached_tokens")):
					return count(v, &u.PromptTokensDetails.CachedTokens)
				}
				return true
			})
		}
		return true
	})
	if ok {
		return u
	}
	*u = usage{}
	if json.NewDecoder(bytes.NewReader(rest)).Decode(u) != nil {
		return nil
	}
	return u
}

// count sets *n from a JSON value: a plain integer, or null (which leaves
// it as it is, as encoding/json does). Anything else reports false.
func count(v []byte, n *int) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) == 0 || len(v) > 15 {
		return false
	}
	x := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		x = x*10 + int(c-'0')
	}
	*n = x
	return true
}

// account prices an answer's usage at its target's price for the alias,
// counts tokens and cost per target and client, and, while headers can
// still be set, says the cost in x-fusebox-cost (USD).
//
// An answer whose usage comes as running totals (an Anthropic stream's
// message_delta events) may be accounted more than once: each time, only
// what is new since the last is added to the budget and the metrics.
func (x *exchange) account(a *router.Attempt, u *usage) {
	if u == nil {
		return
	}
	cost := x.alias.Price(a.Target).Cost(u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens)
	dCost, dIn, dOut := cost-x.cost, u.PromptTokens-x.tokensIn, u.CompletionTokens-x.tokensOut
	x.cost, x.tokensIn, x.tokensOut, x.priced, x.served = cost, u.PromptTokens, u.CompletionTokens, true, a
	// The client's budget is settled once, at the end (settleBudget).
	x.setHeader("X-Fusebox-Cost", formatUSD(x.prior+cost))
	x.s.metrics.Usage(a.Target, x.client, dIn, dOut, dCost)
	x.trace.priced(a, u, cost)
}

// settle closes the accounting of one answer of the exchange before
// another follows it (a continuation): what it cost stays counted, and the
// next answer's usage is its own.
func (x *exchange) settle() {
	x.prior += x.cost
	x.priorIn, x.priorOut = x.priorIn+x.tokensIn, x.priorOut+x.tokensOut
	x.cost, x.tokensIn, x.tokensOut = 0, 0, 0
}

// priceBroken prices a stream that broke before its usage came: the
// request's estimated input and the output delivered, at a's price, so
// that a continued answer costs both of its parts.
func (x *exchange) priceBroken(a *router.Attempt) {
	if x.priced && x.served == a {
		return // its usage came before it broke
	}
	x.account(a, &usage{PromptTokens: x.bodyLen / 4, CompletionTokens: (x.cont.text.Len() + 3) / 4})
}

// accountLost prices the hedged attempts that lost their race: they were
// sent and canceled, their usage unknown, so each is charged the request's
// estimated input at its target's price (providers bill the prompt of a
// canceled request).
func (x *exchange) accountLost() {
	if x.walk == nil || len(x.walk.Lost) == 0 {
		return
	}
	tokens := x.bodyLen / 4 // the estimate of aireq.Fields.Tokens, less the output
	for _, t := range x.walk.Lost {
		cost := x.alias.Price(t).Cost(tokens, 0, 0)
		x.prior += cost
		x.s.metrics.Usage(t, x.client, tokens, 0, cost)
	}
}

// formatUSD writes a cost in dollars with up to ten decimals, no exponent.
func formatUSD(v float64) string {
	s := strings.TrimRight(strconv.FormatFloat(v, 'f', 10, 64), "0")
	return strings.TrimSuffix(s, ".")
}
