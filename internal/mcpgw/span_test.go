package mcpgw

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fuseboxhq/fusebox/internal/sim"
	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

func TestToolCallSpansFollowTheGenAIConventions(t *testing.T) {
	m, url := upstream(t, "traced")
	spans := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.Config{Enabled: true, Endpoint: "http://127.0.0.1:9"},
		telemetry.Options{SpanExporter: spans, MetricReader: sdkmetric.NewManualReader()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	h := start(t, parse(t, serverYAML("tr", "      url: "+url+"\n      timeouts: {total: 100ms}\n")), Options{Telemetry: tel})
	cs := h.connect(t, "", nil)
	call(t, cs, "tr__search", map[string]any{"q": "x"})
	m.SetFaults(sim.MCPFaults{Error: true})
	call(t, cs, "tr__create_item", map[string]any{"q": "x"})
	tel.ForceFlush(context.Background())
	got := spans.GetSpans()
	if len(got) != 2 {
		t.Fatalf("%d spans; want 2", len(got))
	}
	attrs := func(i int) map[string]string {
		out := map[string]string{}
		for _, kv := range got[i].Attributes {
			out[string(kv.Key)] = kv.Value.Emit()
		}
		return out
	}
	ok, failed := attrs(0), attrs(1)
	if got[0].Name != "execute_tool tr__search" || ok["gen_ai.tool.name"] != "tr__search" ||
		ok["gen_ai.operation.name"] != "execute_tool" || ok["fusebox.mcp.server"] != "tr" || ok["error.type"] != "" {
		t.Errorf("span 1 %q: %v", got[0].Name, ok)
	}
	if failed["error.type"] != "outage" || failed["fusebox.attempts"] != "1" {
		t.Errorf("span 2 %q: %v; want error.type outage", got[1].Name, failed)
	}
}
