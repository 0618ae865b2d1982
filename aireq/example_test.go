package aireq_test

import (
	"fmt"

	"github.com/fuseboxhq/fusebox/aireq"
)

// Read what routing needs and send the same request to another model.
func ExampleScan() {
	body := []byte(`{"model":"gpt-4.1","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
	f := aireq.Scan(body)
	fmt.Println(string(f.Model), f.Stream, f.MaxTokens, f.Tokens(len(body)))
	fmt.Println(string(f.WithModel(body, "deepseek-chat")))
	// Output:
	// gpt-4.1 true 100 123
	// {"model":"deepseek-chat","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}
}
