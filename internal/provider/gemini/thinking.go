package gemini

import "strings"

// Thinking budgets by reasoning_effort, for models that take a budget
// (Gemini 2.5); Gemini 3 takes the level by name.
var thinkingBudgets = map[string]int{
	"none":    0,
	"minimal": 512,
	"low":     1024,
	"medium":  8192,
	"high":    24576,
}

// think translates reasoning_effort into thinkingConfig.
func (t *translator) think() error {
	if t.effort == "" {
		return nil
	}
	budget, ok := thinkingBudgets[t.effort]
	if !ok {
		return badValue("reasoning_effort", CodeUnsupportedValue, "unknown effort "+shown(t.effort)+
			"; Gemini targets take none, minimal, low, medium or high")
	}
	level := strings.HasPrefix(t.model, "gemini-3")
	switch {
	case t.effort == "none" && (level || strings.HasPrefix(t.model, "gemini-2.5-pro")):
		return badValue("reasoning_effort", CodeUnsupportedValue, "this Gemini model always thinks; send at least minimal")
	case t.effort == "none":
		t.gen.ThinkingConfig = &thinkingConfig{ThinkingBudget: &budget}
	case level && strings.HasPrefix(t.model, "gemini-3-pro") && (t.effort == "minimal" || t.effort == "medium"):
		return badValue("reasoning_effort", CodeUnsupportedValue, "Gemini 3 Pro thinks at level low or high only")
	case level:
		t.gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingLevel: t.effort}
	default:
		t.gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}
	}
	return nil
}
