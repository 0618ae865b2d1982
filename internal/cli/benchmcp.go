package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	bench "github.com/fuseboxhq/fusebox/internal/outage"
)

// runMCPBench runs the mcp-hang scenario: an agent's read-only tool calls
// through /mcp while one of two replicas hangs. --rate keeps its meaning
// (calls a second) but its default here is 20; --duration too, default 30s.
func runMCPBench(ctx context.Context, o benchOptions, out io.Writer) error {
	mo := bench.MCPOptions{Rate: 20, Duration: 30 * time.Second}
	if o.rateSet {
		mo.Rate = o.Rate
	}
	if o.durationSet {
		mo.Duration = o.Duration
	}
	fmt.Fprintf(out, "fusebox bench: scenario mcp-hang, %g tool calls/s for %v...\n", mo.Rate, mo.Duration)
	res, err := bench.RunMCP(ctx, mo)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprint(out, res.Markdown())
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, res); err != nil {
			return err
		}
	}
	if missed := res.Goals(); len(missed) > 0 {
		return fmt.Errorf("bench: mcp-hang missed %d goal(s)", len(missed))
	}
	return nil
}
