package outage

import (
	"context"
	"testing"
	"time"
)

// TestMCPHangScenario: a short run of mcp-hang, checking what does not
// depend on the machine's speed: no call the agent sees fails, and the
// hung replica's breaker opens. The latency goal is the benchmark's.
func TestMCPHangScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 3s")
	}
	r, err := RunMCP(context.Background(), MCPOptions{Rate: 20, Duration: 3 * time.Second,
		HangStart: 500 * time.Millisecond, HangLength: 1500 * time.Millisecond, Total: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failures != 0 || !r.Opened || r.Calls < 40 {
		t.Fatalf("result = %+v\n%s", r, r.Markdown())
	}
}
