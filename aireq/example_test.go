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

// Refuse a body whose routing fields decoders may read differently: here
// the gateway would see "cheap" and the upstream, which decodes the escape
// and keeps the last duplicate, would run o1-pro.
func ExampleScan_conflict() {
	body := []byte(`{"model":"cheap","mod\u0065l":"o1-pro","messages":[]}`)
	f := aireq.Scan(body)
	if f.Conflict.Reason != "" {
		fmt.Printf("400, param %q: %s\n", f.Conflict.Field, f.Conflict)
	}
	// Output:
	// 400, param "model": model: duplicate
}

// Compare models decoded: an escaped spelling is the same model.
func ExampleFields_ModelName() {
	f := aireq.Scan([]byte(`{"model":"ch\u0065ap"}`))
	fmt.Println(string(f.Model), f.ModelName())
	// Output:
	// ch\u0065ap cheap
}

// Read a stream chunk's delta as encoding/json reads it: an escaped key is
// its decoded name, and of a key given twice the last counts.
func ExampleReader() {
	data := []byte(`{"choices":[{"delta":{"c\u006fntent":"Hi","content":"Hello"}}],"usage":null}`)
	r := aireq.NewStrictReader(data)
	var content string
	ok := r.Object(func(key aireq.Text) bool {
		if key.Is("choices") {
			r.Array(func() bool {
				r.Object(func(key aireq.Text) bool {
					if key.Is("delta") {
						r.Object(func(key aireq.Text) bool {
							if key.Is("content") {
								s, _ := r.ReadString()
								content = s.String()
							}
							return true
						})
					}
					return true
				})
				return true
			})
		}
		return true // what is not read is skipped, and checked
	})
	fmt.Println(ok && r.End(), content)
	// Output:
	// true Hello
}
