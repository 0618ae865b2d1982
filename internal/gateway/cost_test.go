package gateway

import (
	"encoding/json"
	"testing"
)

func TestUsageOf(t *testing.T) {
	tests := []struct {
		body string
		want *usage
	}{
		{`{"id":"x","usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`, &usage{PromptTokens: 9, CompletionTokens: 12}},
		{`{"usage": {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0}}}`,
			&usage{PromptTokens: 100, CompletionTokens: 5, PromptTokensDetails: struct {
				CachedTokens int `json:"cached_tokens"`
			}{64}}},
		{`{"choices":[],"usage":null}`, nil},
		{`{"choices":[]}`, nil},
		{`{"usage":{"prompt_tokens":3`, nil},
		{`{"usage":{"prompt_tokens":null,"completion_tokens":2}}`, &usage{CompletionTokens: 2}},
		// Not plain integers: encoding/json decides.
		{`{"usage":{"prompt_tokens":1e2,"completion_tokens":2}}`, nil},
		{`{"usage":{"prompt_tokens":"7","completion_tokens":2}}`, nil},
		{`{"usage":{"prompt_tokens":-1,"completion_tokens":2}}`, &usage{PromptTokens: -1, CompletionTokens: 2}},
		// A string holding braces and quotes does not end the object early.
		{`{"usage":{"note":"a } \" {","prompt_tokens":4,"completion_tokens":1}}`, &usage{PromptTokens: 4, CompletionTokens: 1}},
	}
	for _, tt := range tests {
		got := usageOf([]byte(tt.body))
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.body, got, tt.want)
		}
	}
}

// FuzzUsageOf checks the fast reading against encoding/json: whenever both
// read a usage object, they agree.
func FuzzUsageOf(f *testing.F) {
	f.Add(`{"prompt_tokens":9,"completion_tokens":12}`)
	f.Add(`{"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 1}}`)
	f.Add(`{"completion_tokens":12 , "x":[1,{"y":"}"}]}`)
	f.Fuzz(func(t *testing.T, obj string) {
		got := usageOf([]byte(`{"usage":` + obj + `}`))
		var want usage
		if json.Unmarshal([]byte(obj), &want) != nil || got == nil {
			return
		}
		if *got != want {
			t.Fatalf("%s: read %+v, encoding/json %+v", obj, *got, want)
		}
	})
}
