package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// reasoning_effort becomes extended thinking, within Anthropic's rules.
func TestReasoningEffortToThinking(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"Hi"}]`
	toolTurn := `"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[{"type":"function","function":{"name":"f"}}]`
	for _, tc := range []struct {
		name, fields string
		budget, max  int // budget 0: no thinking
	}{
		{"minimal", `"reasoning_effort":"minimal",` + msgs, 1024, 8192},
		{"low", `"reasoning_effort":"low",` + msgs, 2048, 8192},
		{"medium", `"reasoning_effort":"medium",` + msgs, 4096, 8192},
		{"high: the default max_tokens is raised", `"reasoning_effort":"high",` + msgs, 8192, 16384},
		{"xhigh", `"reasoning_effort":"xhigh",` + msgs, 16384, 24576},
		{"max", `"reasoning_effort":"max",` + msgs, 24576, 32768},
		{"none", `"reasoning_effort":"none",` + msgs, 0, 8192},
		{"no effort", msgs, 0, 8192},
		{"null effort", `"reasoning_effort":null,` + msgs, 0, 8192},
		{"the client's max_tokens stands", `"reasoning_effort":"high","max_tokens":3000,` + msgs, 2999, 3000},
		{"the client's max_completion_tokens stands", `"reasoning_effort":"low","max_completion_tokens":5000,` + msgs, 2048, 5000},
		{"too small for a budget", `"reasoning_effort":"high","max_tokens":1024,` + msgs, 0, 1024},
		{"just large enough", `"reasoning_effort":"high","max_tokens":1025,` + msgs, 1024, 1025},
		{"temperature 1", `"reasoning_effort":"low","temperature":1,` + msgs, 2048, 8192},
		{"temperature 0.2", `"reasoning_effort":"low","temperature":0.2,` + msgs, 0, 8192},
		{"top_p 0.5", `"reasoning_effort":"low","top_p":0.5,` + msgs, 0, 8192},
		{"top_p 0.95", `"reasoning_effort":"low","top_p":0.95,` + msgs, 2048, 8192},
		{"top_k", `"reasoning_effort":"low","top_k":5,` + msgs, 0, 8192},
		{"tool_choice required", `"reasoning_effort":"low","tool_choice":"required","tools":[{"type":"function","function":{"name":"f"}}],` + msgs, 0, 8192},
		{"tool_choice auto", `"reasoning_effort":"low","tool_choice":"auto","tools":[{"type":"function","function":{"name":"f"}}],` + msgs, 2048, 8192},
		{"after a tool call", `"reasoning_effort":"low",` + toolTurn, 0, 8192},
		{"Claude 3.5 has no thinking", `"model":"claude-3-5-sonnet-20241022","reasoning_effort":"low",` + msgs, 0, 8192},
		{"nor Claude 3", `"model":"claude-3-opus-20240229","reasoning_effort":"low",` + msgs, 0, 8192},
		{"Claude 3.7 has", `"model":"claude-3-7-sonnet-20250219","reasoning_effort":"low",` + msgs, 2048, 8192},
		{"a provider-prefixed id", `"model":"anthropic.claude-3-5-haiku-20241022-v1:0","reasoning_effort":"low",` + msgs, 0, 8192},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := tc.fields
			if !strings.HasPrefix(fields, `"model"`) {
				fields = `"model":"claude-sonnet-4-5",` + fields
			}
			tr, err := translateRequest([]byte(`{`+fields+`}`), func(string) int { return 8192 })
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				MaxTokens int `json:"max_tokens"`
				Thinking  *struct {
					Type         string `json:"type"`
					BudgetTokens int    `json:"budget_tokens"`
				} `json:"thinking"`
			}
			if err := json.Unmarshal(tr.body, &out); err != nil {
				t.Fatal(err)
			}
			got := 0
			if out.Thinking != nil {
				if out.Thinking.Type != "enabled" {
					t.Errorf("thinking type %q", out.Thinking.Type)
				}
				got = out.Thinking.BudgetTokens
			}
			if got != tc.budget || out.MaxTokens != tc.max {
				t.Errorf("budget %d, max_tokens %d; want %d, %d (%s)", got, out.MaxTokens, tc.budget, tc.max, tr.body)
			}
			if got != 0 && (got < MinThinkingBudget || got >= out.MaxTokens) {
				t.Errorf("budget %d breaks Anthropic's rule (≥ %d, < max_tokens %d)", got, MinThinkingBudget, out.MaxTokens)
			}
		})
	}
}

// An effort Anthropic has no budget for is unsupported, so the walk can
// pass the target over; a wrong type is invalid.
func TestReasoningEffortRefused(t *testing.T) {
	for body, code := range map[string]string{
		`{"model":"m","reasoning_effort":"extreme","messages":[{"role":"user","content":"Hi"}]}`: CodeUnsupportedValue,
		`{"model":"m","reasoning_effort":3,"messages":[{"role":"user","content":"Hi"}]}`:         CodeInvalidValue,
	} {
		_, err := translateRequest([]byte(body), func(string) int { return 100 })
		var re *RequestError
		if !errors.As(err, &re) || re.Field != "reasoning_effort" || re.Code != code {
			t.Errorf("%s: %v; want %s on reasoning_effort", body, err, code)
		}
	}
	huge := `{"model":"m","reasoning_effort":"` + strings.Repeat("x", 1<<20) + `","messages":[{"role":"user","content":"Hi"}]}`
	_, err := translateRequest([]byte(huge), func(string) int { return 100 })
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("a megabyte effort: the error is %d bytes long", len(err.Error()))
	}
}
