package batch_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/batch"
)

// A Runner serves each line through a handler (the gateway's, in
// fusebox), writing answers and dead letters beside a journal that makes
// a rerun skip what is done.
func ExampleRunner() {
	dir, _ := os.MkdirTemp("", "batch")
	defer os.RemoveAll(dir)
	gateway := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Fusebox-Target", "openai/gpt-4.1-mini")
		w.Header().Set("X-Fusebox-Cost", "0.0001")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
	})
	input := `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[]}}
{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[]}}
`
	paths := batch.Paths{Out: filepath.Join(dir, "out.jsonl"), Dead: filepath.Join(dir, "dead.jsonl")}
	for range 2 { // the second run finds everything done
		r, _ := batch.New(batch.Options{Handler: gateway})
		s, err := r.Run(context.Background(), strings.NewReader(input), paths)
		fmt.Printf("read %d, skipped %d, answered %d, dead-lettered %d, cost $%.4f %v\n", s.Read, s.Skipped, s.OK, s.Dead, s.Cost, err)
	}
	// Output:
	// read 2, skipped 0, answered 1, dead-lettered 1, cost $0.0001 <nil>
	// read 2, skipped 2, answered 0, dead-lettered 0, cost $0.0001 <nil>
}
