package mcpgw

import (
	"context"
	"log/slog"
)

// record tells the metrics of a call and writes its access log line.
func (g *Gateway) record(ctx context.Context, c Call) {
	if g.o.OnCall != nil {
		g.o.OnCall(c)
	}
	level := slog.LevelInfo
	if c.Outcome != "ok" && c.Outcome != "tool_error" {
		level = slog.LevelWarn
	}
	g.log.LogAttrs(ctx, level, "mcp tool call", slog.String("client", c.Client),
		slog.String("server", c.Server), slog.String("tool", c.Tool), slog.String("replica", c.Replica),
		slog.String("outcome", c.Outcome), slog.Int("attempts", c.Attempts), slog.Duration("duration", c.Duration))
}
