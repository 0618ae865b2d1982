package anthropic

import (
	"strconv"
	"strings"
)

// OpenAI's reasoning_effort becomes Anthropic's extended thinking:
// thinking {type: enabled, budget_tokens: N}, N from thinkingBudgets (doc.go has the table).
// Anthropic's rules decide the rest:
//
//   - budget_tokens is at least MinThinkingBudget and below max_tokens,
//     which counts the thinking too (as max_completion_tokens counts
//     OpenAI's reasoning). When the client set max_tokens (or
//     max_completion_tokens), that bound stands: the budget is cut to
//     max_tokens - 1, and below MinThinkingBudget there is no thinking.
//     When max_tokens is the adapter's default, it is raised to budget +
//     default when the budget would not fit under it, so the answer keeps
//     the room it had.
//   - Thinking does not combine with temperature (other than 1), top_k,
//     top_p below 0.95 or a forced tool (tool_choice required or a named
//     function); and a conversation whose last assistant turn called
//     tools must hand that turn's thinking blocks back, which chat
//     messages do not carry. The request then goes without thinking, as
//     it would to a model that has none, rather than fail.
//   - Models without extended thinking (Claude 3 and 3.5, and older; 3.7
//     has it) are sent none: Anthropic would refuse the request.
//   - "none" asks for no reasoning: no thinking. An effort this table does
//     not know is unsupported_value, so the walk passes an Anthropic
//     target over and an OpenAI one judges it.

// MinThinkingBudget is the smallest budget_tokens Anthropic takes.
const MinThinkingBudget = 1024

// thinkingBudgets is budget_tokens by reasoning_effort. "none" is 0: no
// thinking.
var thinkingBudgets = map[string]int{
	"none":    0,
	"minimal": MinThinkingBudget,
	"low":     2048,
	"medium":  4096,
	"high":    8192,
	"xhigh":   16384,
	"max":     24576,
}

// thinking is the request's extended thinking setting.
type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// reasoningEffort reads reasoning_effort.
func (t *translator) reasoningEffort(raw []byte) error {
	if err := decode("reasoning_effort", raw, &t.effort); err != nil {
		return err
	}
	if _, ok := thinkingBudgets[t.effort]; !ok {
		shown := t.effort
		if len(shown) > 32 { // a client's value is named, not echoed whole
			shown = shown[:32] + "…"
		}
		return badValue("reasoning_effort", CodeUnsupportedValue, "no thinking budget is defined for "+strconv.Quote(shown))
	}
	return nil
}

// think sets thinking from the effort, once max_tokens, the sampling
// fields, the tool choice and the messages are translated; defaulted
// reports that max_tokens is the adapter's default, not the client's.
func (t *translator) think(defaulted bool) {
	budget := thinkingBudgets[t.effort]
	if budget == 0 || !t.canThink() {
		return
	}
	switch {
	case defaulted && t.out.MaxTokens <= budget:
		t.out.MaxTokens += budget
	case !defaulted:
		budget = min(budget, t.out.MaxTokens-1)
	}
	if budget < MinThinkingBudget {
		return
	}
	t.out.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
}

// canThink reports whether the request allows extended thinking.
func (t *translator) canThink() bool {
	o := &t.out
	switch {
	case !modelThinks(o.Model):
		return false
	case o.Temperature != nil && *o.Temperature != 1, o.TopK != nil, o.TopP != nil && *o.TopP < 0.95:
		return false
	case o.ToolChoice != nil && (o.ToolChoice.Type == "any" || o.ToolChoice.Type == "tool"):
		return false
	}
	for i := len(o.Messages) - 1; i >= 0; i-- {
		if o.Messages[i].Role != "assistant" {
			continue
		}
		for _, b := range o.Messages[i].Content {
			if b.Type == "tool_use" {
				return false
			}
		}
		break
	}
	return true
}

// modelThinks reports whether a model has extended thinking: all but
// Claude 3 and 3.5 and older, matched anywhere in the name so that
// provider-prefixed ids (anthropic.claude-3-5-sonnet-…) count too.
func modelThinks(model string) bool {
	old := strings.Contains(model, "claude-3-") && !strings.Contains(model, "claude-3-7")
	return !old && !strings.Contains(model, "claude-2") && !strings.Contains(model, "claude-instant")
}
