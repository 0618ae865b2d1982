package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// usage is the token count of an answer, in OpenAI's shape (Anthropic
// answers arrive translated).
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// usageOf finds the "usage" object of an answer or a stream chunk without
// decoding the rest; nil if there is none.
func usageOf(body []byte) *usage {
	i := bytes.LastIndex(body, []byte(`"usage"`))
	if i < 0 {
		return nil
	}
	j := bytes.IndexByte(body[i:], '{')
	if j < 0 {
		return nil
	}
	var u usage
	if json.NewDecoder(bytes.NewReader(body[i+j:])).Decode(&u) != nil {
		return nil
	}
	return &u
}

// account prices an answer's usage at its target's price for the alias,
// counts tokens and cost per target and client, and, while headers can
// still be set, says the cost in x-fusebox-cost (USD).
func (x *exchange) account(a *router.Attempt, u *usage) {
	if u == nil {
		return
	}
	cost := x.alias.Price(a.Target).Cost(u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens)
	x.cost = cost
	if c := x.clientRef; c != nil && c.budget != nil {
		c.budget.spend(cost)
	}
	x.w.Header().Set("X-Fusebox-Cost", formatUSD(cost))
	x.s.metrics.Usage(a.Target, x.client, u.PromptTokens, u.CompletionTokens, cost)
}

// formatUSD writes a cost in dollars with up to ten decimals, no exponent.
func formatUSD(v float64) string {
	s := strings.TrimRight(strconv.FormatFloat(v, 'f', 10, 64), "0")
	return strings.TrimSuffix(s, ".")
}
