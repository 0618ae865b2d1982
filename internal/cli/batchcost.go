package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/batch"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// defaultOutput is the output a line without max_tokens is reserved for,
// as the gateway's budgets reserve it.
const defaultOutput = 4096

// estimator returns the --max-cost reservation of a line: its prompt (a
// token per 4 bytes) and its max_tokens (or defaultOutput) at the dearest
// price among the targets of its model, so the cap holds whichever target
// serves it. A model the file does not name is priced at the dearest
// target of all.
func estimator(cfg *config.Config) func(*batch.Line) float64 {
	type price struct{ in, out float64 }
	byModel := map[string]price{}
	var dearest price
	for _, m := range cfg.Models {
		var p price
		for _, t := range m.Targets {
			p.in, p.out = max(p.in, t.Price.Input), max(p.out, t.Price.Output)
		}
		byModel[m.Name] = p
		dearest.in, dearest.out = max(dearest.in, p.in), max(dearest.out, p.out)
	}
	for _, pr := range cfg.Providers {
		dearest.in, dearest.out = max(dearest.in, pr.Price.Input), max(dearest.out, pr.Price.Output)
	}
	return func(l *batch.Line) float64 {
		f := aireq.Scan(l.Body)
		p, ok := byModel[f.ModelName()]
		if !ok {
			p = dearest
		}
		out := f.MaxTokens
		if out == 0 && l.URL != "/v1/embeddings" {
			out = defaultOutput
		}
		return (float64(len(l.Body)/4)*p.in + float64(out)*p.out) / 1e6
	}
}

// countLines counts the lines of a file, for the progress bar's total.
func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 1<<20)
	var n int64
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
